package pruning

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/fsql-dev/fsql/exec/expr"
)

func TestRowGroupFilter(t *testing.T) {
	tb := testTable(t)
	var (
		id    = expr.NewColumn(colID, arrow.PrimitiveTypes.Int64, "id")
		qty   = expr.NewColumn(colQty, arrow.PrimitiveTypes.Int32, "qty")
		price = expr.NewColumn(colPrice, &arrow.Decimal128Type{Precision: 7, Scale: 2}, "price")
		name  = expr.NewColumn(colName, arrow.BinaryTypes.String, "name")
		d     = expr.NewColumn(colD, arrow.FixedWidthTypes.Date32, "d")
		day   = expr.NewColumn(colDay, arrow.PrimitiveTypes.Int32, "day")
	)
	i64 := func(v int64) *expr.Literal { return &expr.Literal{Value: v, Type: arrow.PrimitiveTypes.Int64} }
	i32 := func(v int32) *expr.Literal { return &expr.Literal{Value: v, Type: arrow.PrimitiveTypes.Int32} }
	dec := func(v int64, p, s int32) *expr.Literal {
		return &expr.Literal{Value: decimal128.FromI64(v), Type: &arrow.Decimal128Type{Precision: p, Scale: s}}
	}
	c := func(fn string, args ...expr.Expr) *expr.Call {
		return &expr.Call{Fn: fn, Args: args, Type: arrow.FixedWidthTypes.Boolean}
	}
	for _, tc := range []struct {
		name string
		e    expr.Expr
		want string // kept row groups of one file; "all" when the filter is nil
	}{
		{"col >= lit", c(">=", id, i64(250)), "2"},
		{"lit > col", c(">", i64(150), id), "01"},
		{"col = lit", c("=", id, i64(150)), "1"},
		{"col < min", c("<", id, i64(100)), "0"},
		{"col <= boundary", c("<=", id, i64(100)), "01"},
		{"int32 col, int64 lit", c(">", qty, i64(199)), "2"},
		{"int col, decimal lit", c(">=", id, dec(19950, 10, 2)), "2"},            // id >= 199.50
		{"decimal col, decimal lit", c("<", price, dec(50000, 12, 3)), "0"},      // price < 50.000; rg1 all NULL
		{"decimal col, int lit", c(">", price, i32(250)), "2"},                   // rg2 max 299.00
		{"all-NULL group fails comparisons", c(">=", price, dec(0, 7, 2)), "02"}, // rg1 price all NULL
		{"is null", c("isnull", price), "01"},                                    // rg2 has no NULL
		{"in", c("in", id, i64(5), i64(250), &expr.Literal{Type: arrow.PrimitiveTypes.Int64}), "02"},
		{"in none", c("in", id, i64(1000)), ""},
		{"string", c("=", name, &expr.Literal{Value: "n150", Type: arrow.BinaryTypes.String}), "1"},
		{"date", c(">=", d, &expr.Literal{Value: arrow.Date32(10290), Type: arrow.FixedWidthTypes.Date32}), "2"},
		{"exact cast", c(">=", &expr.Call{Fn: "cast", Args: []expr.Expr{qty}, Type: arrow.PrimitiveTypes.Int64}, i64(250)), "2"},
		{"lossy cast keeps", c(">=", &expr.Call{Fn: "cast", Args: []expr.Expr{id}, Type: arrow.PrimitiveTypes.Float64}, &expr.Literal{Value: 250.0, Type: arrow.PrimitiveTypes.Float64}), "all"},
		{"int64 vs double keeps", c(">=", id, &expr.Literal{Value: 250.0, Type: arrow.PrimitiveTypes.Float64}), "012"},
		{"int32 vs double", c(">=", qty, &expr.Literal{Value: 250.5, Type: arrow.PrimitiveTypes.Float64}), "2"},
		{"or", c("or", c("<", id, i64(50)), c(">", id, i64(280))), "02"},
		{"and", c("and", c(">", id, i64(50)), c("<", id, i64(80))), "0"},
		{"null literal", c("=", id, &expr.Literal{Type: arrow.PrimitiveTypes.Int64}), ""},
		{"partition column", c("=", day, i32(1)), "all"},
		{"unknown function", c("like", name, &expr.Literal{Value: "x%", Type: arrow.BinaryTypes.String}), "all"},
		{"col op col", c("<", id, qty), "all"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			keep := RowGroupFilter(tb, []expr.Expr{tc.e})
			got := "all"
			if keep != nil {
				got = ""
				f := tb.Partitions[0].Files[0]
				for rg := range f.RowGroups {
					if keep(f, rg) {
						got += fmt.Sprint(rg)
					}
				}
			}
			if got != tc.want {
				t.Fatalf("%s: kept %q, want %q", tc.e, got, tc.want)
			}
		})
	}
}
