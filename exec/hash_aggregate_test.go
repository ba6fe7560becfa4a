package exec

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/exec/expr"
)

var (
	tDec38_0 = &arrow.Decimal128Type{Precision: 38, Scale: 0}
	tDec38_2 = &arrow.Decimal128Type{Precision: 38, Scale: 2}
	tDec38_4 = &arrow.Decimal128Type{Precision: 38, Scale: 4}
	tDec38_6 = &arrow.Decimal128Type{Precision: 38, Scale: 6}
)

// aggInput: g (string), k (int32), v (int64), d (decimal(15,2)), f (float64)
var aggSchema = opSchema(fld("g", tStr), fld("k", tInt32), fld("v", tInt64), fld("d", tDec152), fld("f", tF64))

var aggRows = [][]any{
	{"a", 1, 10, "1.00", 1.0},
	{"a", 1, nil, "2.00", 2.0},
	{"b", 2, 5, "2.00", 4.0},
	{nil, 1, 7, nil, nil},
	{"a", 1, 10, "-0.01", 8.0},
	{nil, 1, 1, "3.33", 3.0},
	{"b", nil, -3, "0.10", 5.0},
}

func aggFuncs() []AggFunc {
	return []AggFunc{
		{Fn: "count_star", Type: tInt64, Name: "n"},
		{Fn: "count", Arg: col(2, tInt64), Type: tInt64, Name: "cv"},
		{Fn: "sum", Arg: col(2, tInt64), Type: tDec38_0, Name: "sv"},
		{Fn: "avg", Arg: col(2, tInt64), Type: tDec38_4, Name: "av"},
		{Fn: "sum", Arg: col(3, tDec152), Type: tDec38_2, Name: "sd"},
		{Fn: "avg", Arg: col(3, tDec152), Type: tDec38_6, Name: "ad"},
		{Fn: "min", Arg: col(3, tDec152), Type: tDec152, Name: "mind"},
		{Fn: "max", Arg: col(0, tStr), Type: tStr, Name: "maxg"},
		{Fn: "min", Arg: col(4, tF64), Type: tF64, Name: "minf"},
		{Fn: "stddev_samp", Arg: col(4, tF64), Type: tF64, Name: "sdf"},
		{Fn: "sum", Arg: col(4, tF64), Type: tF64, Name: "sf"},
		{Fn: "avg", Arg: col(4, tF64), Type: tF64, Name: "af"},
		{Fn: "var_pop", Arg: col(2, tInt64), Type: tF64, Name: "vp"},
	}
}

func groupExprs() ([]expr.Expr, []string) {
	return []expr.Expr{col(0, tStr), col(1, tInt32)}, []string{"g", "k"}
}

func TestHashAggregateSingle(t *testing.T) {
	gb, gn := groupExprs()
	a := &HashAggregate{Child: src(t, aggSchema, aggRows...), Mode: AggSingle, GroupBy: gb, GroupNames: gn, Aggs: aggFuncs()}
	wantSet(t, runRows(t, a),
		"a|1|3|2|20|10.0000|2.99|0.996667|-0.01|a|1|3.7859389|11|3.66666667|0",
		"b|2|1|1|5|5.0000|2.00|2.000000|2.00|b|4|NULL|4|4|0",
		"NULL|1|2|2|8|4.0000|3.33|3.330000|3.33|NULL|3|NULL|3|3|9",
		"b|NULL|1|1|-3|-3.0000|0.10|0.100000|0.10|b|5|NULL|5|5|0",
	)
}

func TestHashAggregateIntKeyWithNulls(t *testing.T) {
	a := &HashAggregate{Child: src(t, aggSchema, aggRows...), Mode: AggSingle,
		GroupBy: []expr.Expr{col(1, tInt32)}, GroupNames: []string{"k"},
		Aggs: []AggFunc{{Fn: "count_star", Type: tInt64, Name: "n"}, {Fn: "max", Arg: col(2, tInt64), Type: tInt64, Name: "m"}}}
	wantSet(t, runRows(t, a), "1|5|10", "2|1|5", "NULL|1|-3")
}

// partialFinal runs AggPartial over two tasks' inputs, unions the states
// and merges them with AggFinal, as the scheduler would across an exchange.
func partialFinal(t *testing.T, gb []expr.Expr, gn []string, aggs []AggFunc, rowsA, rowsB [][]any) []string {
	pa := &HashAggregate{Child: src(t, aggSchema, rowsA...), Mode: AggPartial, GroupBy: gb, GroupNames: gn, Aggs: aggs}
	pb := &HashAggregate{Child: src(t, aggSchema, rowsB...), Mode: AggPartial, GroupBy: gb, GroupNames: gn, Aggs: aggs}
	ps := pa.PartialSchema()
	fgb := make([]expr.Expr, len(gb))
	for i := range gb {
		fgb[i] = expr.NewColumn(i, ps.Field(i).Type, gn[i])
	}
	f := &HashAggregate{Child: &UnionAll{Inputs: []Node{pa, pb}}, Mode: AggFinal, GroupBy: fgb, GroupNames: gn, Aggs: aggs}
	return runRows(t, f)
}

