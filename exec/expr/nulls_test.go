package expr

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Arrow's NULL-type array has no validity bitmap: its own IsNull says
// false. The helpers say NULL for every row.
func TestNullTypeArrayIsNullEverywhere(t *testing.T) {
	a := array.NewNull(10)
	defer a.Release()
	if a.IsNull(3) {
		t.Fatal("arrow changed: array.Null.IsNull is true now; the helpers may be simplified")
	}
	for i := 0; i < 10; i++ {
		if !IsNull(a, i) || IsValid(a, i) {
			t.Fatalf("row %d of a NULL-type array is not NULL", i)
		}
	}
	bits, off := Validity(a)
	if bits == nil {
		t.Fatal("Validity of an all-NULL array must be a bitmap")
	}
	for i := 0; i < 10; i++ {
		if BitValid(bits, off, i) {
			t.Fatalf("row %d valid in the bitmap", i)
		}
	}
	typed := array.MakeArrayOfNull(memory.DefaultAllocator, tInt64, 3)
	defer typed.Release()
	if !IsNull(typed, 1) {
		t.Fatal("typed NULL")
	}
}

func TestNullTypeOperators(t *testing.T) {
	n := Null(arrow.Null)
	for _, c := range []struct {
		e    Expr
		want string
	}{
		{call(t, "isnull", n), "true"},
		{call(t, "isnotnull", n), "false"},
		{call(t, "<=>", n, n), "true"},
		{call(t, "<=>", n, i64(1)), "false"},
		{call(t, "=", n, n), "NULL"},
		{call(t, "coalesce", n, n), "NULL"},
		{call(t, "coalesce", n, i64(2)), "2"},
	} {
		if got := eval1(t, c.e); got != c.want {
			t.Errorf("%s = %s, want %s", c.e, got, c.want)
		}
	}
	// The same over a column of the NULL type, as a derived table's
	// SELECT NULL produces.
	col := array.NewNull(2)
	sc := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.Null, Nullable: true}}, nil)
	b := array.NewRecordBatch(sc, []arrow.Array{col}, 2)
	col.Release()
	defer b.Release()
	x := NewColumn(0, arrow.Null, "x")
	got, err := evalRows(t, call(t, "isnull", x), b)
	if err != nil || got[0] != "true" || got[1] != "true" {
		t.Fatalf("x IS NULL over a NULL column: %v %v", got, err)
	}
}
