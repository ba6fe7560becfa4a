package kernels

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func TestSelectionAndCount(t *testing.T) {
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer alloc.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 7, 8, 9, 63, 64, 65, 1000} {
		for _, nullPct := range []int{0, 30} {
			for _, off := range []int{0, 3, 8} {
				if off > n {
					continue
				}
				name := fmt.Sprintf("n%d_nulls%d_off%d", n, nullPct, off)
				t.Run(name, func(t *testing.T) {
					full := randomArray(t, alloc, arrow.FixedWidthTypes.Boolean, n, nullPct, r).(*array.Boolean)
					defer full.Release()
					mask := array.NewSlice(full, int64(off), int64(n)).(*array.Boolean)
					defer mask.Release()
					var want []int32
					for i := 0; i < mask.Len(); i++ {
						if mask.IsValid(i) && mask.Value(i) {
							want = append(want, int32(i))
						}
					}
					got := Selection(mask, nil)
					if len(got) != len(want) || (len(want) > 0 && !reflect.DeepEqual(got, want)) {
						t.Fatalf("selection %v, want %v", got, want)
					}
					if c := CountTrue(mask); c != len(want) {
						t.Fatalf("count %d, want %d", c, len(want))
					}
				})
			}
		}
	}
}

func TestFilterBatch(t *testing.T) {
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer alloc.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(3, 4))
	const n = 20
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "i", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	}, nil)
	cols := make([]arrow.Array, 3)
	for i, f := range schema.Fields() {
		cols[i] = randomArray(t, alloc, f.Type, n, 20, r)
	}
	b := array.NewRecordBatch(schema, cols, n)
	for _, c := range cols {
		c.Release()
	}
	defer b.Release()

	mask := func(keep func(i int) bool) *array.Boolean {
		mb := array.NewBooleanBuilder(alloc)
		defer mb.Release()
		for i := 0; i < n; i++ {
			switch {
			case i == 5:
				mb.AppendNull() // NULL counts as false
			default:
				mb.Append(keep(i) && i != 5)
			}
		}
		return mb.NewArray().(*array.Boolean)
	}
	cases := []struct {
		name     string
		keep     func(i int) bool
		kept     int
		same     bool // b itself
		slice    bool // shares b's buffers
		wantRows []int
	}{
		{"none", func(int) bool { return false }, 0, false, false, nil},
		{"long run is a slice", func(i int) bool { return i >= 6 && i < 18 }, 12, false, true, seq(6, 18)},
		{"short run is copied", func(i int) bool { return i >= 6 && i < 9 }, 3, false, false, seq(6, 9)},
		{"scattered", func(i int) bool { return i%3 == 0 }, 7, false, false, []int{0, 3, 6, 9, 12, 15, 18}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := mask(tc.keep)
			defer m.Release()
			out, sel, err := FilterBatch(alloc, b, m, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(sel) != tc.kept {
				t.Fatalf("kept %d, want %d", len(sel), tc.kept)
			}
			if tc.kept == 0 {
				if out != nil {
					t.Fatal("want nil batch")
				}
				return
			}
			defer out.Release()
			if out.NumRows() != int64(tc.kept) {
				t.Fatalf("%d rows, want %d", out.NumRows(), tc.kept)
			}
			shares := out.Column(1).Data().Buffers()[2] == b.Column(1).Data().Buffers()[2]
			if shares != tc.slice {
				t.Fatalf("shares buffers %v, want %v", shares, tc.slice)
			}
			for c := 0; c < 3; c++ {
				for k, row := range tc.wantRows {
					if g, w := out.Column(c).ValueStr(k), b.Column(c).ValueStr(row); g != w {
						t.Fatalf("col %d row %d: %s, want %s", c, k, g, w)
					}
				}
			}
		})
	}
	// Every row kept: the batch itself. (Row 5's NULL mask is replaced.)
	mb := array.NewBooleanBuilder(alloc)
	for i := 0; i < n; i++ {
		mb.Append(true)
	}
	all := mb.NewArray().(*array.Boolean)
	mb.Release()
	defer all.Release()
	out, _, err := FilterBatch(alloc, b, all, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	if out != b {
		t.Fatal("every row kept: want the input batch")
	}
	// Filter of one array, against the selection.
	m := mask(func(i int) bool { return i%2 == 1 })
	defer m.Release()
	f, err := Filter(alloc, b.Column(1), m)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Release()
	want, err := Take(alloc, b.Column(1), Selection(m, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer want.Release()
	checkSame(t, f, want)
}

func seq(from, to int) []int {
	var s []int
	for i := from; i < to; i++ {
		s = append(s, i)
	}
	return s
}
