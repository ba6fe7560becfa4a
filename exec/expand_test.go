package exec

import (
	"github.com/apache/arrow-go/v18/arrow"

	"testing"

	"github.com/fsql-dev/fsql/exec/expr"
)

// TestExpandRollup runs GROUP BY ROLLUP(a, b) with SUM(v) as the planner
// builds it: Expand, then an aggregate grouped by (a, b, grouping_id).
func TestExpandRollup(t *testing.T) {
	s := opSchema(fld("a", tStr), fld("b", tInt64), fld("v", tInt64))
	in := src(t, s, []any{"x", 1, 10}, []any{"x", 2, 20}, []any{"x", nil, 5}, []any{nil, 1, 7}, []any{"y", 1, 1})
	e := &Expand{Child: in, Sets: [][]int{{0, 1}, {0}, {}},
		Exprs: []expr.Expr{col(0, tStr), col(1, tInt64)}, Names: []string{"a", "b"},
		Pass: []expr.Expr{col(2, tInt64)}, PassNames: []string{"v"}}
	agg := &HashAggregate{Child: e, Mode: AggSingle,
		GroupBy:    []expr.Expr{col(0, tStr), col(1, tInt64), col(2, tInt64)},
		GroupNames: []string{"a", "b", "gid"},
		Aggs:       []AggFunc{{Fn: "sum", Arg: col(3, tInt64), Type: tDec38_0, Name: "s"}}}
	wantSet(t, runRows(t, agg),
		// detail rows: the data's own NULLs have grouping_id 0
		"x|1|0|10", "x|2|0|20", "x|NULL|0|5", "NULL|1|0|7", "y|1|0|1",
		// subtotals per a (b rolled up: bit 1)
		"x|NULL|2|35", "NULL|NULL|2|7", "y|NULL|2|1",
		// grand total
		"NULL|NULL|3|43")
}

// TestNodeStrings checks every operator renders for EXPLAIN.
func TestNodeStrings(t *testing.T) {
	in := src(t, probeSchema, []any{1, "a"})
	k := []SortKey{{Expr: col(0, tInt32), Desc: true}}
	for _, n := range []Node{
		&Filter{Child: in, Cond: cmpExpr(0, 0, "=")},
		&Project{Child: in, Exprs: []expr.Expr{col(0, tInt32)}, Names: []string{"x"}},
		&Limit{Child: in, N: 1, Offset: 2},
		&UnionAll{Inputs: []Node{in, in}},
		&Values{Types: []arrow.DataType{tInt32}},
		&HashAggregate{Child: in, Mode: AggPartial, GroupBy: []expr.Expr{col(1, tStr)}, Aggs: []AggFunc{{Fn: "count", Arg: col(0, tInt32), Distinct: true, Type: tInt64}}},
		&HashJoin{Type: LeftJoin, Build: in, Probe: in, BuildKeys: []expr.Expr{col(0, tInt32)}, ProbeKeys: []expr.Expr{col(0, tInt32)}, Residual: cmpExpr(0, 2, "<")},
		&NestedLoopJoin{Type: AntiJoin, Build: in, Probe: in},
		&Sort{Child: in, Keys: k},
		&TopN{Child: in, Keys: k, N: 3},
		&Window{Child: in, OrderBy: k, Funcs: []WindowFunc{{Fn: "rank", Type: tInt64}}},
		&Expand{Child: in, Sets: [][]int{{0}, {}}, Exprs: []expr.Expr{col(0, tInt32)}},
	} {
		if n.String() == "" || n.Schema() == nil {
			t.Fatalf("%T renders empty", n)
		}
	}
}
