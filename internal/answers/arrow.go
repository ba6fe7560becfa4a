package answers

import (
	"fmt"
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// FromArrow converts fsql's result batches to an Answer (Ordered and
// OrderKeys are left for the caller, who takes them from the golden answer).
// Supported types: int8..int64, uint8..uint64, float32/64, decimal128,
// string, large_string, date32 and bool. The Answer owns its values: the
// batches may be released (and their buffers recycled) afterwards.
func FromArrow(schema *arrow.Schema, batches []arrow.RecordBatch) (*Answer, error) {
	a := &Answer{}
	for _, f := range schema.Fields() {
		t, err := arrowType(f.Type)
		if err != nil {
			return nil, fmt.Errorf("answers: column %q: %w", f.Name, err)
		}
		a.Columns = append(a.Columns, Column{Name: f.Name, Type: t})
	}
	for _, b := range batches {
		if int(b.NumCols()) != len(a.Columns) {
			return nil, fmt.Errorf("answers: batch has %d columns, schema %d", b.NumCols(), len(a.Columns))
		}
		n := int(b.NumRows())
		rows := make([][]Value, n)
		for r := range rows {
			rows[r] = make([]Value, len(a.Columns))
		}
		for c := 0; c < len(a.Columns); c++ {
			if err := fill(b.Column(c), c, rows); err != nil {
				return nil, fmt.Errorf("answers: column %q: %w", a.Columns[c].Name, err)
			}
		}
		a.Rows = append(a.Rows, rows...)
	}
	return a, nil
}

func arrowType(t arrow.DataType) (string, error) {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return "int64", nil
	case arrow.FLOAT32, arrow.FLOAT64:
		return "float64", nil
	case arrow.DECIMAL128:
		d := t.(*arrow.Decimal128Type)
		return DecimalType(int(d.Precision), int(d.Scale)), nil
	case arrow.STRING, arrow.LARGE_STRING:
		return "string", nil
	case arrow.DATE32:
		return "date", nil
	case arrow.BOOL:
		return "bool", nil
	}
	return "", fmt.Errorf("unsupported type %s", t)
}

func fill(col arrow.Array, c int, rows [][]Value) error {
	for r := range rows {
		if col.IsNull(r) {
			rows[r][c] = Null()
		}
	}
	set := func(f func(r int) Value) {
		for r := range rows {
			if !col.IsNull(r) {
				rows[r][c] = f(r)
			}
		}
	}
	switch a := col.(type) {
	case *array.Int8:
		set(func(r int) Value { return Int(int64(a.Value(r))) })
	case *array.Int16:
		set(func(r int) Value { return Int(int64(a.Value(r))) })
	case *array.Int32:
		set(func(r int) Value { return Int(int64(a.Value(r))) })
	case *array.Int64:
		set(func(r int) Value { return Int(a.Value(r)) })
	case *array.Uint8:
		set(func(r int) Value { return Int(int64(a.Value(r))) })
	case *array.Uint16:
		set(func(r int) Value { return Int(int64(a.Value(r))) })
	case *array.Uint32:
		set(func(r int) Value { return Int(int64(a.Value(r))) })
	case *array.Uint64:
		for r := range rows {
			if !col.IsNull(r) && a.Value(r) > math.MaxInt64 {
				return fmt.Errorf("row %d: uint64 %d overflows int64", r, a.Value(r))
			}
		}
		set(func(r int) Value { return Int(int64(a.Value(r))) })
	case *array.Float32:
		set(func(r int) Value { return Float(float64(a.Value(r))) })
	case *array.Float64:
		set(func(r int) Value { return Float(a.Value(r)) })
	case *array.Decimal128:
		set(func(r int) Value { return Value{Dec: a.Value(r).BigInt()} })
	case *array.String:
		// Value aliases the batch's buffer; the copy outlives it.
		set(func(r int) Value { return String(strings.Clone(a.Value(r))) })
	case *array.LargeString:
		set(func(r int) Value { return String(strings.Clone(a.Value(r))) })
	case *array.Date32:
		set(func(r int) Value { return Date(int64(a.Value(r))) })
	case *array.Boolean:
		set(func(r int) Value { return Bool(a.Value(r)) })
	default:
		return fmt.Errorf("unsupported array %T", col)
	}
	return nil
}
