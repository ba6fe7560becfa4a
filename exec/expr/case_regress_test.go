package expr

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// A CASE whose result is fixed-width must not read its WHEN conditions
// (booleans) as values of the result type (TPC-DS q73's ratio).
func TestCaseFixedWidthResultOverManyRows(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	const n = 1800
	b := array.NewInt32Builder(mem)
	for i := 0; i < n; i++ {
		b.Append(int32(i % 5))
	}
	a := b.NewArray()
	b.Release()
	sc := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true}}, nil)
	rec := array.NewRecordBatch(sc, []arrow.Array{a}, n)
	a.Release()
	defer rec.Release()
	col := NewColumn(0, arrow.PrimitiveTypes.Int32, "a")
	dec := &arrow.Decimal128Type{Precision: 10, Scale: 0}
	gt, err := NewCall(">", col, NewLiteral(int64(0), arrow.PrimitiveTypes.Int64))
	if err != nil {
		t.Fatal(err)
	}
	x, err := NewCast(col, dec)
	if err != nil {
		t.Fatal(err)
	}
	div, err := NewCall("/", x, x)
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewCall("case", gt, div, Null(arrow.Null))
	if err != nil {
		t.Fatal(err)
	}
	out, err := e.Eval(&Context{Alloc: mem}, rec)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	d := out.(*array.Decimal128)
	one := decimal128.FromI64(10000) // 1.0000 at scale 4
	for i := 0; i < n; i++ {
		if i%5 == 0 {
			if d.IsValid(i) {
				t.Fatalf("row %d: want NULL", i)
			}
		} else if d.Value(i) != one {
			t.Fatalf("row %d: want 1.0000, got %v", i, d.Value(i))
		}
	}
}
