package expr

import (
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
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

// TestCompareLiteralKernels checks the branch-free loops of a column
// against a literal (on either side) for int32, int64, float64 (NaN
// included) and decimals whose high words differ (negative values, values
// beyond 64 bits), with NULLs and a length that is not a multiple of 8,
// against a comparison of the values row by row.
func TestCompareLiteralKernels(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	const n = 29
	ib := array.NewInt32Builder(mem)
	lb := array.NewInt64Builder(mem)
	fb := array.NewFloat64Builder(mem)
	db := array.NewDecimal128Builder(mem, decType(38, 2))
	ints := make([]int64, n)
	big := decimal128.New(64, 12345) // above 2^70
	decs := make([]decimal128.Num, n)
	for i := range n {
		ints[i] = int64(i*7%11) - 5
		decs[i] = decimal128.FromI64(ints[i] * 100)
		switch i % 5 {
		case 3:
			decs[i] = big
		case 4:
			decs[i] = big.Negate()
		}
		if i%6 == 5 {
			ib.AppendNull()
			lb.AppendNull()
			fb.AppendNull()
			db.AppendNull()
			continue
		}
		ib.Append(int32(ints[i]))
		lb.Append(ints[i])
		if i%9 == 2 {
			fb.Append(math.NaN())
		} else {
			fb.Append(float64(ints[i]))
		}
		db.Append(decs[i])
	}
	cols := []arrow.Array{ib.NewArray(), lb.NewArray(), fb.NewArray(), db.NewArray()}
	for _, b := range []array.Builder{ib, lb, fb, db} {
		b.Release()
	}
	fields := []arrow.Field{{Name: "i", Type: tInt32, Nullable: true}, {Name: "l", Type: tInt64, Nullable: true},
		{Name: "f", Type: tFloat64, Nullable: true}, {Name: "d", Type: decType(38, 2), Nullable: true}}
	batch := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, n)
	for _, c := range cols {
		c.Release()
	}
	defer batch.Release()
	ctx := &Context{Alloc: mem}
	truth := map[string]func(int) bool{
		"=": func(c int) bool { return c == 0 }, "<>": func(c int) bool { return c != 0 },
		"<": func(c int) bool { return c < 0 }, "<=": func(c int) bool { return c <= 0 },
		">": func(c int) bool { return c > 0 }, ">=": func(c int) bool { return c >= 0 },
	}
	for op, test := range truth {
		for _, k := range []int64{-5, 0, 2, 7} {
			lits := []Expr{NewLiteral(int32(k), tInt32), i64(k), f64(float64(k)), NewLiteral(decimal128.FromI64(k*100), decType(38, 2))}
			for c := range fields {
				x := NewColumn(c, fields[c].Type, fields[c].Name)
				for _, litLeft := range []bool{false, true} {
					e := call(t, op, x, lits[c])
					if litLeft {
						e = call(t, op, lits[c], x)
					}
					got, err := e.Eval(ctx, batch)
					if err != nil {
						t.Fatalf("%s: %v", e, err)
					}
					gb := got.(*array.Boolean)
					for r := range n {
						if r%6 == 5 {
							if gb.IsValid(r) {
								t.Errorf("%s row %d: NULL operand gave %v", e, r, gb.Value(r))
							}
							continue
						}
						var cmp3 int
						nan := false
						switch c {
						case 3:
							cmp3 = decs[r].Cmp(decimal128.FromI64(k * 100))
						case 2:
							nan = r%9 == 2
							fallthrough
						default:
							cmp3 = cmpInt(ints[r], k)
						}
						if litLeft {
							cmp3 = -cmp3
						}
						want := test(cmp3) && !nan
						if !gb.IsValid(r) || gb.Value(r) != want {
							t.Errorf("%s row %d: got %v (valid %v), want %v", e, r, gb.Value(r), gb.IsValid(r), want)
						}
					}
					got.Release()
				}
			}
		}
	}
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
