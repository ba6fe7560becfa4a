package format

import (
	"bufio"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
)

// tableWriter holds every rendered cell until Close, because a column's
// width depends on its widest value. It is meant for a terminal, where
// results are small; csv and json stream.
type tableWriter struct {
	w      *bufio.Writer
	schema *arrow.Schema
	kinds  []kind
	width  []int
	rows   [][]string
	null   [][]bool
}

func newTableWriter(w *bufio.Writer, schema *arrow.Schema) *tableWriter {
	t := &tableWriter{w: w, schema: schema, kinds: make([]kind, schema.NumFields()), width: make([]int, schema.NumFields())}
	for i, f := range schema.Fields() {
		t.kinds[i] = kindOf(f.Type)
		t.width[i] = utf8.RuneCountInString(sanitize(f.Name))
	}
	return t
}

func (t *tableWriter) Write(b arrow.RecordBatch) error {
	if int(b.NumCols()) != len(t.kinds) {
		return fmt.Errorf("format: batch has %d columns, schema has %d", b.NumCols(), len(t.kinds))
	}
	rows := Rows(b)
	for _, r := range rows {
		for c, v := range r {
			v = sanitize(v)
			r[c] = v
			if n := utf8.RuneCountInString(v); n > t.width[c] {
				t.width[c] = n
			}
		}
	}
	t.rows = append(t.rows, rows...)
	return nil
}

func (t *tableWriter) Close() error {
	names := make([]string, len(t.kinds))
	for i, f := range t.schema.Fields() {
		names[i] = f.Name
	}
	t.line(names, true)
	for c, w := range t.width {
		if c > 0 {
			t.w.WriteString("-+-")
		}
		t.w.WriteString(strings.Repeat("-", w))
	}
	t.w.WriteByte('\n')
	for _, r := range t.rows {
		t.line(r, false)
	}
	if len(t.rows) == 1 {
		t.w.WriteString("(1 row)\n")
	} else {
		fmt.Fprintf(t.w, "(%d rows)\n", len(t.rows))
	}
	t.rows = nil
	return t.w.Flush()
}

// line prints one row: numbers right-aligned, everything else (and the
// header) left-aligned, no trailing spaces.
func (t *tableWriter) line(cells []string, header bool) {
	var b strings.Builder
	for c, v := range cells {
		if c > 0 {
			b.WriteString(" | ")
		}
		if header {
			v = sanitize(v) // cells were sanitized by Write
		}
		pad := t.width[c] - utf8.RuneCountInString(v)
		if t.kinds[c] == kindNumber && !header {
			b.WriteString(strings.Repeat(" ", pad))
			b.WriteString(v)
		} else {
			b.WriteString(v)
			b.WriteString(strings.Repeat(" ", pad))
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
