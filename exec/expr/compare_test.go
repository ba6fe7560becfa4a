package expr

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestCompareStrings checks every comparison of strings, column against
// column and against a literal on either side, over a sliced batch (the
// offsets start past zero) with NULLs, empty strings, prefixes and values
// of equal length, against strings.Compare row by row.
func TestCompareStrings(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	xs := []string{"skip", "F", "", "M", "Fa", "F", "", "abc", "abd", "ab", "Primary", "Primar", "primary", "W", "F", "zz", "F"}
	ys := []string{"skip", "F", "", "F", "F", "", "x", "abc", "abc", "abc", "Primary", "Primary", "Primary", "W", "M", "z", "F"}
	nullAt := map[int]bool{3: true, 13: true}
	xb, yb := array.NewStringBuilder(mem), array.NewStringBuilder(mem)
	for i := range xs {
		if nullAt[i] {
			xb.AppendNull()
		} else {
			xb.Append(xs[i])
		}
		if i == 14 {
			yb.AppendNull()
		} else {
			yb.Append(ys[i])
		}
	}
	xa, ya := xb.NewArray(), yb.NewArray()
	xb.Release()
	yb.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: tString, Nullable: true}, {Name: "y", Type: tString, Nullable: true}}, nil)
	whole := array.NewRecordBatch(schema, []arrow.Array{xa, ya}, int64(len(xs)))
	xa.Release()
	ya.Release()
	defer whole.Release()
	batch := whole.NewSlice(1, int64(len(xs))) // offsets no longer start at 0
	defer batch.Release()
	truth := map[string]func(int) bool{
		"=": func(c int) bool { return c == 0 }, "<>": func(c int) bool { return c != 0 },
		"<": func(c int) bool { return c < 0 }, "<=": func(c int) bool { return c <= 0 },
		">": func(c int) bool { return c > 0 }, ">=": func(c int) bool { return c >= 0 },
	}
	x, y := NewColumn(0, tString, "x"), NewColumn(1, tString, "y")
	ctx := &Context{Alloc: mem}
	for op, test := range truth {
		for _, lit := range []string{"F", "", "Primary", "abc"} {
			cases := []struct {
				name string
				e    Expr
				want func(r int) (bool, bool) // value, valid
			}{
				{"x " + op + " y", call(t, op, x, y), func(r int) (bool, bool) {
					return test(strings.Compare(xs[r], ys[r])), !nullAt[r] && r != 14
				}},
				{"x " + op + " '" + lit + "'", call(t, op, x, str(lit)), func(r int) (bool, bool) {
					return test(strings.Compare(xs[r], lit)), !nullAt[r]
				}},
				{"'" + lit + "' " + op + " y", call(t, op, str(lit), y), func(r int) (bool, bool) {
					return test(strings.Compare(lit, ys[r])), r != 14
				}},
			}
			for _, c := range cases {
				got, err := c.e.Eval(ctx, batch)
				if err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
				b := got.(*array.Boolean)
				for i := 0; i < b.Len(); i++ {
					r := i + 1
					v, ok := c.want(r)
					if b.IsValid(i) != ok || ok && b.Value(i) != v {
						t.Errorf("%s row %d (%q, %q): got %v valid %v, want %v valid %v", c.name, r, xs[r], ys[r], b.Value(i), b.IsValid(i), v, ok)
					}
				}
				got.Release()
			}
		}
	}
}
