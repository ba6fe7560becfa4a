package expr

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func dec(s string, p, sc int32) *Literal {
	n, err := decimal128.FromString(s, p, sc)
	if err != nil {
		panic(err)
	}
	return NewLiteral(n, decType(p, sc))
}

func i64(v int64) *Literal   { return NewLiteral(v, tInt64) }
func f64(v float64) *Literal { return NewLiteral(v, tFloat64) }
func str(v string) *Literal  { return NewLiteral(v, tString) }

func call(t *testing.T, fn string, args ...Expr) Expr {
	t.Helper()
	e, err := NewCall(fn, args...)
	if err != nil {
		t.Fatalf("NewCall(%s): %v", fn, err)
	}
	return e
}

func render(a arrow.Array, i int) string {
	v := ScalarFromArray(a, i)
	switch x := v.(type) {
	case nil:
		return "NULL"
	case decimal128.Num:
		return x.ToString(a.DataType().(*arrow.Decimal128Type).Scale)
	case arrow.Date32:
		return x.FormattedString()
	case arrow.Timestamp:
		return formatDatetime(int64(x))
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

// evalRows evaluates e over batch with a checked allocator and renders
// every row.
func evalRows(t *testing.T, e Expr, batch arrow.RecordBatch) ([]string, error) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	a, err := e.Eval(&Context{Alloc: mem}, batch)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	if a.Len() != int(batch.NumRows()) {
		t.Fatalf("%s: %d rows, want %d", e, a.Len(), batch.NumRows())
	}
	if !arrow.TypeEqual(a.DataType(), e.DataType()) {
		t.Fatalf("%s: result type %s, declared %s", e, a.DataType(), e.DataType())
	}
	out := make([]string, a.Len())
	for i := range out {
		out[i] = render(a, i)
	}
	return out, nil
}

var oneRow = array.NewRecordBatch(arrow.NewSchema(nil, nil), nil, 1)

// eval1 evaluates a column-free expression for one row.
func eval1(t *testing.T, e Expr) string {
	t.Helper()
	r, err := evalRows(t, e, oneRow)
	if err != nil {
		t.Fatalf("%s: %v", e, err)
	}
	return r[0]
}

// batchOf builds a batch from columns given as Go slices (nil = NULL).
func batchOf(t *testing.T, cols ...any) arrow.RecordBatch {
	t.Helper()
	mem := memory.NewGoAllocator()
	var arrs []arrow.Array
	var fields []arrow.Field
	for k, c := range cols {
		var b array.Builder
		switch c := c.(type) {
		case []any:
			var typ arrow.DataType
			for _, v := range c {
				if v != nil {
					typ = inferType(v)
					break
				}
			}
			b = array.NewBuilder(mem, typ)
			for _, v := range c {
				if v == nil {
					b.AppendNull()
					continue
				}
				switch x := v.(type) {
				case int64:
					b.(*array.Int64Builder).Append(x)
				case int32:
					b.(*array.Int32Builder).Append(x)
				case float64:
					b.(*array.Float64Builder).Append(x)
				case string:
					b.(*array.StringBuilder).Append(x)
				case bool:
					b.(*array.BooleanBuilder).Append(x)
				case arrow.Date32:
					b.(*array.Date32Builder).Append(x)
				}
			}
		default:
			t.Fatalf("bad column %T", c)
		}
		a := b.NewArray()
		b.Release()
		arrs = append(arrs, a)
		fields = append(fields, arrow.Field{Name: fmt.Sprintf("c%d", k), Type: a.DataType(), Nullable: true})
	}
	batch := array.NewRecordBatch(arrow.NewSchema(fields, nil), arrs, int64(arrs[0].Len()))
	for _, a := range arrs {
		a.Release()
	}
	t.Cleanup(batch.Release)
	return batch
}

func col(batch arrow.RecordBatch, i int) *Column {
	return NewColumn(i, batch.Column(i).DataType(), batch.Schema().Field(i).Name)
}
