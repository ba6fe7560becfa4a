package planner

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/exec/expr"
)

// TestStrictFns checks the claim strictFns makes for push_down_filters:
// each listed function returns NULL when any one argument is NULL. A
// function added to the list needs a sample call here.
func TestStrictFns(t *testing.T) {
	i64 := func(v int64) expr.Expr { return expr.NewLiteral(v, arrow.PrimitiveTypes.Int64) }
	f64 := func(v float64) expr.Expr { return expr.NewLiteral(v, arrow.PrimitiveTypes.Float64) }
	str := func(v string) expr.Expr { return expr.NewLiteral(v, arrow.BinaryTypes.String) }
	date := expr.NewLiteral(arrow.Date32(10957), arrow.FixedWidthTypes.Date32)
	samples := map[string][]expr.Expr{
		"=": {i64(1), i64(1)}, "<>": {i64(1), i64(2)}, "<": {i64(1), i64(2)},
		"<=": {i64(1), i64(2)}, ">": {i64(2), i64(1)}, ">=": {i64(2), i64(1)},
		"+": {i64(1), i64(2)}, "-": {i64(1), i64(2)}, "*": {i64(1), i64(2)},
		"/": {i64(1), i64(2)}, "%": {i64(3), i64(2)}, "neg": {i64(1)},
		"like": {str("ab"), str("a%")}, "cast": {str("12")},
		"substr": {str("abc"), i64(1), i64(2)},
		"upper":  {str("a")}, "lower": {str("A")}, "trim": {str(" a ")},
		"ltrim": {str(" a")}, "rtrim": {str("a ")},
		"length": {str("abc")}, "concat": {str("a"), str("b"), str("c")},
		"year": {date}, "month": {date}, "day": {date},
		"date_add": {date, i64(3)}, "date_sub": {date, i64(3)},
		"date_add_month": {date, i64(3)}, "date_sub_month": {date, i64(3)},
		"date_add_year": {date, i64(3)}, "date_sub_year": {date, i64(3)},
		"round": {f64(2.5)}, "abs": {i64(-1)}, "floor": {f64(2.5)}, "ceil": {f64(2.5)},
	}
	build := func(fn string, args []expr.Expr) (expr.Expr, error) {
		if fn == "cast" {
			return expr.NewCast(args[0], arrow.PrimitiveTypes.Int64)
		}
		return expr.NewCall(fn, args...)
	}
	for fn := range strictFns {
		args, ok := samples[fn]
		if !ok {
			t.Errorf("%s is in strictFns but has no sample call here", fn)
			continue
		}
		for i := range args {
			with := append([]expr.Expr{}, args...)
			with[i] = expr.Null(args[i].DataType())
			e, err := build(fn, with)
			if err != nil {
				t.Errorf("%s with argument %d NULL: %v", fn, i+1, err)
				continue
			}
			f, err := expr.ConstantFold(e, memory.DefaultAllocator)
			if err != nil {
				t.Errorf("%s: %v", e, err)
				continue
			}
			if lit, ok := f.(*expr.Literal); !ok || lit.Value != nil {
				t.Errorf("%s is %s, want NULL: %s is not strict", e, f, fn)
			}
		}
	}
}
