package exec

import (
	"testing"

	"github.com/fsql-dev/fsql/exec/expr"
)

func sharedTestExprs(t *testing.T) (mk func(fn string, args ...expr.Expr) expr.Expr, lit func(v int64) expr.Expr) {
	mk = func(fn string, args ...expr.Expr) expr.Expr {
		t.Helper()
		e, err := expr.NewCall(fn, args...)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	lit = func(v int64) expr.Expr { return expr.NewLiteral(v, tInt64) }
	return mk, lit
}

// Which subexpressions are shared: the largest repeated ones, and a
// fallible one only when some argument evaluates it for every row.
func TestSharedArgsPick(t *testing.T) {
	mk, lit := sharedTestExprs(t)
	v, k, g := col(2, tInt64), col(1, tInt32), col(0, tStr)
	diff := func() expr.Expr { return mk("-", v, k) }
	count := func(cond expr.Expr) AggFunc {
		return AggFunc{Fn: "sum", Arg: mk("case", cond, lit(1), lit(0)), Type: tDec38_0, Name: "s"}
	}
	guardedDiv := func(z int64) AggFunc {
		// CASE WHEN k = z THEN 0 ELSE v / k END: the division only for
		// the rows the WHEN did not take.
		return AggFunc{Fn: "sum", Arg: mk("case", mk("=", k, lit(z)), expr.NewLiteral(int64(0), tInt64), mk("/", v, k)), Type: tDec38_4, Name: "d"}
	}
	upperElse := func(z int64) AggFunc {
		return AggFunc{Fn: "max", Arg: mk("case", mk("=", k, lit(z)), expr.NewLiteral("x", tStr), mk("upper", g)), Type: tStr, Name: "u"}
	}
	for _, c := range []struct {
		name string
		aggs []AggFunc
		want []string // the shared expressions
	}{
		{"q99's day ranges", []AggFunc{
			count(mk("<=", diff(), lit(30))),
			count(mk("and", mk(">", diff(), lit(30)), mk("<=", diff(), lit(60)))),
			count(mk(">", diff(), lit(60))),
			{Fn: "count_star", Type: tInt64, Name: "n"},
		}, []string{mk("-", v, k).String()}},
		{"nothing repeated", []AggFunc{count(mk("<=", diff(), lit(30))), {Fn: "sum", Arg: v, Type: tDec38_0, Name: "v"}}, nil},
		// Not the division, but the casts of its operands, which cannot fail.
		{"a fallible division only behind a WHEN", []AggFunc{guardedDiv(0), guardedDiv(1)},
			[]string{"CAST(c2 AS DECIMAL(19,0))", "CAST(c1 AS DECIMAL(10,0))"}},
		{"a fallible division one argument runs over every row", []AggFunc{guardedDiv(0), {Fn: "sum", Arg: mk("/", v, k), Type: tDec38_4, Name: "q"}},
			[]string{mk("/", v, k).String()}},
		{"an UPPER, which cannot fail, behind a WHEN", []AggFunc{upperElse(0), upperElse(1)}, []string{mk("upper", g).String()}},
		{"the same argument twice", []AggFunc{guardedDiv(0), guardedDiv(0)}, []string{guardedDiv(0).Arg.String()}},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := &HashAggregate{Child: src(t, aggSchema), Mode: AggSingle, Aggs: c.aggs}
			sh := newSharedArgs(a)
			var got []string
			if sh != nil {
				for _, e := range sh.exprs {
					got = append(got, e.String())
				}
			}
			if len(got) != len(c.want) {
				t.Fatalf("shared %q, want %q", got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Fatalf("shared %q, want %q", got, c.want)
				}
			}
			a.Mode = AggFinal
			if newSharedArgs(a) != nil {
				t.Fatal("a final aggregate merges states: it has no arguments to share")
			}
		})
	}
}

// Sharing changes no result: q99's counts by day range and a guarded
// division over rows where the guard matters (k = 0 would fail the
// division), in single, partial-then-final and pass-through modes.
func TestSharedArgsResults(t *testing.T) {
	mk, lit := sharedTestExprs(t)
	v, k := col(2, tInt64), col(1, tInt32)
	diff := func() expr.Expr { return mk("-", v, k) }
	count := func(name string, cond expr.Expr) AggFunc {
		return AggFunc{Fn: "sum", Arg: mk("case", cond, lit(1), lit(0)), Type: tDec38_0, Name: name}
	}
	aggs := []AggFunc{
		count("le5", mk("<=", diff(), lit(5))),
		count("mid", mk("and", mk(">", diff(), lit(5)), mk("<=", diff(), lit(9)))),
		count("gt9", mk(">", diff(), lit(9))),
		{Fn: "sum", Arg: mk("case", mk("=", k, lit(0)), lit(0), mk("/", v, k)), Type: tDec38_4, Name: "q1"},
		{Fn: "max", Arg: mk("case", mk("=", k, lit(0)), lit(-1), mk("/", v, k)), Type: tDec38_4, Name: "q2"},
	}
	rows := [][]any{
		{"a", 1, 10, "1.00", 1.0}, // diff 9
		{"a", 0, 3, "1.00", 1.0},  // diff 3; k = 0: the WHEN guards the division
		{"a", 2, 20, "1.00", 1.0}, // diff 18
		{"b", 1, 2, "1.00", 1.0},  // diff 1
		{"b", 0, nil, "1.00", 1.0},
		{"b", nil, 7, "1.00", 1.0},
	}
	gb := []expr.Expr{col(0, tStr)}
	want := []string{"a|1|1|1|20.0000|10.0000", "b|1|0|0|2.0000|2.0000"}
	a := &HashAggregate{Child: src(t, aggSchema, rows...), Mode: AggSingle, GroupBy: gb, GroupNames: []string{"g"}, Aggs: aggs}
	if newSharedArgs(a) == nil {
		t.Fatal("the difference is not shared")
	}
	wantSet(t, runRows(t, a), want...)
	wantSet(t, partialFinal(t, gb, []string{"g"}, aggs, rows[:3], rows[3:]), want...)

	// Every row its own group: the partial aggregate passes rows through.
	pass := &HashAggregate{Child: src(t, aggSchema, rows...), Mode: AggPartial, GroupBy: []expr.Expr{col(2, tInt64)}, GroupNames: []string{"v"}, Aggs: aggs}
	fin := &HashAggregate{Child: pass, Mode: AggFinal, GroupBy: []expr.Expr{col(0, tInt64)}, GroupNames: []string{"v"}, Aggs: aggs}
	wantSet(t, runRows(t, fin),
		"10|0|1|0|10.0000|10.0000", "3|1|0|0|0.0000|-1.0000", "20|0|0|1|10.0000|10.0000",
		"2|1|0|0|2.0000|2.0000", "NULL|0|0|0|0.0000|-1.0000", "7|0|0|0|NULL|NULL")
}
