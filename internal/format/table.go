package format

import (
	"bufio"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/mattn/go-runewidth"
)

// widths measures text as a terminal lays it out: East Asian wide
// characters take two columns, combining marks none. Ambiguous-width
// characters count as one whatever the locale, so the output does not
// depend on the environment. A Condition without its lookup table is
// read-only, so one serves every writer.
var widths = &runewidth.Condition{EastAsianWidth: false, StrictEmojiNeutral: true}

// ellipsis marks a cut value and, in a row of its own, the rows left out.
const ellipsis = "…"

// minCut is the narrowest a text column is cut to when the table must fit
// a width: a few characters and the ellipsis still say what a value was.
const minCut = 6

// tableWriter prints an aligned table. Column widths depend on every
// printed value, so it holds the rows it will print until Close: all of
// them without a limit, else the first MaxRows/2 and a ring of the last
// MaxRows/2, so memory stays bounded however long the result. Rows in the
// middle are counted and never rendered.
type tableWriter struct {
	w      *bufio.Writer
	schema *arrow.Schema
	opts   Options
	kinds  []kind

	head      [][]string // the first rows, up to headCap (all without a limit)
	headCap   int        // -1: no limit
	tail      [][]string // ring of the last rows, tailCap of them at most
	tailCap   int
	tailStart int   // index in tail of the oldest row
	total     int64 // rows written
}

func newTableWriter(w *bufio.Writer, schema *arrow.Schema, opts Options) *tableWriter {
	t := &tableWriter{w: w, schema: schema, opts: opts, kinds: make([]kind, schema.NumFields()), headCap: -1}
	for i, f := range schema.Fields() {
		t.kinds[i] = kindOf(f.Type)
	}
	if opts.MaxRows > 0 {
		t.headCap = (opts.MaxRows + 1) / 2
		t.tailCap = opts.MaxRows / 2
	}
	return t
}

func (t *tableWriter) Write(b arrow.RecordBatch) error {
	if int(b.NumCols()) != len(t.kinds) {
		return fmt.Errorf("format: batch has %d columns, schema has %d", b.NumCols(), len(t.kinds))
	}
	n := int(b.NumRows())
	cols := b.Columns()
	text := make([]func(int) string, len(cols))
	isNull := make([]func(int) bool, len(cols))
	for c, col := range cols {
		text[c], isNull[c] = render(col), nulls(col)
	}
	row := func(r int) []string {
		cells := make([]string, len(cols))
		for c := range cols {
			if isNull[c](r) {
				cells[c] = "NULL"
			} else {
				cells[c] = sanitize(text[c](r))
			}
		}
		return cells
	}
	r := 0
	for ; r < n && (t.headCap < 0 || len(t.head) < t.headCap); r++ {
		t.head = append(t.head, row(r))
	}
	if t.tailCap > 0 {
		// Only the batch's last tailCap rows can be among the last rows.
		for r = max(r, n-t.tailCap); r < n; r++ {
			if len(t.tail) < t.tailCap {
				t.tail = append(t.tail, row(r))
				continue
			}
			t.tail[t.tailStart] = row(r)
			t.tailStart = (t.tailStart + 1) % t.tailCap
		}
	}
	t.total += int64(n)
	return nil
}

