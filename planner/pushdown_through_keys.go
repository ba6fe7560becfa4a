package planner

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fsql-dev/fsql/exec/expr"
)

// throughJoinKeys derives, for a left, semi or anti join, filters on the
// right input from the WHERE conjuncts on the left input (left, over the
// left's columns) and the ON clause's equalities between a left and a
// right column (cond, over both). A left row that survives p(L.a) can only
// match right rows with R.b = L.a, that is rows where p(R.b) holds too; a
// right row where p(R.b) is false or NULL matches no surviving left row,
// so dropping it early changes no answer: an outer join adds NULLs for
// the same left rows, and semi and anti joins keep the same ones.
// TPC-DS q78 filters `ss_sold_year = 2000` on its store sales and left
// joins web and catalog sales on `ws_sold_year = ss_sold_year`: derived,
// the filter reaches those aggregates' date joins (and their dynamic
// pruning) instead of their aggregating every year.
//
// Only where values that compare equal behave the same under p: both key
// columns of one integer, date, decimal or boolean type (no strings,
// whose collations make 'a' = 'A', no floats, where -0 = 0), and p a
// comparison, IN list or NULL test of that one column against literals,
// with AND/OR/NOT over such tests, so p cannot fail on a right row's
// value either. Null-aware anti and mark joins are left alone: a right
// row with a NULL key changes their answers, and p would drop it.
func throughJoinKeys(typ JoinType, left []expr.Expr, cond expr.Expr, lw int) []expr.Expr {
	if typ != LeftJoin && typ != SemiJoin && typ != AntiJoin || len(left) == 0 || cond == nil {
		return nil
	}
	// The right column each left column equals, by the ON clause.
	equal := map[int][]*expr.Column{}
	for _, c := range expr.SplitAnd(cond) {
		call, ok := c.(*expr.Call)
		if !ok || call.Fn != "=" || len(call.Args) != 2 {
			continue
		}
		a, okA := call.Args[0].(*expr.Column)
		b, okB := call.Args[1].(*expr.Column)
		if !okA || !okB {
			continue
		}
		if a.Index >= lw {
			a, b = b, a
		}
		if a.Index >= lw || b.Index < lw || !keyTypeBehavesByValue(a.Type) || !arrow.TypeEqual(a.Type, b.Type) {
			continue
		}
		equal[a.Index] = append(equal[a.Index], &expr.Column{Index: b.Index - lw, Type: b.Type, Name: b.Name})
	}
	if len(equal) == 0 {
		return nil
	}
	var out []expr.Expr
	for _, p := range left {
		cols := expr.Columns(p)
		if len(cols) == 0 || !valueTest(p, cols[0]) {
			continue
		}
		for _, rc := range equal[cols[0]] {
			d, err := expr.Rewrite(p, func(x expr.Expr) (expr.Expr, error) {
				if c, ok := x.(*expr.Column); ok && c.Index == cols[0] {
					return rc, nil
				}
				return x, nil
			})
			if err == nil {
				out = append(out, d)
			}
		}
	}
	return out
}

// keyTypeBehavesByValue reports whether two values of type t that compare
// equal are the same value to every test valueTest accepts.
func keyTypeBehavesByValue(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.DATE32, arrow.DECIMAL128, arrow.BOOL:
		return true
	}
	return false
}

// valueTest reports whether e tests column col alone against literals:
// comparisons, IN, IS [NOT] NULL and AND/OR/NOT over them.
func valueTest(e expr.Expr, col int) bool {
	switch n := e.(type) {
	case *expr.Column:
		return n.Index == col
	case *expr.Literal:
		return true
	case *expr.Call:
		switch n.Fn {
		case "=", "<>", "!=", "<", "<=", ">", ">=", "in", "isnull", "isnotnull", "and", "or", "not":
		default:
			return false
		}
		for _, a := range n.Args {
			if !valueTest(a, col) {
				return false
			}
		}
		return true
	}
	return false
}
