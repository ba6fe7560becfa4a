package format

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// csvWriter writes RFC 4180 CSV. It quotes by hand rather than with
// encoding/csv because it must tell NULL (empty field) from the empty
// string (""), which encoding/csv writes the same way.
type csvWriter struct {
	w      *bufio.Writer
	schema *arrow.Schema
	header bool
	eol    string // \n, or \r\n when asked
}

func newCSVWriter(w *bufio.Writer, schema *arrow.Schema, crlf bool) *csvWriter {
	c := &csvWriter{w: w, schema: schema, eol: "\n"}
	if crlf {
		c.eol = "\r\n"
	}
	return c
}

func (c *csvWriter) writeHeader() {
	if c.header {
		return
	}
	c.header = true
	for i, f := range c.schema.Fields() {
		if i > 0 {
			c.w.WriteByte(',')
		}
		c.field(f.Name, false)
	}
	c.w.WriteString(c.eol)
}

func (c *csvWriter) Write(b arrow.RecordBatch) error {
	if int(b.NumCols()) != c.schema.NumFields() {
		return fmt.Errorf("format: batch has %d columns, schema has %d", b.NumCols(), c.schema.NumFields())
	}
	c.writeHeader()
	cols := b.Columns()
	fns := make([]func(int) string, len(cols))
	text := make([]bool, len(cols))
	isNull := make([]func(int) bool, len(cols))
	for i, col := range cols {
		fns[i], isNull[i] = render(col), nulls(col)
		text[i] = kindOf(col.DataType()) == kindText
	}
	for r := 0; r < int(b.NumRows()); r++ {
		for i := range cols {
			if i > 0 {
				c.w.WriteByte(',')
			}
			if isNull[i](r) {
				continue
			}
			c.field(fns[i](r), text[i])
		}
		c.w.WriteString(c.eol)
	}
	return nil
}

// field writes one value, quoted when it holds a separator, a quote or a
// line break, or when it is an empty text value (to differ from NULL).
func (c *csvWriter) field(v string, text bool) {
	if !(text && v == "") && !strings.ContainsAny(v, ",\"\r\n") {
		c.w.WriteString(v)
		return
	}
	c.w.WriteByte('"')
	c.w.WriteString(strings.ReplaceAll(v, `"`, `""`))
	c.w.WriteByte('"')
}

func (c *csvWriter) Close() error {
	c.writeHeader()
	return c.w.Flush()
}
