package exec

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/spill"
)

// spillAggFuncs are aggregates whose merged states give exactly the
// sequential answer (float variance would differ in the last digits).
func spillAggFuncs() []AggFunc {
	return []AggFunc{
		{Fn: "count_star", Type: tInt64, Name: "n"},
		{Fn: "count", Arg: col(2, tDec152), Type: tInt64, Name: "cd"},
		{Fn: "sum", Arg: col(2, tDec152), Type: tDec38_2, Name: "sd"},
		{Fn: "avg", Arg: col(2, tDec152), Type: tDec38_6, Name: "ad"},
		{Fn: "min", Arg: col(1, tStr), Type: tStr, Name: "mins"},
		{Fn: "max", Arg: col(3, tF64), Type: tF64, Name: "maxf"},
	}
}

// A single aggregate past its share spills partitions of partial states
// and merges them one by one (split again under a tinier budget); a
// partial aggregate flushes early and the final one above it spills:
// both give the in-memory groups.
func TestHashAggregateSpills(t *testing.T) {
	in := &opSource{schema: sortSchema, rows: sortRows(40000, 7), per: 1000, t: t}
	gb := []expr.Expr{col(1, tStr), col(0, tInt64)}
	gn := []string{"s", "a"}
	single := &HashAggregate{Child: in, Mode: AggSingle, GroupBy: gb, GroupNames: gn, Aggs: spillAggFuncs()}
	want := runRows(t, single)
	slices.Sort(want)
	if len(want) < 20000 {
		t.Fatalf("only %d groups: the test needs many", len(want))
	}
	for _, limit := range []int64{2 << 20, 512 << 10} {
		got, st := spillRun(t, single, limit)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("single aggregate under %d bytes: %d groups differ from the %d in memory", limit, len(got), len(want))
		}
		if st.Files.Load() == 0 {
			t.Fatalf("single aggregate under %d bytes did not spill", limit)
		}
		t.Logf("under %d: %d files, %d bytes, %d passes", limit, st.Files.Load(), st.Bytes.Load(), st.Passes.Load())
	}

	partial := &HashAggregate{Child: in, Mode: AggPartial, GroupBy: gb, GroupNames: gn, Aggs: spillAggFuncs()}
	ps := partial.PartialSchema()
	fgb := []expr.Expr{expr.NewColumn(0, ps.Field(0).Type, "s"), expr.NewColumn(1, ps.Field(1).Type, "a")}
	final := &HashAggregate{Child: partial, Mode: AggFinal, GroupBy: fgb, GroupNames: gn, Aggs: spillAggFuncs()}
	got, st := spillRun(t, final, 1<<20)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("partial+final under 1 MiB: %d groups differ from the %d in memory", len(got), len(want))
	}
	if st.Files.Load() == 0 {
		t.Fatal("the final aggregate did not spill")
	}
}

// DISTINCT aggregates and GROUP_CONCAT spill too: a DISTINCT
// aggregate's (group, value) pairs go with their group's partition and
// are de-duplicated again when it is merged, so values seen before and
// after a spill count once; GROUP_CONCAT keeps its entries' order. Mixed
// with plain aggregates, with NULL values and NULL keys, under two
// budgets (the tinier one splits partitions again).
func TestHashAggregateDistinctSpills(t *testing.T) {
	in := &opSource{schema: sortSchema, rows: repeatRows(20000, 8), per: 500, t: t}
	gcArg, err := expr.NewGroupConcatArg(",", true, []expr.Expr{col(2, tDec152)}, []expr.Expr{col(2, tDec152)}, []bool{true})
	if err != nil {
		t.Fatal(err)
	}
	gcPlain, err := expr.NewGroupConcatArg("|", false, []expr.Expr{col(1, tStr)}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	aggs := []AggFunc{
		{Fn: "count", Arg: col(2, tDec152), Distinct: true, Type: tInt64, Name: "cd"},
		{Fn: "sum", Arg: col(2, tDec152), Distinct: true, Type: tDec38_2, Name: "sd"},
		{Fn: "count", Arg: col(1, tStr), Distinct: true, Type: tInt64, Name: "cs"},
		{Fn: "count_star", Type: tInt64, Name: "n"},
		{Fn: "min", Arg: col(1, tStr), Distinct: true, Type: tStr, Name: "mins"},
		{Fn: "sum", Arg: col(2, tDec152), Type: tDec38_2, Name: "s"},
		{Fn: "group_concat", Arg: gcArg, Type: tStr, Name: "gcd"},
		{Fn: "group_concat", Arg: gcPlain, Type: tStr, Name: "gc"},
	}
	a := &HashAggregate{Child: in, Mode: AggSingle, GroupBy: []expr.Expr{col(0, tInt64)}, GroupNames: []string{"a"}, Aggs: aggs}
	want := runRows(t, a)
	slices.Sort(want)
	for _, limit := range []int64{2 << 20, 512 << 10} {
		got, st := spillRun(t, a, limit)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			for i := range min(len(got), len(want)) {
				if got[i] != want[i] {
					t.Fatalf("under %d bytes: group %q, want %q", limit, got[i], want[i])
				}
			}
			t.Fatalf("under %d bytes: %d groups differ from the %d in memory", limit, len(got), len(want))
		}
		if st.Files.Load() == 0 {
			t.Fatalf("under %d bytes the aggregate did not spill", limit)
		}
		t.Logf("under %d: %d files, %d bytes, %d passes", limit, st.Files.Load(), st.Bytes.Load(), st.Passes.Load())
	}
}

