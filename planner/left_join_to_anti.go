package planner

import (
	"github.com/fsql-dev/fsql/exec/expr"
)

// leftJoinToAnti turns `L LEFT JOIN R ON c WHERE R.k IS NULL` into the
// anti join it is, when R.k cannot be NULL in a row where c matched: a
// column c rejects NULLs of (a key of an `=` conjunct, or of any conjunct
// that cannot be TRUE when R.k is NULL, null_rejecting.go) or a column R
// never holds NULL in (a NOT NULL table column, traced by neverNull). The
// left join's output is then its matched rows, where R.k is not NULL, and
// its unmatched left rows with NULL in every R column; the IS NULL keeps
// exactly the latter, which is what L ANTI JOIN R ON c outputs, with the R
// columns all NULL. So the rule is
//
//	Filter(R.k IS NULL AND rest, L LEFT JOIN R ON c)
//	  = Filter(rest, Project(L's columns, NULL for each R column, L ANTI JOIN R ON c))
//
// whatever reads R's columns above: they are NULL in every row that
// passes, and the projection says so (folding then removes what the
// NULLs decide). The anti join keeps every conjunct of c, non-equi ones
// included, in its condition: a left row is kept when no right row
// satisfies all of c, as the left join would have given it NULLs.
//
// Not converted: a null-safe key (`l.a <=> r.k` matches a NULL r.k, so a
// matched row can pass the IS NULL), an IS NULL on a nullable column that
// c does not test, an IS NULL on an expression (NULL for some matched
// rows). TPC-DS q78 writes three of these (`LEFT JOIN store_returns ...
// WHERE sr_ticket_number IS NULL` and its web and catalog copies): the
// anti join neither copies the matched rows out nor filters them after.
type leftJoinToAnti struct{}

func (leftJoinToAnti) Name() string { return "left_join_to_anti" }

func (r leftJoinToAnti) Apply(p Plan, ctx *Context) (Plan, bool, error) {
	return bottomUp(p, ctx, r, func(p Plan) (Plan, bool, error) {
		if np := antiFromLeftJoin(p); np != nil {
			return np, true, nil
		}
		return p, false, nil
	})
}

// antiFromLeftJoin returns the anti join form of filter p over a left
// join, or nil when p is no such filter.
func antiFromLeftJoin(p Plan) Plan {
	f, ok := p.(*Filter)
	if !ok {
		return nil
	}
	j, ok := f.Child.(*Join)
	if !ok || j.Type != LeftJoin {
		return nil
	}
	lw, rw := width(j.Left), width(j.Right)
	conjuncts := expr.SplitAnd(f.Cond)
	at := -1
	for i, c := range conjuncts {
		if k, ok := isNullOfColumn(c); ok && k >= lw && k < lw+rw && matchedNeverNull(j, k, lw) {
			at = i
			break
		}
	}
	if at < 0 {
		return nil
	}
	anti := &Join{Type: AntiJoin, Left: j.Left, Right: j.Right, Cond: j.Cond}
	exprs := make([]expr.Expr, 0, lw+rw)
	for i, c := range j.Left.Schema() {
		exprs = append(exprs, expr.NewColumn(i, c.Type, c.Name))
	}
	for _, c := range j.Right.Schema() {
		exprs = append(exprs, expr.Null(c.Type))
	}
	rest := append(append([]expr.Expr{}, conjuncts[:at]...), conjuncts[at+1:]...)
	return wrapFilter(projectAs(anti, exprs, j.Schema()), rest)
}

// isNullOfColumn reports whether e is `column IS NULL`, and which column.
func isNullOfColumn(e expr.Expr) (int, bool) {
	call, ok := e.(*expr.Call)
	if !ok || call.Fn != "isnull" || len(call.Args) != 1 {
		return 0, false
	}
	c, ok := call.Args[0].(*expr.Column)
	if !ok {
		return 0, false
	}
	return c.Index, true
}

// matchedNeverNull reports whether join column k (of j's output, a right
// column) is not NULL in any row where j's condition matched.
func matchedNeverNull(j *Join, k, lw int) bool {
	if j.Cond != nil && nullRejecting(j.Cond, k, k+1) {
		return true
	}
	return neverNull(j.Right, k-lw)
}

// neverNull reports whether p's output column col holds no NULL: it is a
// copy of a NOT NULL table column (a Parquet column every file of the
// table declares required; partition columns and in-memory tables'
// columns are nullable), or a filter on the way (a scan's pushed filters
// too) rejects its NULLs, or it is a non-NULL constant. Whatever it does not follow is taken to be
// nullable.
func neverNull(p Plan, col int) bool {
	switch n := p.(type) {
	case *Scan:
		for _, f := range n.Filters {
			if nullRejecting(f, col, col+1) {
				return true
			}
		}
		return !n.Table.Schema.Field(n.Columns[col]).Nullable
	case *Filter:
		return nullRejecting(n.Cond, col, col+1) || neverNull(n.Child, col)
	case *Project:
		switch e := n.Exprs[col].(type) {
		case *expr.Column:
			return neverNull(n.Child, e.Index)
		case *expr.Literal:
			return e.Value != nil
		}
	case *Sort:
		return neverNull(n.Child, col)
	case *Limit:
		return neverNull(n.Child, col)
	case *MaxOneRow:
		return neverNull(n.Child, col)
	case *Join:
		lw := width(n.Left)
		switch {
		case col < lw:
			return neverNull(n.Left, col)
		case n.Type == InnerJoin:
			return n.Cond != nil && nullRejecting(n.Cond, col, col+1) || neverNull(n.Right, col-lw)
		}
	case *MultiJoin:
		for _, c := range n.Conds {
			if nullRejecting(c, col, col+1) {
				return true
			}
		}
		off := 0
		for _, in := range n.Inputs {
			w := width(in)
			if col < off+w {
				return neverNull(in, col-off)
			}
			off += w
		}
	case *Aggregate:
		if !n.Rollup && col < len(n.GroupBy) {
			if c, ok := n.GroupBy[col].(*expr.Column); ok {
				return neverNull(n.Child, c.Index)
			}
		}
	case *Union:
		for _, in := range n.Inputs {
			if !neverNull(in, col) {
				return false
			}
		}
		return len(n.Inputs) > 0
	}
	return false
}
