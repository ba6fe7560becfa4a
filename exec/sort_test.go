package exec

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

var sortSchema = opSchema(fld("a", tInt64), fld("s", tStr), fld("d", tDec152), fld("f", tF64))

var sortData = [][]any{
	{3, "b", "1.00", 2.5},
	{nil, "a", "2.00", nil},
	{1, "c", nil, 1.5},
	{3, "a", "-1.00", 0.5},
	{2, nil, "0.50", -1.0},
	{1, "b", "2.00", 1.5},
}

func TestSortNullOrderAndMultiKey(t *testing.T) {
	in := src(t, sortSchema, sortData...)
	asc := &Sort{Child: in, Keys: []SortKey{{Expr: col(0, tInt64), NullsFirst: true}, {Expr: col(1, tStr), Desc: true}}}
	wantRows(t, runRows(t, asc),
		"NULL|a|2.00|NULL", "1|c|NULL|1.5", "1|b|2.00|1.5", "2|NULL|0.50|-1", "3|b|1.00|2.5", "3|a|-1.00|0.5")
	// MySQL DESC: NULLs last.
	desc := &Sort{Child: in, Keys: []SortKey{{Expr: col(2, tDec152), Desc: true}, {Expr: col(3, tF64), NullsFirst: true}}}
	wantRows(t, runRows(t, desc),
		"NULL|a|2.00|NULL", "1|b|2.00|1.5", "3|b|1.00|2.5", "2|NULL|0.50|-1", "3|a|-1.00|0.5", "1|c|NULL|1.5")
	strs := &Sort{Child: in, Keys: []SortKey{{Expr: col(1, tStr), NullsFirst: false}, {Expr: col(0, tInt64), Desc: true}}}
	wantRows(t, runRows(t, strs),
		"3|a|-1.00|0.5", "NULL|a|2.00|NULL", "3|b|1.00|2.5", "1|b|2.00|1.5", "1|c|NULL|1.5", "2|NULL|0.50|-1")
}

func TestTopNEqualsSortPlusLimit(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	var rows [][]any
	for i := 0; i < 20000; i++ {
		var a any = r.Intn(500)
		if r.Intn(50) == 0 {
			a = nil
		}
		rows = append(rows, []any{a, fmt.Sprint(i), nil, float64(i)})
	}
	in := &opSource{schema: sortSchema, rows: rows, per: 3000, t: t}
	keys := []SortKey{{Expr: col(0, tInt64), Desc: true}, {Expr: col(3, tF64)}}
	for _, c := range []struct{ n, off int64 }{{10, 0}, {5, 7}, {0, 3}, {9000, 100}, {30000, 0}} {
		want := runRows(t, &Limit{Child: &Sort{Child: in, Keys: keys}, N: c.n, Offset: c.off})
		got := runRows(t, &TopN{Child: in, Keys: keys, N: c.n, Offset: c.off})
		if !slices.Equal(got, want) {
			t.Fatalf("n=%d off=%d: %d rows vs %d", c.n, c.off, len(got), len(want))
		}
	}
}

func TestSortWindowBudgetAndCancel(t *testing.T) {
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer alloc.AssertSize(t, 0)
	in := src(t, sortSchema, sortData...)
	keys := []SortKey{{Expr: col(0, tInt64)}}
	for _, n := range []Node{
		&Sort{Child: in, Keys: keys},
		&TopN{Child: in, Keys: keys, N: 2},
		&Window{Child: in, OrderBy: keys, Funcs: []WindowFunc{{Fn: "rank", Type: tInt64, Name: "r"}}},
	} {
		tc := newTC(alloc)
		tc.Memory = NewMemoryBudget(50)
		if _, err := runWith(tc, n); !errors.Is(err, ErrResourcesExhausted) {
			t.Fatalf("%s: want ErrResourcesExhausted, got %v", n, err)
		}
		if tc.Memory.Used() != 0 {
			t.Fatalf("%s: budget held: %d", n, tc.Memory.Used())
		}
		s, err := openTree(newTC(alloc), n)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := s.Next(ctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: want context.Canceled, got %v", n, err)
		}
		s.Close()
	}
}

// TestSortSingleIntKeyPaths checks the packed and the wide-range integer
// sorts against a reference stable sort, ties kept in input order.
func TestSortSingleIntKeyPaths(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	s := opSchema(fld("k", tInt64), fld("i", tInt64))
	for _, wide := range []bool{false, true} {
		var rows [][]any
		type kv struct{ k, i int }
		var ref []kv
		for i := 0; i < 5000; i++ {
			k := r.Intn(100) - 50
			if wide {
				k = []int{math.MinInt64, math.MaxInt64, 0, -1, 1}[r.Intn(5)]
			}
			rows = append(rows, []any{k, i})
			ref = append(ref, kv{k, i})
		}
		in := &opSource{schema: s, rows: rows, per: 1000, t: t}
		for _, desc := range []bool{false, true} {
			got := runRows(t, &Sort{Child: in, Keys: []SortKey{{Expr: col(0, tInt64), Desc: desc}}})
			want := slices.Clone(ref)
			slices.SortStableFunc(want, func(a, b kv) int {
				if desc {
					return cmp.Compare(b.k, a.k)
				}
				return cmp.Compare(a.k, b.k)
			})
			for i, w := range want {
				if got[i] != fmt.Sprintf("%d|%d", w.k, w.i) {
					t.Fatalf("wide=%v desc=%v row %d: got %s want %v", wide, desc, i, got[i], w)
				}
			}
		}
	}
}