// repeatRows are n rows of 400 groups (and NULL) whose few values repeat
// within a group, before and after a spill; a few are NULL.
func repeatRows(n int, seed int64) [][]any {
	r := rand.New(rand.NewSource(seed))
	rows := make([][]any, n)
	for i := range rows {
		var a, s, d any = r.Intn(400), fmt.Sprintf("s%02d", r.Intn(30)), fmt.Sprintf("%d.50", r.Intn(20))
		if r.Intn(50) == 0 {
			a = nil
		}
		if r.Intn(20) == 0 {
			s = nil
		}
		if r.Intn(20) == 0 {
			d = nil
		}
		rows[i] = []any{a, s, d, float64(i)}
	}
	return rows
}

// Without GROUP BY there is one group, whose DISTINCT sets spill by
// value: count, sum, avg, min and max of DISTINCT values over 40,000 rows
// (most values distinct) under a budget that holds a few thousand give
// the in-memory answer, beside a plain count(*) and sum that stay in
// memory. GROUP_CONCAT's entries cannot be divided: past the share it
// still fails with a resources error saying so, leaking nothing.
func TestHashAggregateDistinctNoGroupBy(t *testing.T) {
	in := &opSource{schema: sortSchema, rows: sortRows(40000, 8), per: 1000, t: t}
	a := &HashAggregate{Child: in, Mode: AggSingle, Aggs: []AggFunc{
		{Fn: "count", Arg: col(3, tF64), Distinct: true, Type: tInt64, Name: "c"},
		{Fn: "count", Arg: col(1, tStr), Distinct: true, Type: tInt64, Name: "cs"},
		{Fn: "sum", Arg: col(2, tDec152), Distinct: true, Type: tDec38_2, Name: "sd"},
		{Fn: "avg", Arg: col(0, tInt64), Distinct: true, Type: tDec38_4, Name: "ad"},
		{Fn: "max", Arg: col(1, tStr), Distinct: true, Type: tStr, Name: "mx"},
		{Fn: "count_star", Type: tInt64, Name: "n"},
		{Fn: "sum", Arg: col(0, tInt64), Type: tDec38_0, Name: "s"},
	}}
	want := runRows(t, a)
	for _, limit := range []int64{1 << 20, 256 << 10, 48 << 10} {
		got, st := spillRun(t, a, limit)
		if !slices.Equal(got, want) {
			t.Fatalf("under %d bytes: %v, in memory %v", limit, got, want)
		}
		if st.Files.Load() == 0 {
			t.Fatalf("under %d bytes: nothing spilled", limit)
		}
		if limit < 64<<10 && st.Passes.Load() < 2 {
			t.Fatalf("under %d bytes: no value file was divided again", limit)
		}
		t.Logf("under %d: %d files, %d rows, %d passes", limit, st.Files.Load(), st.Rows.Load(), st.Passes.Load())
	}
	gcArg, err := expr.NewGroupConcatArg("|", false, []expr.Expr{col(1, tStr)}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	gc := &HashAggregate{Child: in, Mode: AggSingle, Aggs: []AggFunc{
		{Fn: "count", Arg: col(3, tF64), Distinct: true, Type: tInt64, Name: "c"},
		{Fn: "group_concat", Arg: gcArg, Type: tStr, Name: "g"},
	}}
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	m := spill.NewManager(spill.Config{Dirs: []string{t.TempDir()}})
	tc := &TaskContext{Alloc: alloc, Memory: NewMemoryBudget(256 << 10), Parallelism: 1, Spill: m}
	_, err = runWith(tc, gc)
	if !errors.Is(err, ErrResourcesExhausted) || !strings.Contains(err.Error(), "without GROUP BY") {
		t.Fatalf("want resources exhausted naming the missing GROUP BY, got %v", err)
	}
	if tc.Memory.Used() != 0 {
		t.Fatalf("%d bytes still reserved", tc.Memory.Used())
	}
	m.Close()
	alloc.AssertSize(t, 0)
}

// An aggregate cancelled while it spills its input, or closed while it
// hands out merged partitions, removes its files itself (before the
// run's manager closes) and leaks no buffer or reservation.
func TestHashAggregateSpillCancel(t *testing.T) {
	for _, stop := range []string{"input", "output"} {
		alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
		dir := t.TempDir()
		m := spill.NewManager(spill.Config{Dirs: []string{dir}})
		tc := &TaskContext{Alloc: alloc, Memory: NewMemoryBudget(512 << 10), Parallelism: 1, Spill: m}
		in := &opSource{schema: sortSchema, rows: sortRows(40000, 9), per: 1000, t: t}
		ctx, cancel := context.WithCancel(context.Background())
		var child Node = in
		if stop == "input" {
			child = &cancelAfter{Node: in, after: 30, cancel: cancel}
		}
		a := &HashAggregate{Child: child, Mode: AggSingle, GroupBy: []expr.Expr{col(1, tStr), col(0, tInt64)}, GroupNames: []string{"s", "a"}, Aggs: spillAggFuncs()}
		s, err := openTree(tc, a)
		if err != nil {
			t.Fatal(err)
		}
		b, err := s.Next(ctx)
		if stop == "input" {
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("want cancellation, got %v", err)
			}
		} else {
			if err != nil {
				t.Fatal(err)
			}
			b.Release()
		}
		if st := m.Stats(); st.Files == 0 {
			t.Fatalf("stopped at the %s: the aggregate had not spilled", stop)
		}
		s.Close()
		cancel()
		for _, f := range m.Folders() {
			ents, _ := os.ReadDir(f)
			for _, e := range ents {
				if e.Name() != "owner.lock" {
					t.Fatalf("stopped at the %s: %s left behind", stop, e.Name())
				}
			}
		}
		if u := tc.Memory.Used(); u != 0 {
			t.Fatalf("stopped at the %s: %d bytes still reserved", stop, u)
		}
		m.Close()
		alloc.AssertSize(t, 0)
	}
}

