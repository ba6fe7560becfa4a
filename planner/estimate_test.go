package planner

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fsql-dev/fsql/exec/expr"
)

// TestSelectivity: the null-safe <=> is as selective as =, so a filter or
// join on it is estimated like one (it keeps at most the NULL rows more),
// and ranges less than either.
func TestSelectivity(t *testing.T) {
	col := expr.NewColumn(0, arrow.PrimitiveTypes.Int64, "a")
	one := expr.NewLiteral(int64(1), arrow.PrimitiveTypes.Int64)
	call := func(fn string) expr.Expr {
		e, err := expr.NewCall(fn, col, one)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	eq, nullSafe, less := selectivity([]expr.Expr{call("=")}), selectivity([]expr.Expr{call("<=>")}), selectivity([]expr.Expr{call("<")})
	if nullSafe != eq {
		t.Errorf("selectivity of <=> is %v, of = %v", nullSafe, eq)
	}
	if less <= eq {
		t.Errorf("selectivity of < (%v) is not above that of = (%v)", less, eq)
	}
}
