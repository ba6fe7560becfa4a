package exec

import (
	"testing"

	"github.com/fsql-dev/fsql/exec/expr"
)

func TestWindowRankAndRunningSum(t *testing.T) {
	s := opSchema(fld("p", tStr), fld("o", tInt64), fld("v", tDec152))
	in := src(t, s,
		[]any{"a", 1, "1.00"}, []any{"b", 5, "10.00"}, []any{"a", 2, "2.00"}, []any{"a", 2, "3.00"},
		[]any{"a", 3, nil}, []any{nil, 1, "7.00"}, []any{"b", 5, "20.00"}, []any{"a", nil, "0.50"})
	w := &Window{Child: in, PartitionBy: []expr.Expr{col(0, tStr)},
		OrderBy: []SortKey{{Expr: col(1, tInt64), NullsFirst: true}},
		Funcs: []WindowFunc{
			{Fn: "row_number", Type: tInt64, Name: "rn"},
			{Fn: "rank", Type: tInt64, Name: "rk"},
			{Fn: "dense_rank", Type: tInt64, Name: "dr"},
			{Fn: "sum", Arg: col(2, tDec152), Type: tDec38_2, Name: "s"},
			{Fn: "avg", Arg: col(2, tDec152), Type: tDec38_6, Name: "a"},
			{Fn: "count", Arg: col(2, tDec152), Type: tInt64, Name: "c"},
			{Fn: "max", Arg: col(1, tInt64), Type: tInt64, Name: "m"},
			{Fn: "min", Arg: col(0, tStr), Type: tStr, Name: "mp"},
		}}
	wantRows(t, runRows(t, w),
		"NULL|1|7.00|1|1|1|7.00|7.000000|1|1|NULL",
		"a|NULL|0.50|1|1|1|0.50|0.500000|1|NULL|a",
		"a|1|1.00|2|2|2|1.50|0.750000|2|1|a",
		// peers (o=2) share the running value including both rows
		"a|2|2.00|3|3|3|6.50|1.625000|4|2|a",
		"a|2|3.00|4|3|3|6.50|1.625000|4|2|a",
		"a|3|NULL|5|5|4|6.50|1.625000|4|3|a",
		"b|5|10.00|1|1|1|30.00|15.000000|2|5|b",
		"b|5|20.00|2|1|1|30.00|15.000000|2|5|b",
	)
}

func TestWindowWholePartitionWithoutOrder(t *testing.T) {
	s := opSchema(fld("p", tInt64), fld("v", tInt64))
	in := src(t, s, []any{1, 10}, []any{2, 5}, []any{1, 20}, []any{1, nil})
	w := &Window{Child: in, PartitionBy: []expr.Expr{col(0, tInt64)},
		Funcs: []WindowFunc{
			{Fn: "sum", Arg: col(1, tInt64), Type: tDec38_0, Name: "s"},
			{Fn: "count_star", Type: tInt64, Name: "n"},
			{Fn: "avg", Arg: col(1, tInt64), Type: tDec38_4, Name: "a"},
		}}
	wantSet(t, runRows(t, w), "1|10|30|3|15.0000", "1|20|30|3|15.0000", "1|NULL|30|3|15.0000", "2|5|5|1|5.0000")
	// No partitions, no order: one frame over everything.
	w = &Window{Child: in, Funcs: []WindowFunc{{Fn: "min", Arg: col(1, tInt64), Type: tInt64, Name: "mn"}}}
	wantSet(t, runRows(t, w), "1|10|5", "2|5|5", "1|20|5", "1|NULL|5")
	wantRows(t, runRows(t, &Window{Child: src(t, s), Funcs: w.Funcs}))
}
