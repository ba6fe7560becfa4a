package exec

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fsql-dev/fsql/exec/expr"
)

var tU64 = arrow.PrimitiveTypes.Uint64

func groupConcatAgg(t *testing.T, sep string, distinct bool, desc bool) AggFunc {
	t.Helper()
	v, err := expr.NewCall("concat", col(0, tStr), col(2, tInt64))
	if err != nil {
		t.Fatal(err)
	}
	arg, err := expr.NewGroupConcatArg(sep, distinct, []expr.Expr{v}, []expr.Expr{col(2, tInt64), col(3, tDec152)}, []bool{desc, false})
	if err != nil {
		t.Fatal(err)
	}
	return AggFunc{Fn: "group_concat", Arg: arg, Type: tStr, Name: "gc"}
}

// TestGroupConcatPartialFinal: entries merged from partial states order
// and de-duplicate exactly as one single-phase aggregate does.
func TestGroupConcatPartialFinal(t *testing.T) {
	gb, gn := groupExprs()
	for _, distinct := range []bool{false, true} {
		for _, desc := range []bool{false, true} {
			aggs := []AggFunc{groupConcatAgg(t, "|", distinct, desc),
				{Fn: "bit_or", Arg: col(2, tInt64), Type: tU64, Name: "bo"},
				{Fn: "bit_and", Arg: col(2, tInt64), Type: tU64, Name: "ba"},
				{Fn: "bit_xor", Arg: col(1, tInt32), Type: tU64, Name: "bx"}}
			single := runRows(t, &HashAggregate{Child: src(t, aggSchema, aggRows...), Mode: AggSingle, GroupBy: gb, GroupNames: gn, Aggs: aggs})
			for split := 0; split <= len(aggRows); split++ {
				wantSet(t, partialFinal(t, gb, gn, aggs, aggRows[:split], aggRows[split:]), single...)
			}
		}
	}
	aggs := []AggFunc{groupConcatAgg(t, ", ", false, true), {Fn: "bit_and", Arg: col(2, tInt64), Type: tU64, Name: "ba"}}
	rows := [][]any{{"x", 1, 3, "1.00", 0.0}, {"y", 1, 1, "1.00", 0.0}, {"z", 1, 3, "0.50", 0.0}, {nil, 1, 9, "1.00", 0.0}, {"n", 1, nil, "1.00", 0.0}}
	// ORDER BY v DESC, d: 3 (0.50 before 1.00), then 1; the row with a
	// NULL value is skipped; the NULL v sorts last descending.
	wantRows(t, runRows(t, &HashAggregate{Child: src(t, aggSchema, rows...), Mode: AggSingle, Aggs: aggs}), "z3, x3, y1|1")
	// No rows: NULL and all ones.
	wantRows(t, runRows(t, &HashAggregate{Child: src(t, aggSchema), Mode: AggSingle, Aggs: aggs}), "NULL|18446744073709551615")
}
