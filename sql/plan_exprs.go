package sql

import (
	"fmt"

	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/planner"
)

// nodeExprs lists the expressions a plan node holds itself (not those of
// its children).
func nodeExprs(p planner.Plan) []expr.Expr {
	var out []expr.Expr
	switch n := p.(type) {
	case *planner.Scan:
		out = append(out, n.Filters...)
	case *planner.Filter:
		out = append(out, n.Cond)
	case *planner.Project:
		out = append(out, n.Exprs...)
	case *planner.Join:
		if n.Cond != nil {
			out = append(out, n.Cond)
		}
	case *planner.MultiJoin:
		out = append(out, n.Conds...)
	case *planner.Aggregate:
		out = append(out, n.GroupBy...)
		for _, a := range n.Aggs {
			if a.Arg != nil {
				out = append(out, a.Arg)
			}
		}
	case *planner.Sort:
		for _, k := range n.Keys {
			out = append(out, k.Expr)
		}
	case *planner.Window:
		out = append(out, n.PartitionBy...)
		for _, k := range n.OrderBy {
			out = append(out, k.Expr)
		}
		for _, f := range n.Funcs {
			if f.Arg != nil {
				out = append(out, f.Arg)
			}
		}
	case *planner.Values:
		for _, r := range n.Rows {
			out = append(out, r...)
		}
	}
	return out
}

// mapNode rebuilds one node with f applied to each of its expressions;
// children are kept.
func mapNode(p planner.Plan, f func(expr.Expr) (expr.Expr, error)) (planner.Plan, error) {
	var err error
	m := func(e expr.Expr) expr.Expr {
		if e == nil || err != nil {
			return e
		}
		var r expr.Expr
		r, err = f(e)
		return r
	}
	ms := func(es []expr.Expr) []expr.Expr {
		out := make([]expr.Expr, len(es))
		for i, e := range es {
			out[i] = m(e)
		}
		return out
	}
	keys := func(ks []planner.SortKey) []planner.SortKey {
		out := make([]planner.SortKey, len(ks))
		for i, k := range ks {
			out[i] = k
			out[i].Expr = m(k.Expr)
		}
		return out
	}
	var out planner.Plan
	switch n := p.(type) {
	case *planner.Scan:
		c := *n
		c.Filters = ms(n.Filters)
		out = &c
	case *planner.Filter:
		out = &planner.Filter{Child: n.Child, Cond: m(n.Cond)}
	case *planner.Project:
		c := *n
		c.Exprs = ms(n.Exprs)
		out = &c
	case *planner.Join:
		c := *n
		c.Cond = m(n.Cond)
		out = &c
	case *planner.MultiJoin:
		out = &planner.MultiJoin{Inputs: n.Inputs, Conds: ms(n.Conds)}
	case *planner.Aggregate:
		c := *n
		c.GroupBy = ms(n.GroupBy)
		c.Aggs = append([]planner.AggCall(nil), n.Aggs...)
		for i := range c.Aggs {
			c.Aggs[i].Arg = m(c.Aggs[i].Arg)
		}
		out = &c
	case *planner.Sort:
		out = &planner.Sort{Child: n.Child, Keys: keys(n.Keys)}
	case *planner.Window:
		c := *n
		c.PartitionBy = ms(n.PartitionBy)
		c.OrderBy = keys(n.OrderBy)
		c.Funcs = append([]planner.WindowCall(nil), n.Funcs...)
		for i := range c.Funcs {
			c.Funcs[i].Arg = m(c.Funcs[i].Arg)
		}
		out = &c
	case *planner.Values:
		c := *n
		c.Rows = make([][]expr.Expr, len(n.Rows))
		for i, r := range n.Rows {
			c.Rows[i] = ms(r)
		}
		out = &c
	case *planner.Limit, *planner.Union, *planner.MaxOneRow:
		out = p
	default:
		return nil, fmt.Errorf("%w: subquery decorrelation does not know plan node %T", exec.ErrInternal, p)
	}
	return out, err
}

// mapPlan rebuilds a whole tree with f applied to every expression.
func mapPlan(p planner.Plan, f func(expr.Expr) (expr.Expr, error)) (planner.Plan, error) {
	ch := p.Children()
	nc := make([]planner.Plan, len(ch))
	for i, c := range ch {
		m, err := mapPlan(c, f)
		if err != nil {
			return nil, err
		}
		nc[i] = m
	}
	n, err := mapNode(p, f)
	if err != nil {
		return nil, err
	}
	return planner.WithChildren(n, nc), nil
}

// walkPlanExprs calls fn for every expression of the tree.
func walkPlanExprs(p planner.Plan, fn func(expr.Expr)) {
	for _, e := range nodeExprs(p) {
		fn(e)
	}
	for _, c := range p.Children() {
		walkPlanExprs(c, fn)
	}
}
