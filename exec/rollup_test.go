package exec

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/exec/expr"
)

// rollupAggs are spillAggFuncs with their arguments' columns moved by
// off (Expand puts the grouping id and the keys before the input's
// columns).
func rollupAggs(off int) []AggFunc {
	aggs := spillAggFuncs()
	for i, f := range aggs {
		if c, ok := f.Arg.(*expr.Column); ok {
			aggs[i].Arg = expr.NewColumn(c.Index+off, c.Type, c.Name)
		}
	}
	return aggs
}

// rollupPlans builds ROLLUP(s, a, f) over in both ways: every row
// expanded once per grouping set under one aggregate, and the partial
// aggregate of the finest set rolled up (Rollup) under a final merge.
func rollupPlans(in Node) (expand, rollup Node) {
	keys := []expr.Expr{col(1, tStr), col(0, tInt64), col(3, tF64)}
	names := []string{"s", "a", "f"}
	k := len(keys)
	cs := in.Schema()
	var pass []expr.Expr
	for i := 0; i < cs.NumFields(); i++ {
		pass = append(pass, expr.NewColumn(i, cs.Field(i).Type, cs.Field(i).Name))
	}
	ex := &Expand{Child: in, Exprs: keys, Names: names, Pass: pass, Sets: [][]int{{0, 1, 2}, {0, 1}, {0}, {}}}
	es := ex.Schema()
	var eg []expr.Expr
	for i := 0; i <= k; i++ {
		eg = append(eg, expr.NewColumn(i, es.Field(i).Type, es.Field(i).Name))
	}
	gnames := append(slices.Clone(names), "grouping_id")
	expand = &HashAggregate{Child: ex, Mode: AggSingle, GroupBy: eg, GroupNames: gnames, Aggs: rollupAggs(k + 1)}

	partial := &HashAggregate{Child: in, Mode: AggPartial, GroupBy: keys, GroupNames: names, Aggs: spillAggFuncs()}
	ru := &Rollup{Child: partial, Keys: k, Aggs: spillAggFuncs()}
	rs := ru.Schema()
	var rg []expr.Expr
	for i := 0; i <= k; i++ {
		rg = append(rg, expr.NewColumn(i, rs.Field(i).Type, rs.Field(i).Name))
	}
	rollup = &HashAggregate{Child: ru, Mode: AggFinal, GroupBy: rg, GroupNames: gnames, Aggs: spillAggFuncs()}
	return expand, rollup
}

// Rolling the finest set's states up gives what expanding every row
// gives: each set's groups, data NULLs apart from rolled-up ones (by the
// grouping id), the grand total once.
func TestRollupMatchesExpand(t *testing.T) {
	for _, tc := range []struct {
		name string
		rows [][]any
	}{
		{"few rows", sortData},
		{"many groups", passRows(20000, 3000, 9)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := &opSource{schema: sortSchema, rows: tc.rows, per: 1000, t: t}
			expand, rollup := rollupPlans(in)
			want := sorted(runRows(t, expand))
			got := sorted(runRows(t, rollup))
			if !slices.Equal(got, want) {
				t.Fatalf("rollup: %d rows differ from the expanded plan's %d\n got: %q\nwant: %q", len(got), len(want), got[:min(len(got), 12)], want[:min(len(want), 12)])
			}
		})
	}
}

// The grand total answers over no rows: one row, keys NULL, every key
// rolled up, empty aggregates.
func TestRollupEmptyInput(t *testing.T) {
	_, rollup := rollupPlans(&opSource{schema: sortSchema, t: t})
	wantRows(t, runRows(t, rollup), "NULL|NULL|NULL|7|0|0|NULL|NULL|NULL|NULL")
}