func (t *tableWriter) Close() error {
	rows := t.head
	for i := range t.tail {
		rows = append(rows, t.tail[(t.tailStart+i)%len(t.tail)])
	}
	shown := int64(len(rows))
	names := make([]string, len(t.kinds))
	for i, f := range t.schema.Fields() {
		names[i] = sanitize(f.Name)
	}
	width := make([]int, len(t.kinds))
	for c := range width {
		width[c] = widths.StringWidth(names[c])
		if shown < t.total {
			width[c] = max(width[c], widths.StringWidth(ellipsis))
		}
	}
	for _, r := range rows {
		for c, v := range r {
			width[c] = max(width[c], widths.StringWidth(v))
		}
	}
	t.fit(width)

	t.line(names, width, true)
	for c, w := range width {
		if c > 0 {
			t.w.WriteString("-+-")
		}
		t.w.WriteString(strings.Repeat("-", w))
	}
	t.w.WriteByte('\n')
	for _, r := range t.head {
		t.line(r, width, false)
	}
	if shown < t.total {
		gap := make([]string, len(t.kinds))
		for c := range gap {
			gap[c] = ellipsis
		}
		t.line(gap, width, false)
	}
	for _, r := range rows[len(t.head):] {
		t.line(r, width, false)
	}
	switch {
	case shown < t.total:
		fmt.Fprintf(t.w, "%d rows (%d shown)\n", t.total, shown)
	case t.total == 1:
		t.w.WriteString("(1 row)\n")
	default:
		fmt.Fprintf(t.w, "(%d rows)\n", t.total)
	}
	t.head, t.tail = nil, nil
	return t.w.Flush()
}

// fit narrows the text columns so a line fits MaxWidth: every text column
// is cut to one cap, the largest that fits (never below minCut), and the
// columns left room get one more each. Numbers are never cut: a cut
// number reads as another number. When even that does not fit, the
// terminal wraps the lines.
func (t *tableWriter) fit(width []int) {
	if t.opts.MaxWidth <= 0 {
		return
	}
	lineWidth := func(limit int) int {
		n := 3 * (len(width) - 1) // " | "
		for c, w := range width {
			if t.kinds[c] != kindNumber && w > limit {
				w = limit
			}
			n += w
		}
		return n
	}
	widest := 0
	for c, w := range width {
		if t.kinds[c] != kindNumber {
			widest = max(widest, w)
		}
	}
	if lineWidth(widest) <= t.opts.MaxWidth || widest <= minCut {
		return
	}
	// The largest cap in [minCut, widest) whose line fits.
	limit := minCut + sort.Search(widest-minCut, func(i int) bool { return lineWidth(minCut+i+1) > t.opts.MaxWidth })
	room := t.opts.MaxWidth - lineWidth(limit)
	for c, w := range width {
		if t.kinds[c] == kindNumber || w <= limit {
			continue
		}
		width[c] = limit
		if room > 0 {
			width[c]++
			room--
		}
	}
}

// line prints one row: numbers right-aligned, everything else (and the
// header) left-aligned, values wider than their column cut with an
// ellipsis, no trailing spaces.
func (t *tableWriter) line(cells []string, width []int, header bool) {
	var b strings.Builder
	for c, v := range cells {
		if c > 0 {
			b.WriteString(" | ")
		}
		w := widths.StringWidth(v)
		if w > width[c] {
			v = widths.Truncate(v, width[c], ellipsis)
			w = widths.StringWidth(v)
		}
		pad := strings.Repeat(" ", max(0, width[c]-w))
		if t.kinds[c] == kindNumber && !header {
			b.WriteString(pad)
			b.WriteString(v)
		} else {
			b.WriteString(v)
			b.WriteString(pad)
		}
	}
	t.w.WriteString(strings.TrimRight(b.String(), " "))
	t.w.WriteByte('\n')
}

// sanitize keeps a value on its line and the terminal in its state:
// line breaks and tabs would break the alignment, other control
// characters (an escape sequence can clear the screen or retitle the
// window) and bytes that are not UTF-8 would act on the terminal or
// vanish. They are shown as escapes: \n, \r, \t, \xNN.
func sanitize(s string) string {
	if utf8.ValidString(s) && !strings.ContainsFunc(s, needsEscape) {
		return s
	}
	const hex = "0123456789abcdef"
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == utf8.RuneError && n == 1, r < 0x20, r == 0x7f:
			b.WriteString(`\x`)
			b.WriteByte(hex[s[i]>>4])
			b.WriteByte(hex[s[i]&0xf])
		case needsEscape(r): // C1 controls, U+0080..U+009F
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// needsEscape reports the control characters sanitize escapes.
func needsEscape(r rune) bool { return r < 0x20 || (r >= 0x7f && r < 0xa0) }
