package exec

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/exec/expr"
)

func collatedStrings(t *testing.T, name string, vals ...string) arrow.Array {
	t.Helper()
	c, err := expr.LookupCollation(name)
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewStringBuilder(memory.DefaultAllocator)
	b.AppendValues(vals, nil)
	return expr.Collated(c.Type(), b.NewArray())
}

// A NULL-type column is NULL in every row for the key encoder, the shuffle
// hash and the comparators; a collated column groups, hashes and orders by
// its collation.
func TestKeysOfNullAndCollatedColumns(t *testing.T) {
	null := array.NewNull(3)
	defer null.Release()
	var e keyEncoder
	if err := e.encode([]arrow.Array{null}, 3); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if !e.hasNull[i] || string(e.key(i)) != string(e.key(0)) {
			t.Fatalf("row %d: NULL-type key not NULL or not equal to the others", i)
		}
	}
	h := make([]uint32, 3)
	HashColumns([]arrow.Array{null}, h)
	if h[0] != nullHash || h[2] != nullHash {
		t.Fatalf("NULL-type rows hash to %x, want nullHash", h)
	}
	if c, err := newRowCmp(null, false, true); err != nil || c(0, 2) != 0 {
		t.Fatalf("NULL-type comparator: %v", err)
	}

	ci := collatedStrings(t, "utf8mb4_general_ci", "a", "A ", "b", "Á")
	defer ci.Release()
	if err := e.encode([]arrow.Array{ci}, 4); err != nil {
		t.Fatal(err)
	}
	if string(e.key(0)) != string(e.key(1)) || string(e.key(0)) != string(e.key(3)) || string(e.key(0)) == string(e.key(2)) {
		t.Fatal("general_ci keys: a, 'A ', Á must be equal and differ from b")
	}
	h = make([]uint32, 4)
	HashColumns([]arrow.Array{ci}, h)
	if h[0] != h[1] || h[0] != h[3] || h[0] == h[2] {
		t.Fatalf("general_ci hashes %x: equal strings must hash alike", h)
	}
	c, err := newRowCmp(ci, false, true)
	if err != nil {
		t.Fatal(err)
	}
	if c(0, 1) != 0 || c(1, 2) >= 0 || c(2, 3) <= 0 {
		t.Fatal("general_ci order: a = 'A ' < b > Á")
	}
	st, err := newMinMax(ci.DataType(), true)
	if err != nil {
		t.Fatal(err)
	}
	st.grow(1)
	if err := st.update([]int32{0, 0, 0, 0}, ci); err != nil {
		t.Fatal(err)
	}
	out, err := st.final(memory.DefaultAllocator, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	if expr.CollationOf(out.DataType()) == nil || out.ValueStr(0) != "b" {
		t.Fatalf("max under general_ci = %s (%s), want b", out.ValueStr(0), out.DataType())
	}
}