func TestHashAggregatePartialFinalEqualsSingle(t *testing.T) {
	gb, gn := groupExprs()
	single := runRows(t, &HashAggregate{Child: src(t, aggSchema, aggRows...), Mode: AggSingle, GroupBy: gb, GroupNames: gn, Aggs: aggFuncs()})
	for split := 0; split <= len(aggRows); split++ {
		got := partialFinal(t, gb, gn, aggFuncs(), aggRows[:split], aggRows[split:])
		wantSet(t, got, single...)
	}
	// No GROUP BY.
	want := runRows(t, &HashAggregate{Child: src(t, aggSchema, aggRows...), Mode: AggSingle, Aggs: aggFuncs()})
	got := partialFinal(t, nil, nil, aggFuncs(), aggRows[:3], aggRows[3:])
	wantRows(t, got, want...)
}

func TestHashAggregateEmptyInput(t *testing.T) {
	aggs := []AggFunc{{Fn: "count_star", Type: tInt64, Name: "n"}, {Fn: "sum", Arg: col(2, tInt64), Type: tDec38_0, Name: "s"}}
	empty := src(t, aggSchema)
	wantRows(t, runRows(t, &HashAggregate{Child: empty, Mode: AggSingle, Aggs: aggs}), "0|NULL")
	wantRows(t, runRows(t, &HashAggregate{Child: empty, Mode: AggSingle, Aggs: aggs, GroupBy: []expr.Expr{col(0, tStr)}}))
	wantRows(t, runRows(t, &HashAggregate{Child: empty, Mode: AggPartial, Aggs: aggs}), "0|NULL")
	wantRows(t, partialFinal(t, nil, nil, aggs, nil, nil), "0|NULL")
}

func TestHashAggregateDecimalExactAndRounding(t *testing.T) {
	var rows [][]any
	for i := 0; i < 1000; i++ {
		rows = append(rows, []any{"x", 0, 0, "0.10", 0.1})
	}
	rows = append(rows, []any{"y", 0, 1, "-0.01", 0.0})
	for i := 0; i < 7; i++ {
		rows = append(rows, []any{"y", 0, 0, "0.00", 0.0})
	}
	aggs := []AggFunc{
		{Fn: "sum", Arg: col(3, tDec152), Type: tDec38_2, Name: "s"},
		{Fn: "avg", Arg: col(2, tInt64), Type: tDec38_2, Name: "a"},   // 1/8 = 0.125 -> 0.13
		{Fn: "avg", Arg: col(3, tDec152), Type: tDec38_2, Name: "ad"}, // -0.01/8 = -0.00125 -> -0.00
		{Fn: "avg", Arg: col(3, tDec152), Type: tDec38_4, Name: "ad4"},
	}
	s := &opSource{schema: aggSchema, rows: rows, per: 300, t: t}
	a := &HashAggregate{Child: s, Mode: AggSingle, GroupBy: []expr.Expr{col(0, tStr)}, GroupNames: []string{"g"}, Aggs: aggs}
	wantSet(t, runRows(t, a), "x|100.00|0.00|0.10|0.1000", "y|-0.01|0.13|0.00|-0.0013")

	neg := [][]any{{"z", 0, -1, "0", 0.0}, {"z", 0, 0, "0", 0.0}, {"z", 0, 0, "0", 0.0}, {"z", 0, 0, "0", 0.0}, {"z", 0, 0, "0", 0.0}, {"z", 0, 0, "0", 0.0}, {"z", 0, 0, "0", 0.0}, {"z", 0, 0, "0", 0.0}}
	a = &HashAggregate{Child: src(t, aggSchema, neg...), Mode: AggSingle, Aggs: []AggFunc{{Fn: "avg", Arg: col(2, tInt64), Type: tDec38_2, Name: "a"}}}
	wantRows(t, runRows(t, a), "-0.13")
}

func TestHashAggregateDecimalOverflow(t *testing.T) {
	big := "99999999999999999999999999999999999999"
	s := opSchema(fld("d", tDec38_0))
	a := &HashAggregate{Child: src(t, s, []any{big}, []any{big}), Mode: AggSingle,
		Aggs: []AggFunc{{Fn: "sum", Arg: col(0, tDec38_0), Type: tDec38_0, Name: "s"}}}
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer alloc.AssertSize(t, 0)
	_, err := runWith(newTC(alloc), a)
	if !errors.Is(err, ErrExecution) {
		t.Fatalf("want overflow error, got %v", err)
	}
}

