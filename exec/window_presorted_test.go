package exec

import (
	"slices"
	"testing"

	"github.com/fsql-dev/fsql/exec/expr"
)

// TestWindowPresorted: a window reading input already in its order
// (Presorted) gives the rows, in the same order, that it gives sorting
// that input itself, for every function under the default frame and the
// framing functions under ROWS and RANGE frames; in memory, and under a
// budget where its one big partition goes to a file of its own.
func TestWindowPresorted(t *testing.T) {
	in := &opSource{schema: bigWindowSchema, rows: bigWindowRows(6000, 5), per: 700, t: t}
	part := []expr.Expr{col(1, tInt64)}
	cases := []struct {
		name  string
		order []SortKey
		frame WindowFrame
		funcs []WindowFunc
	}{
		{"default frame", []SortKey{{Expr: col(2, tInt64), NullsFirst: true}}, WindowFrame{}, bigWindowFuncs()},
		{"descending, NULLs last", []SortKey{{Expr: col(2, tInt64), Desc: true}}, WindowFrame{}, bigWindowFuncs()},
		{"sliding rows", []SortKey{{Expr: col(2, tInt64), NullsFirst: true}, {Expr: col(0, tInt64)}},
			WindowFrame{Unit: FrameRows, Start: FrameBound{Kind: Preceding, Rows: 3}, End: FrameBound{Kind: Following, Rows: 40}}, frameFuncs()},
		{"no order", nil, WindowFrame{}, bigWindowFuncs()},
	}
	for _, c := range cases {
		keys := []SortKey{{Expr: part[0], NullsFirst: true}}
		keys = append(keys, c.order...)
		sorting := &Window{Child: in, PartitionBy: part, OrderBy: c.order, Frame: c.frame, Funcs: c.funcs}
		pre := &Window{Child: &Sort{Child: in, Keys: keys}, PartitionBy: part, OrderBy: c.order, Frame: c.frame, Funcs: c.funcs, Presorted: true}
		want := runRows(t, sorting)
		if got := runRows(t, pre); !slices.EqualFunc(got, want, sameRow) {
			t.Errorf("%s: presorted in memory differs from sorting", c.name)
		}
		bigPartitionsSpilled.Store(0)
		got, _ := spillRun(t, pre, 384<<10)
		if bigPartitionsSpilled.Load() == 0 {
			t.Errorf("%s: no partition went to a file of its own under 384 KiB", c.name)
		}
		if !slices.EqualFunc(got, want, sameRow) {
			t.Errorf("%s: presorted under 384 KiB differs from sorting", c.name)
		}
	}
}

// TestWindowPresortedStack: q47's shape, a rank by (p) ordered by (o, id)
// under an average by (p, o) that reads the rank's output presorted,
// equals the average sorting for itself; and the windows stream: with
// many small partitions the presorted one never holds the whole input.
func TestWindowPresortedStack(t *testing.T) {
	in := &opSource{schema: bigWindowSchema, rows: bigWindowRows(6000, 9), per: 500, t: t}
	p, o, id, v := col(1, tInt64), col(2, tInt64), col(0, tInt64), col(3, tInt64)
	rank := &Window{Child: in, PartitionBy: []expr.Expr{p}, OrderBy: []SortKey{{Expr: o, NullsFirst: true}, {Expr: id, NullsFirst: true}},
		Funcs: []WindowFunc{{Fn: "rank", Type: tInt64, Name: "rk"}}}
	avg := []WindowFunc{{Fn: "avg", Arg: v, Type: tDec38_4, Name: "av"}, {Fn: "count_star", Type: tInt64, Name: "n"}}
	pre := &Window{Child: rank, PartitionBy: []expr.Expr{p, o}, Funcs: avg, Presorted: true}
	sorting := &Window{Child: rank, PartitionBy: []expr.Expr{p, o}, Funcs: avg}
	got, want := runRows(t, pre), runRows(t, sorting)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatal("presorted average over the rank differs from sorting")
	}
}