// Past its share Rollup flushes its tables, each into the next coarser
// one, instead of failing or spilling: more rows come out (a group of a
// coarser set in pieces), the final aggregate merges them to the same
// answer, and the budget is never passed.
func TestRollupFlushesPastItsShare(t *testing.T) {
	in := &opSource{schema: sortSchema, rows: passRows(40000, 8000, 3), per: 1000, t: t}
	_, rollup := rollupPlans(in)
	want := sorted(runRows(t, rollup))
	ru := rollup.(*HashAggregate).Child
	whole := len(runRows(t, ru))
	const limit = 512 << 10
	got, _ := spillRun(t, rollup, limit)
	if got = sorted(got); !slices.Equal(got, want) {
		t.Fatalf("rollup under %d bytes: %d rows differ from the %d in memory", limit, len(got), len(want))
	}
	pieces, _ := spillRun(t, ru, limit)
	if len(pieces) <= whole {
		t.Fatalf("Rollup under %d bytes handed out %d rows, as many as in memory (%d): it never flushed", limit, len(pieces), whole)
	}
	t.Logf("Rollup: %d rows in memory, %d under %d bytes", whole, len(pieces), limit)
}

// A flush stops once the finer tables gave back half of what Rollup
// held: a coarse set of a few groups under a large finer one is not
// handed out again at every flush, only once at the end, while the
// finer set comes out in pieces.
func TestRollupFlushKeepsSmallCoarseSets(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	rows := make([][]any, 40000)
	for i := range rows {
		k := r.Intn(8000)
		rows[i] = []any{k, fmt.Sprintf("s%d", k%3), fmt.Sprintf("%d.%02d", r.Intn(100), r.Intn(100)), float64(r.Intn(1000))}
	}
	in := &opSource{schema: sortSchema, rows: rows, per: 1000, t: t}
	_, rollup := rollupPlans(in)
	ru := rollup.(*HashAggregate).Child
	want := sorted(runRows(t, rollup))
	const limit = 512 << 10
	got, _ := spillRun(t, rollup, limit)
	if got = sorted(got); !slices.Equal(got, want) {
		t.Fatalf("rollup under %d bytes: %d rows differ from the %d in memory", limit, len(got), len(want))
	}
	count := func(rows []string) map[string]int {
		by := map[string]int{}
		for _, r := range rows {
			by[strings.Split(r, "|")[3]]++ // the grouping id
		}
		return by
	}
	whole := count(runRows(t, ru))
	pieces, _ := spillRun(t, ru, limit)
	under := count(pieces)
	// Grouping id 4 is the set by (s, a), 6 the set by s alone.
	if under["4"] <= whole["4"] {
		t.Fatalf("Rollup under %d bytes handed out the (s, a) set's %d groups %d times: it never flushed", limit, whole["4"], under["4"])
	}
	if under["6"] != whole["6"] {
		t.Fatalf("Rollup under %d bytes handed out the %d groups of the set by s alone as %d rows: flushed with the finer sets", limit, whole["6"], under["6"])
	}
}

// Closed before its end (its tables hold groups, rows wait to go out),
// Rollup leaves no buffer behind.
func TestRollupCloseEarly(t *testing.T) {
	in := &opSource{schema: sortSchema, rows: passRows(5000, 500, 4), per: 1000, t: t}
	_, rollup := rollupPlans(in)
	ru := rollup.(*HashAggregate).Child
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer alloc.AssertSize(t, 0)
	s, err := openTree(newTC(alloc), ru)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Next(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	b.Release()
	s.Close()
}

// Without aggregates (GROUP BY ... WITH ROLLUP of the keys alone) the
// grouping id still follows the keys, and every set's groups come out.
func TestRollupWithoutAggregates(t *testing.T) {
	in := src(t, sortSchema, sortData...)
	partial := &HashAggregate{Child: in, Mode: AggPartial, GroupBy: []expr.Expr{col(0, tInt64)}, GroupNames: []string{"a"}}
	ru := &Rollup{Child: partial, Keys: 1}
	rs := ru.Schema()
	if rs.NumFields() != 2 || rs.Field(1).Name != "grouping_id" {
		t.Fatalf("Rollup schema %s", rs)
	}
	final := &HashAggregate{Child: ru, Mode: AggFinal, GroupNames: []string{"a", "grouping_id"},
		GroupBy: []expr.Expr{expr.NewColumn(0, tInt64, "a"), expr.NewColumn(1, rs.Field(1).Type, "grouping_id")}}
	wantSet(t, runRows(t, final), "1|0", "2|0", "3|0", "NULL|0", "NULL|1")
}
