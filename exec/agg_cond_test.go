package exec

import (
	"testing"

	"github.com/fsql-dev/fsql/exec/expr"
)

// condSum is sum(CASE WHEN g = lit THEN d ELSE NULL END) over aggSchema.
func condSum(t *testing.T, lit, name string) AggFunc {
	t.Helper()
	eq, err := expr.NewCall("=", col(0, tStr), expr.NewLiteral(lit, tStr))
	if err != nil {
		t.Fatal(err)
	}
	c, err := expr.NewCall("case", eq, col(3, tDec152), expr.NewLiteral(nil, tDec152))
	if err != nil {
		t.Fatal(err)
	}
	return AggFunc{Fn: "sum", Arg: c, Type: tDec38_2, Name: name}
}

// TestConditionalAggregates: a family of conditional sums over one key
// (computed in one pass, agg_cond.go) gives what each CASE gives alone,
// NULL key rows and unmatched literals included, in single and
// partial/final modes.
func TestConditionalAggregates(t *testing.T) {
	aggs := []AggFunc{condSum(t, "a", "sa"), condSum(t, "b", "sb"), condSum(t, "zz", "sz"), condSum(t, "a", "sa2"),
		{Fn: "count_star", Type: tInt64, Name: "n"}}
	gb := []expr.Expr{col(1, tInt32)}
	gn := []string{"k"}
	a := &HashAggregate{Child: src(t, aggSchema, aggRows...), Mode: AggSingle, GroupBy: gb, GroupNames: gn, Aggs: aggs}
	fams, member := condAggs(a, []aggState{&decSumState{}, &decSumState{}, &decSumState{}, &decSumState{}, &countState{}})
	if len(fams) != 1 || len(fams[0].members) != 3 || !member[0] || !member[1] || !member[2] || member[3] || member[4] {
		t.Fatalf("families %+v, members %v", fams, member)
	}
	want := []string{"1|2.99|NULL|NULL|2.99|5", "2|NULL|2.00|NULL|NULL|1", "NULL|NULL|0.10|NULL|NULL|1"}
	wantSet(t, runRows(t, a), want...)
	wantSet(t, partialFinal(t, gb, gn, aggs, aggRows[:3], aggRows[3:]), want...)
	// Each alone (no family) agrees.
	for i, name := range []string{"sa", "sb", "sz"} {
		one := &HashAggregate{Child: src(t, aggSchema, aggRows...), Mode: AggSingle, GroupBy: gb, GroupNames: gn, Aggs: []AggFunc{aggs[i]}}
		if fams, _ := condAggs(one, []aggState{&decSumState{}}); fams != nil {
			t.Fatalf("%s alone made a family", name)
		}
		_ = runRows(t, one)
	}
}
