package exec

import (
	"github.com/fsql-dev/fsql/exec/expr"
)

// SortKey is one ORDER BY item. The planner passes NullsFirst = !Desc, which
// is MySQL's order (NULL is the smallest value).
type SortKey struct {
	Expr       expr.Expr
	Desc       bool
	NullsFirst bool
}
