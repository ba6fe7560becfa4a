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
		t.width[i] = utf8.RuneCountInString(f.Name)
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
		pad := t.width[c] - utf8.RuneCountInString(v)
		if t.kinds[c] == kindNumber && !header {
			b.WriteString(strings.Repeat(" ", pad))
			b.WriteString(sanitize(v))
		} else {
			b.WriteString(sanitize(v))
			b.WriteString(strings.Repeat(" ", pad))
		}
	}
	t.w.WriteString(strings.TrimRight(b.String(), " "))
	t.w.WriteByte('\n')
}

// sanitize keeps a value on its line: newlines and tabs inside text would
// break the alignment, so they are shown as escapes.
func sanitize(s string) string {
	if !strings.ContainsAny(s, "\n\r\t") {
		return s
	}
	return strings.NewReplacer("\n", `\n`, "\r", `\r`, "\t", `\t`).Replace(s)
}
