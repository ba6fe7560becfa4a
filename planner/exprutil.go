package planner

import (
	"strconv"
	"strings"

	"github.com/fsql-dev/fsql/exec/expr"
)

// ExprKey identifies a bound expression structurally (columns by
// position, literals by value and type), so equal expressions can be
// matched (GROUP BY against the select list, duplicate aggregates).
// It writes the whole tree into one buffer: building each subtree's key
// as its own string would copy a deep tree's text once per level.
func ExprKey(e expr.Expr) string {
	var sb strings.Builder
	writeKey(&sb, e)
	return sb.String()
}

func writeKey(sb *strings.Builder, e expr.Expr) {
	switch x := e.(type) {
	case *expr.Column:
		sb.WriteByte('#')
		sb.WriteString(strconv.Itoa(x.Index))
	case *expr.Literal:
		sb.WriteString(x.String())
		sb.WriteByte(':')
		sb.WriteString(x.DataType().String())
	case *expr.Call:
		sb.WriteString(x.Fn)
		sb.WriteByte('(')
		for i, a := range x.Args {
			if i > 0 {
				sb.WriteByte(',')
			}
			writeKey(sb, a)
		}
		sb.WriteString("):")
		sb.WriteString(x.DataType().String())
	default:
		sb.WriteString(e.String())
	}
}

func exprKey(e expr.Expr) string { return ExprKey(e) }

// JoinAnd is the conjunction of es as a balanced tree (nil for none): a
// left-deep chain of thousands of conjuncts would make every walk over it
// (folding, keys, printing) cost its depth at every level.
func JoinAnd(es []expr.Expr) expr.Expr {
	switch len(es) {
	case 0:
		return nil
	case 1:
		return es[0]
	}
	mid := (len(es) + 1) / 2 // left-leaning: three terms read ((a AND b) AND c), as written
	return expr.JoinAnd([]expr.Expr{JoinAnd(es[:mid]), JoinAnd(es[mid:])})
}

func joinAnd(es []expr.Expr) expr.Expr { return JoinAnd(es) }

// Balanced combines terms with the associative function fn (and, or) as
// a balanced tree, keeping their order.
func Balanced(fn string, terms []expr.Expr) (expr.Expr, error) {
	switch len(terms) {
	case 0:
		return nil, nil
	case 1:
		return terms[0], nil
	}
	mid := (len(terms) + 1) / 2
	l, err := Balanced(fn, terms[:mid])
	if err != nil {
		return nil, err
	}
	r, err := Balanced(fn, terms[mid:])
	if err != nil {
		return nil, err
	}
	return expr.NewCall(fn, l, r)
}

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
