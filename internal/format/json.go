package format

import (
	"bufio"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
)

// jsonWriter writes JSON Lines: one object per row, keyed by the column
// names made unique (UniqueNames), since an object with two equal keys
// keeps only one of them in most parsers.
type jsonWriter struct {
	w      *bufio.Writer
	schema *arrow.Schema
	names  []string
	keys   [][]byte // `"name":` per column, with the leading comma after the first
	row    int64    // rows written so far, for error messages
}

func newJSONWriter(w *bufio.Writer, schema *arrow.Schema) *jsonWriter {
	j := &jsonWriter{w: w, schema: schema}
	for _, f := range schema.Fields() {
		j.names = append(j.names, f.Name)
	}
	j.names = UniqueNames(j.names)
	for i, name := range j.names {
		var k []byte
		if i > 0 {
			k = append(k, ',')
		}
		k, _ = appendJSONString(k, name)
		j.keys = append(j.keys, append(k, ':'))
	}
	return j
}

// jsonValue appends the JSON of one non-NULL value; false means the value
// has no JSON form (text that is not UTF-8).
type jsonValue func(buf []byte, row int) ([]byte, bool)

// jsonColumn picks how a column's values are written, once per column:
//   - integers and booleans bare;
//   - decimals as strings with their scale's digits ("1.50"), because a
//     JSON number is read as a binary double by most parsers, which
//     rounds 123456789012345678901234567890.12 and 0.1 alike;
//   - floats bare, but NaN and the infinities, which JSON numbers cannot
//     spell, as the strings "NaN", "Infinity" and "-Infinity";
//   - everything else (text, dates, timestamps) as strings.
func jsonColumn(col arrow.Array) jsonValue {
	text := render(col)
	switch col.DataType().ID() {
	case arrow.DECIMAL32, arrow.DECIMAL64, arrow.DECIMAL128, arrow.DECIMAL256:
		return func(buf []byte, r int) ([]byte, bool) { return append(append(append(buf, '"'), text(r)...), '"'), true }
	case arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64:
		return func(buf []byte, r int) ([]byte, bool) {
			switch v := text(r); v {
			case "NaN", "Infinity", "-Infinity":
				return append(append(append(buf, '"'), v...), '"'), true
			default:
				return append(buf, v...), true
			}
		}
	}
	switch kindOf(col.DataType()) {
	case kindNumber, kindBool:
		return func(buf []byte, r int) ([]byte, bool) { return append(buf, text(r)...), true }
	}
	return func(buf []byte, r int) ([]byte, bool) { return appendJSONString(buf, text(r)) }
}

func (j *jsonWriter) Write(b arrow.RecordBatch) error {
	if int(b.NumCols()) != len(j.keys) {
		return fmt.Errorf("format: batch has %d columns, schema has %d", b.NumCols(), len(j.keys))
	}
	cols := b.Columns()
	values := make([]jsonValue, len(cols))
	isNull := make([]func(int) bool, len(cols))
	for i, col := range cols {
		values[i], isNull[i] = jsonColumn(col), nulls(col)
	}
	var buf []byte
	for r := 0; r < int(b.NumRows()); r++ {
		buf = append(buf[:0], '{')
		for i := range cols {
			buf = append(buf, j.keys[i]...)
			if isNull[i](r) {
				buf = append(buf, "null"...)
				continue
			}
			var ok bool
			if buf, ok = values[i](buf, r); !ok {
				return fmt.Errorf("format: column %s, row %d: the text is not valid UTF-8, which JSON strings cannot hold; use --format csv to get the bytes as they are",
					strconv.Quote(j.schema.Field(i).Name), j.row+1)
			}
		}
		buf = append(buf, '}', '\n')
		j.w.Write(buf)
		j.row++
	}
	return nil
}

func (j *jsonWriter) Close() error { return j.w.Flush() }

// appendJSONString appends s as a JSON string: quotes, backslashes and
// control characters escaped, U+2028 and U+2029 too (JavaScript source
// cannot hold them raw), everything else as UTF-8. It reports false, and
// appends nothing useful, when s is not valid UTF-8: JSON text is
// Unicode, and replacing the bytes would change the value unseen.
func appendJSONString(buf []byte, s string) ([]byte, bool) {
	if !utf8.ValidString(s) {
		return buf, false
	}
	const hex = "0123456789abcdef"
	buf = append(buf, '"')
	start := 0
	for i, c := range s {
		var esc string
		switch {
		case c == '"':
			esc = `\"`
		case c == '\\':
			esc = `\\`
		case c == '\n':
			esc = `\n`
		case c == '\r':
			esc = `\r`
		case c == '\t':
			esc = `\t`
		case c < 0x20, c == 0x2028, c == 0x2029:
			esc = `\u` + string([]byte{hex[c>>12&0xf], hex[c>>8&0xf], hex[c>>4&0xf], hex[c&0xf]})
		default:
			continue
		}
		buf = append(buf, s[start:i]...)
		buf = append(buf, esc...)
		start = i + utf8.RuneLen(c)
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"'), true
}

// UniqueNames returns names with every repeated name renamed, so each is
// unique (case-sensitively, as JSON keys are): the first occurrence keeps
// its name, later ones get the smallest suffix _2, _3, ... that is
// neither another column's name nor taken already. [a a a_2] becomes
// [a a_3 a_2].
func UniqueNames(names []string) []string {
	given := make(map[string]bool, len(names))
	for _, n := range names {
		given[n] = true
	}
	used := make(map[string]bool, len(names))
	out := make([]string, len(names))
	for i, n := range names {
		if !used[n] {
			out[i], used[n] = n, true
			continue
		}
		for k := 2; ; k++ {
			c := n + "_" + strconv.Itoa(k)
			if !given[c] && !used[c] {
				out[i], used[c] = c, true
				break
			}
		}
	}
	return out
}