func TestHashAggregateDistinct(t *testing.T) {
	gb := []expr.Expr{col(1, tInt32)}
	aggs := []AggFunc{
		{Fn: "count", Arg: col(2, tInt64), Distinct: true, Type: tInt64, Name: "cd"},
		{Fn: "sum", Arg: col(2, tInt64), Distinct: true, Type: tDec38_0, Name: "sd"},
		{Fn: "count", Arg: col(0, tStr), Distinct: true, Type: tInt64, Name: "cg"},
		{Fn: "count", Arg: col(2, tInt64), Type: tInt64, Name: "c"},
	}
	a := &HashAggregate{Child: src(t, aggSchema, aggRows...), Mode: AggSingle, GroupBy: gb, GroupNames: []string{"k"}, Aggs: aggs}
	wantSet(t, runRows(t, a), "1|3|18|1|4", "2|1|5|1|1", "NULL|1|-3|1|1")
}

func TestHashAggregateMemoryBudget(t *testing.T) {
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer alloc.AssertSize(t, 0)
	tc := newTC(alloc)
	tc.Memory = NewMemoryBudget(1000)
	gb, gn := groupExprs()
	a := &HashAggregate{Child: src(t, aggSchema, aggRows...), Mode: AggSingle, GroupBy: gb, GroupNames: gn, Aggs: aggFuncs()}
	_, err := runWith(tc, a)
	if !errors.Is(err, ErrResourcesExhausted) {
		t.Fatalf("want ErrResourcesExhausted, got %v", err)
	}
	if tc.Memory.Used() != 0 {
		t.Fatalf("budget not released: %d", tc.Memory.Used())
	}
}

func TestHashAggregateManyGroups(t *testing.T) {
	// Enough groups to grow the integer table and the string map several
	// times, spread over several batches.
	var rows [][]any
	for i := 0; i < 20000; i++ {
		rows = append(rows, []any{fmt.Sprint(i % 3001), i % 3001, i, nil, nil})
	}
	in := &opSource{schema: aggSchema, rows: rows, per: 4096, t: t}
	for _, gb := range [][]expr.Expr{{col(1, tInt32)}, {col(0, tStr)}, {col(0, tStr), col(1, tInt32)}} {
		names := []string{"g1", "g2"}[:len(gb)]
		a := &HashAggregate{Child: in, Mode: AggSingle, GroupBy: gb, GroupNames: names,
			Aggs: []AggFunc{{Fn: "count_star", Type: tInt64, Name: "n"}, {Fn: "min", Arg: col(2, tInt64), Type: tInt64, Name: "m"}}}
		got := runRows(t, a)
		if len(got) != 3001 {
			t.Fatalf("%d groups", len(got))
		}
		for _, r := range got {
			parts := strings.Split(r, "|")
			m, _ := strconv.Atoi(parts[len(parts)-1])
			n, _ := strconv.Atoi(parts[len(parts)-2])
			if parts[0] != fmt.Sprint(m) || (m < 20000%3001 && n != 7) || (m >= 20000%3001 && n != 6) {
				t.Fatalf("bad group %q", r)
			}
		}
	}
}

func TestHashAggregateAvgOfHugeDecimals(t *testing.T) {
	s := opSchema(fld("d", tDec38_0))
	big := "99999999999999999999999999999999999"
	a := &HashAggregate{Child: src(t, s, []any{big}, []any{big}, []any{"1"}), Mode: AggSingle,
		Aggs: []AggFunc{{Fn: "avg", Arg: col(0, tDec38_0), Type: tDec38_2, Name: "a"}}}
	// (2*(10^35-1)+1)/3 = 66666666666666666666666666666666666.33...
	wantRows(t, runRows(t, a), "66666666666666666666666666666666666.33")
}

func TestHashAggregateBoolMinMax(t *testing.T) {
	s := opSchema(fld("g", tInt64), fld("b", tBool))
	in := src(t, s, []any{1, true}, []any{1, false}, []any{2, true}, []any{2, nil}, []any{3, nil})
	a := &HashAggregate{Child: in, Mode: AggSingle, GroupBy: []expr.Expr{col(0, tInt64)}, GroupNames: []string{"g"},
		Aggs: []AggFunc{{Fn: "min", Arg: col(1, tBool), Type: tBool, Name: "mn"}, {Fn: "max", Arg: col(1, tBool), Type: tBool, Name: "mx"}}}
	wantSet(t, runRows(t, a), "1|false|true", "2|true|true", "3|NULL|NULL")
}
