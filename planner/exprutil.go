package planner

import (
	"strconv"
	"strings"

	"github.com/fsql-dev/fsql/exec/expr"
)

// ExprKey identifies a bound expression structurally (columns by
// position, literals by value and type), so equal expressions can be
// matched (GROUP BY against the select list, duplicate aggregates).
func ExprKey(e expr.Expr) string {
	switch x := e.(type) {
	case *expr.Column:
		return "#" + strconv.Itoa(x.Index)
	case *expr.Literal:
		return x.String() + ":" + x.DataType().String()
	case *expr.Call:
		var sb strings.Builder
		sb.WriteString(x.Fn)
		sb.WriteString("(")
		for i, a := range x.Args {
			if i > 0 {
				sb.WriteString(",")
			}
			sb.WriteString(ExprKey(a))
		}
		sb.WriteString("):")
		sb.WriteString(x.DataType().String())
		return sb.String()
	}
	return e.String()
}

func exprKey(e expr.Expr) string { return ExprKey(e) }

// remap rewrites the column indexes of e with m; m returns -1 for a column
// that does not exist in the target, which must not happen.
func remap(e expr.Expr, m func(int) int) expr.Expr {
	out, err := expr.Rewrite(e, func(x expr.Expr) (expr.Expr, error) {
		if c, ok := x.(*expr.Column); ok {
			return expr.NewColumn(m(c.Index), c.Type, c.Name), nil
		}
		return x, nil
	})
	if err != nil {
		// Rewrite only fails when NewCall rejects the rebuilt call, which
		// cannot happen when only column indexes change.
		panic(err)
	}
	return out
}

// shift moves every column index of e by delta.
func shift(e expr.Expr, delta int) expr.Expr {
	if delta == 0 {
		return e
	}
	return remap(e, func(i int) int { return i + delta })
}

// substitute replaces each column i of e by exprs[i].
func substitute(e expr.Expr, exprs []expr.Expr) (expr.Expr, error) {
	return expr.Rewrite(e, func(x expr.Expr) (expr.Expr, error) {
		if c, ok := x.(*expr.Column); ok {
			return exprs[c.Index], nil
		}
		return x, nil
	})
}

// colRange reports whether every column of e lies in [lo, hi).
func colRange(e expr.Expr, lo, hi int) bool {
	for _, c := range expr.Columns(e) {
		if c < lo || c >= hi {
			return false
		}
	}
	return true
}
