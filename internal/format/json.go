package format

import (
	"bufio"
	"encoding/json"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// jsonWriter writes JSON Lines: one object per row.
type jsonWriter struct {
	w    *bufio.Writer
	keys [][]byte // `"name":` per column, with the leading comma after the first
}

func newJSONWriter(w *bufio.Writer, schema *arrow.Schema) *jsonWriter {
	j := &jsonWriter{w: w}
	for i, f := range schema.Fields() {
		k, _ := json.Marshal(f.Name)
		if i > 0 {
			k = append([]byte{','}, k...)
		}
		j.keys = append(j.keys, append(k, ':'))
	}
	return j
}

func (j *jsonWriter) Write(b arrow.RecordBatch) error {
	if int(b.NumCols()) != len(j.keys) {
		return fmt.Errorf("format: batch has %d columns, schema has %d", b.NumCols(), len(j.keys))
	}
	cols := b.Columns()
	fns := make([]func(int) string, len(cols))
	kinds := make([]kind, len(cols))
	floats := make([]bool, len(cols))
	isNull := make([]func(int) bool, len(cols))
	for i, col := range cols {
		fns[i], isNull[i] = render(col), nulls(col)
		kinds[i] = kindOf(col.DataType())
		switch col.(type) {
		case *array.Float32, *array.Float64:
			floats[i] = true
		}
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
			v := fns[i](r)
			switch {
			case floats[i] && (v == "NaN" || v == "Infinity" || v == "-Infinity"):
				buf = append(buf, "null"...)
			case kinds[i] == kindText:
				q, _ := json.Marshal(v)
				buf = append(buf, q...)
			default:
				buf = append(buf, v...)
			}
		}
		buf = append(buf, '}', '\n')
		j.w.Write(buf)
	}
	return nil
}

func (j *jsonWriter) Close() error { return j.w.Flush() }
