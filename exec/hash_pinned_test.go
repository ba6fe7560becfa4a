package exec

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/exec/expr"
)

// TestHashColumnsPinned pins the shuffle hash: producers of an exchange
// route rows by it and consumers trust the routing, so every process must
// compute the same value for the same key. A change here is a change of
// the wire contract between tasks, never an accident.
func TestHashColumnsPinned(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	i64 := array.NewInt64Builder(mem)
	i64.AppendValues([]int64{0, 1, -1, 2451545}, nil)
	i64.AppendNull()
	str := array.NewStringBuilder(mem)
	str.AppendValues([]string{"", "a", "Books", "AAAAAAAABAAA"}, nil)
	str.AppendNull()
	dec := array.NewDecimal128Builder(mem, &arrow.Decimal128Type{Precision: 38, Scale: 2})
	dec.AppendValues([]decimal128.Num{decimal128.FromI64(0), decimal128.FromI64(12345), decimal128.FromI64(-5), decimal128.New(1, 7)}, nil)
	dec.AppendNull()
	f64 := array.NewFloat64Builder(mem)
	f64.AppendValues([]float64{0, 1.5, -2.25, 1e300}, nil)
	f64.AppendNull()
	for _, c := range []struct {
		name string
		b    array.Builder
		want string
	}{
		// hashInt64(1) = hi^lo of 1*0x9e3779b97f4a7c15; FNV-1a("a") = 0xe40c292c.
		{"int64", i64, "[0 3783067052 3783067053 1356511674 2603573053]"},
		{"string", str, "[2166136261 3826002220 3654301361 3535498858 2603573053]"},
		{"decimal", dec, "[0 4025840262 1801522423 1991303253 2603573053]"},
		{"float64", f64, "[0 1599602688 3089760256 3197336257 2603573053]"},
	} {
		a := c.b.NewArray()
		c.b.Release()
		if got := fmt.Sprint(hashOf(t, a)); got != c.want {
			t.Errorf("%s: hashes %s, want %s", c.name, got, c.want)
		}
	}
	// Composite keys and collated strings (hashed by their collation key:
	// 'A' and 'a ' are equal under utf8mb4_general_ci).
	k1 := array.NewInt64Builder(mem)
	k1.AppendValues([]int64{7, 7}, nil)
	k2 := array.NewStringBuilder(mem)
	k2.AppendValues([]string{"x", "y"}, nil)
	a1, a2 := k1.NewArray(), k2.NewArray()
	k1.Release()
	k2.Release()
	if got := fmt.Sprint(hashOf(t, a1, a2)); got != "[3861196838 3844419219]" {
		t.Errorf("composite: hashes %s", got)
	}
	coll, err := expr.LookupCollation("utf8mb4_general_ci")
	if err != nil {
		t.Fatal(err)
	}
	cs := array.NewStringBuilder(mem)
	cs.AppendValues([]string{"A", "a ", "b"}, nil)
	if got := fmt.Sprint(hashOf(t, expr.Collated(coll.Type(), cs.NewArray()))); got != "[1496526763 1496526763 3376061376]" {
		t.Errorf("collated: hashes %s", got)
	}
	cs.Release()
}
