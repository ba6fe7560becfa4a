package exec

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/fsql-dev/fsql/exec/expr"
)

// ranked keeps the rendered window rows whose field f (a rank or row
// number) is at most k: the filter a RankLimit serves.
func ranked(t *testing.T, rows []string, f int, k int64) []string {
	t.Helper()
	var out []string
	for _, r := range rows {
		v, err := strconv.ParseInt(strings.Split(r, "|")[f], 10, 64)
		if err != nil {
			t.Fatalf("row %q: field %d: %v", r, f, err)
		}
		if v <= k {
			out = append(out, r)
		}
	}
	return out
}

// TestWindowRankLimit: a window with a rank limit, and the same window
// over a WindowGroupLimit, keep exactly the rows the filter above keeps
// from the window without one, with the same ranks: for rank (ties,
// NULLs, a long peer run), row_number over a total order, several
// partitions and one, ascending and descending, limits below and above
// the partition sizes, compacting every 700 rows, in memory and spilled.
func TestWindowRankLimit(t *testing.T) {
	defer func(n int) { rankCompactRows = n }(rankCompactRows)
	rankCompactRows = 700
	in := &opSource{schema: bigWindowSchema, rows: bigWindowRows(12000, 17), per: 500, t: t}
	part := []expr.Expr{col(1, tInt64)}
	asc := []SortKey{{Expr: col(2, tInt64), NullsFirst: true}}
	desc := []SortKey{{Expr: col(2, tInt64), Desc: true}}
	total := []SortKey{{Expr: col(3, tInt64), Desc: true}, {Expr: col(0, tInt64), NullsFirst: true}}
	for _, tc := range []struct {
		fn    string
		part  []expr.Expr
		order []SortKey
	}{
		{"rank", part, asc}, {"rank", part, desc}, {"rank", nil, asc}, {"rank", part, nil},
		{"rank", []expr.Expr{col(4, tStr)}, desc},
		{"row_number", part, total}, {"row_number", nil, total},
	} {
		for _, k := range []int64{0, 1, 7, 150, 5000} {
			name := fmt.Sprintf("%s/part=%d/order=%s/k=%d", tc.fn, len(tc.part), sortKeyList(tc.order), k)
			t.Run(name, func(t *testing.T) {
				funcs := []WindowFunc{{Fn: tc.fn, Type: tInt64, Name: "r"}, {Fn: "dense_rank", Type: tInt64, Name: "dr"}}
				plain := &Window{Child: in, PartitionBy: tc.part, OrderBy: tc.order, Funcs: funcs}
				want := ranked(t, runRows(t, plain), 5, k)
				lim := &RankLimit{Fn: tc.fn, K: k}
				limited := &Window{Child: in, PartitionBy: tc.part, OrderBy: tc.order, Funcs: funcs, Limit: lim}
				// In memory the last sort sees every row left: it hands
				// out only the ranked ones.
				wantSet(t, runRows(t, limited), want...)
				partial := &WindowGroupLimit{Child: in, PartitionBy: tc.part, OrderBy: tc.order, Limit: *lim}
				over := &Window{Child: partial, PartitionBy: tc.part, OrderBy: tc.order, Funcs: funcs, Limit: lim}
				wantSet(t, ranked(t, runRows(t, over), 5, k), want...)
				got, st := spillRun(t, limited, 256<<10)
				wantSet(t, ranked(t, got, 5, k), want...)
				// Compaction keeps a small limit's rows in memory; a limit
				// above the partitions' sizes keeps every row and spills.
				if k == 5000 && st.Files.Load() == 0 {
					t.Fatalf("%s under 256 KiB kept every row and wrote no run", limited)
				}
			})
		}
	}
}

// fields renders fields fs of each rendered row.
func fields(rows []string, fs ...int) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		all := strings.Split(r, "|")
		sel := make([]string, len(fs))
		for j, f := range fs {
			sel[j] = all[f]
		}
		out[i] = strings.Join(sel, "|")
	}
	return out
}

// TestWindowRowNumberLimitTies: row_number over an order with ties
// numbers tied rows in any order, so the rows kept may differ from the
// unlimited window's; what must agree is which order keys are kept, as
// many times, and the numbers 1..min(K, rows) of each partition.
func TestWindowRowNumberLimitTies(t *testing.T) {
	defer func(n int) { rankCompactRows = n }(rankCompactRows)
	rankCompactRows = 700
	in := &opSource{schema: bigWindowSchema, rows: bigWindowRows(12000, 19), per: 500, t: t}
	part := []expr.Expr{col(1, tInt64)}
	order := []SortKey{{Expr: col(2, tInt64), NullsFirst: true}}
	funcs := []WindowFunc{{Fn: "row_number", Type: tInt64, Name: "r"}}
	for _, k := range []int64{1, 9, 400} {
		want := ranked(t, runRows(t, &Window{Child: in, PartitionBy: part, OrderBy: order, Funcs: funcs}), 5, k)
		lim := &RankLimit{Fn: "row_number", K: k}
		for _, w := range []*Window{
			{Child: in, PartitionBy: part, OrderBy: order, Funcs: funcs, Limit: lim},
			{Child: &WindowGroupLimit{Child: in, PartitionBy: part, OrderBy: order, Limit: *lim}, PartitionBy: part, OrderBy: order, Funcs: funcs, Limit: lim},
		} {
			got := runRows(t, w)
			if len(got) != len(want) {
				t.Fatalf("%s: %d rows, want %d", w, len(got), len(want))
			}
			wantSet(t, fields(got, 1, 2), fields(want, 1, 2)...)
			wantSet(t, fields(got, 1, 5), fields(want, 1, 5)...)
		}
	}
}

// TestWindowGroupLimitGivesUp: partitions smaller than the limit make the
// first compaction keep everything, and the rest of the input then
// passes on as it comes: every row arrives once.
func TestWindowGroupLimitGivesUp(t *testing.T) {
	defer func(n int) { rankCompactRows = n }(rankCompactRows)
	rankCompactRows = 300
	rows := bigWindowRows(3000, 5)
	in := &opSource{schema: bigWindowSchema, rows: rows, per: 100, t: t}
	// Partition by the unique id: every partition is one row.
	g := &WindowGroupLimit{Child: in, PartitionBy: []expr.Expr{col(0, tInt64)}, OrderBy: []SortKey{{Expr: col(2, tInt64)}}, Limit: RankLimit{Fn: "rank", K: 3}}
	all := runRows(t, in)
	got := runRows(t, g)
	wantSet(t, got, all...)
}
