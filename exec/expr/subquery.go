package expr

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fsql-dev/fsql/errs"
)

// A decorrelated scalar subquery yields, per outer row, the number of rows
// the subquery produced and one of their values; this function turns the
// pair into the subquery's value. It fails when the count is above one
// (MySQL: "Subquery returns more than 1 row") and, being a function that
// may fail, runs lazily: under CASE, COALESCE, AND and OR only for the
// rows that need the value, as MySQL evaluates a subquery only there.
var subqueryBinders = map[string]binder{"scalar_subquery": bindScalarSubquery}

// bindScalarSubquery binds scalar_subquery(count, value).
func bindScalarSubquery(fn string, args []Expr) (Expr, error) {
	if len(args) != 2 || !isInt(args[0].DataType()) {
		return nil, argErr(fn, args, "want scalar_subquery(row count, value)")
	}
	return newCall(fn, args[1].DataType(), arrayKernel(scalarSubqueryKernel), args...), nil
}

func scalarSubqueryKernel(_ *Context, args []arrow.Array, n int) (arrow.Array, error) {
	counts, ok := args[0].(*array.Int64)
	if !ok {
		return nil, fmt.Errorf("%w: scalar_subquery count is %s, want int64", ErrInternal, args[0].DataType())
	}
	for i := 0; i < n; i++ {
		if counts.IsValid(i) && counts.Value(i) > 1 {
			return nil, errs.New(errs.ErSubqueryNo1Row, "a scalar subquery returned more than one row (%d rows for one outer row; MySQL: Subquery returns more than 1 row)", counts.Value(i))
		}
	}
	args[1].Retain()
	return args[1], nil
}