// A keyed aggregate whose few groups hold huge DISTINCT sets, which a
// split by group key cannot divide (every pair of a group follows its
// key), divides its partitions by (group, value) pair and gives the
// in-memory answer under budgets far below one group's set; NULL values
// and keys, a plain aggregate beside, a second DISTINCT aggregate.
func TestHashAggregateDistinctSplitsByValue(t *testing.T) {
	r := rand.New(rand.NewSource(9))
	var rows [][]any
	for i := 0; i < 60000; i++ {
		var g any = r.Intn(3)
		if i%997 == 0 {
			g = nil
		}
		var v any = fmt.Sprintf("%d.%02d", r.Intn(200000), r.Intn(100))
		if i%101 == 0 {
			v = nil
		}
		rows = append(rows, []any{g, fmt.Sprintf("s%06d", r.Intn(50000)), v, float64(i)})
	}
	in := &opSource{schema: sortSchema, rows: rows, per: 1000, t: t}
	aggs := []AggFunc{
		{Fn: "count", Arg: col(2, tDec152), Distinct: true, Type: tInt64, Name: "cd"},
		{Fn: "sum", Arg: col(2, tDec152), Distinct: true, Type: tDec38_2, Name: "sd"},
		{Fn: "count", Arg: col(1, tStr), Distinct: true, Type: tInt64, Name: "cs"},
		{Fn: "max", Arg: col(1, tStr), Distinct: true, Type: tStr, Name: "maxs"},
		{Fn: "count_star", Type: tInt64, Name: "n"},
		{Fn: "sum", Arg: col(3, tF64), Type: tF64, Name: "s"},
	}
	a := &HashAggregate{Child: in, Mode: AggSingle, GroupBy: []expr.Expr{col(0, tInt64)}, GroupNames: []string{"a"}, Aggs: aggs}
	want := runRows(t, a)
	slices.Sort(want)
	for _, limit := range []int64{1 << 20, 256 << 10} {
		got, st := spillRun(t, a, limit)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("under %d bytes: %v, want %v", limit, got, want)
		}
		if st.Files.Load() == 0 || st.Passes.Load() < 2 {
			t.Fatalf("under %d bytes: %d files, %d passes", limit, st.Files.Load(), st.Passes.Load())
		}
		t.Logf("under %d: %d files, %d bytes, %d passes", limit, st.Files.Load(), st.Bytes.Load(), st.Passes.Load())
	}
}
