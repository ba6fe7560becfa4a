package planner

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fsql-dev/fsql/exec/expr"
)

// foldEmpty replaces relations that can return no row by an empty Values
// and folds the emptiness upwards through the operators it decides: a
// filter that is always false or NULL, a LIMIT 0, and every operator over
// an empty input that returns no row for it (projections, filters, sorts,
// windows, grouped aggregates, inner and semi joins, the preserved side of
// outer and anti joins). A union drops its empty inputs. A left join
// against an empty right side keeps its left rows with NULLs; an anti join
// against an empty right side is its left side; a mark join against one
// marks every row FALSE (x IN () is FALSE even for a NULL x).
//
// It saves whole pipelines: TPC-DS q4 and q11 filter a CTE of a three-way
// UNION ALL by a constant column, so pushdown turns two of each
// reference's three branches into Filter(FALSE) over a scan, a join and an
// aggregate of a fact table, which ran in full before this rule.
//
// A global aggregate (no GROUP BY) over an empty input still returns one
// row, and a ROLLUP its grand total: both are left alone.
type foldEmpty struct{}

func (foldEmpty) Name() string { return "fold_empty" }

func (r foldEmpty) Apply(p Plan, ctx *Context) (Plan, bool, error) {
	return bottomUp(p, ctx, r, foldEmptyAt)
}

// emptyOf is the empty relation with p's schema.
func emptyOf(p Plan) *Values {
	return &Values{Cols: append(Schema{}, p.Schema()...)}
}

// isEmpty reports whether p is known to return no row.
func isEmpty(p Plan) bool {
	v, ok := p.(*Values)
	return ok && len(v.Rows) == 0
}

// neverTrue reports whether a condition can be TRUE for no row: the
// constant FALSE or NULL, an AND with such a conjunct, an OR of such
// disjuncts. (Folding keeps FALSE AND x when x reads a column: it is
// the filter above an aggregate in q4 once a constant column met the
// pushed predicate.)
func neverTrue(e expr.Expr) bool {
	switch x := e.(type) {
	case *expr.Literal:
		return x.Value == nil || x.Value == false
	case *expr.Call:
		switch x.Fn {
		case "and":
			for _, a := range x.Args {
				if neverTrue(a) {
					return true
				}
			}
		case "or":
			for _, a := range x.Args {
				if !neverTrue(a) {
					return false
				}
			}
			return len(x.Args) > 0
		}
	}
	return false
}

func foldEmptyAt(p Plan) (Plan, bool, error) {
	switch n := p.(type) {
	case *Scan:
		for _, f := range n.Filters {
			if neverTrue(f) {
				return emptyOf(n), true, nil
			}
		}
	case *Filter:
		if isEmpty(n.Child) || neverTrue(n.Cond) {
			return emptyOf(n), true, nil
		}
	case *Limit:
		if isEmpty(n.Child) || n.N == 0 {
			return emptyOf(n), true, nil
		}
	case *Project, *Sort, *Window, *MaxOneRow:
		if isEmpty(p.Children()[0]) {
			return emptyOf(p), true, nil
		}
	case *Aggregate:
		if isEmpty(n.Child) && len(n.GroupBy) > 0 && !n.Rollup {
			return emptyOf(n), true, nil
		}
	case *MultiJoin:
		for _, in := range n.Inputs {
			if isEmpty(in) {
				return emptyOf(n), true, nil
			}
		}
	case *Join:
		return foldEmptyJoin(n)
	case *Union:
		return foldEmptyUnion(n)
	}
	return p, false, nil
}

func foldEmptyJoin(j *Join) (Plan, bool, error) {
	left, right := isEmpty(j.Left), isEmpty(j.Right)
	if left || (right && (j.Type == InnerJoin || j.Type == SemiJoin)) {
		return emptyOf(j), true, nil
	}
	if !right {
		return j, false, nil
	}
	switch j.Type {
	case AntiJoin, NullAwareAntiJoin:
		// NOT IN () and NOT EXISTS () are TRUE for every row, NULLs too.
		return j.Left, true, nil
	case LeftJoin:
		var extra []expr.Expr
		for _, c := range j.Right.Schema() {
			extra = append(extra, expr.Null(c.Type))
		}
		return keepLeft(j, extra), true, nil
	case MarkJoin:
		return keepLeft(j, []expr.Expr{expr.NewLiteral(false, arrow.FixedWidthTypes.Boolean)}), true, nil
	}
	return j, false, nil
}

// keepLeft projects j's left input followed by the constant columns extra,
// with j's output schema.
func keepLeft(j *Join, extra []expr.Expr) Plan {
	s := j.Schema()
	ls := j.Left.Schema()
	exprs := make([]expr.Expr, 0, len(s))
	for i, c := range ls {
		exprs = append(exprs, &expr.Column{Index: i, Type: c.Type, Name: c.Name})
	}
	exprs = append(exprs, extra...)
	return projectAs(j.Left, exprs, s)
}

// projectAs is a projection of exprs over child with the names and
// qualifiers of schema s.
func projectAs(child Plan, exprs []expr.Expr, s Schema) *Project {
	p := &Project{Child: child, Exprs: exprs, Names: make([]string, len(s)), Tables: make([]string, len(s))}
	for i, c := range s {
		p.Names[i], p.Tables[i] = c.Name, c.Table
	}
	return p
}

func foldEmptyUnion(u *Union) (Plan, bool, error) {
	var keep []Plan
	for _, in := range u.Inputs {
		if !isEmpty(in) {
			keep = append(keep, in)
		}
	}
	switch {
	case len(keep) == len(u.Inputs):
		return u, false, nil
	case len(keep) == 0:
		return emptyOf(u), true, nil
	case keep[0] == u.Inputs[0]:
		// The first input names the union's columns: it is still first.
		if len(keep) == 1 {
			return renamed(keep[0], u.Schema()), true, nil
		}
		return &Union{Inputs: keep}, true, nil
	}
	// The first input is gone: keep its names above the rest.
	s := u.Schema()
	var rest Plan = keep[0]
	if len(keep) > 1 {
		rest = &Union{Inputs: keep}
	}
	return renamed(rest, s), true, nil
}

// renamed is p with the column names (and no qualifiers) of s: a union's
// output has names but no table qualifiers.
func renamed(p Plan, s Schema) Plan {
	ps := p.Schema()
	exprs := make([]expr.Expr, len(ps))
	for i, c := range ps {
		exprs[i] = &expr.Column{Index: i, Type: c.Type, Name: c.Name}
	}
	return projectAs(p, exprs, s)
}
