package sql

import (
	"fmt"

	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/planner"
)

// aggregate flattens an Aggregate: it groups by the domain columns too.
// A scalar aggregate (no GROUP BY) yields one row even over no input, so
// per D value it becomes D LEFT JOIN (the aggregate grouped by D), with
// COUNT reading 0 where D has no group (the COUNT bug).
func (f *flattener) aggregate(n *planner.Aggregate) (flat, error) {
	if n.Rollup {
		return flat{}, errs.New(errs.Unsupported, "ROLLUP in a correlated subquery: compute the rollup in a derived table grouped by the correlated columns too, and join it")
	}
	c, err := f.flatten(n.Child)
	if err != nil {
		return flat{}, err
	}
	agg, err := f.groupedByDomain(n, c)
	if err != nil {
		return flat{}, err
	}
	g, k, na := len(n.GroupBy), f.corr.k(), len(n.Aggs)
	// The grouped aggregate's output is groups, D, aggregates; restore
	// groups, aggregates, D.
	s := agg.Schema()
	if g > 0 || k == 0 {
		exprs, names := passthrough(s, 0, g)
		e2, n2 := passthrough(s, g+k, na)
		proj := f.project(agg, append(exprs, e2...), append(names, n2...), g)
		return flat{plan: proj, width: g + na, nullable: c.nullable}, nil
	}
	// Scalar: D LEFT JOIN agg ON D = agg.D.
	d := f.domain()
	var conds []expr.Expr
	for j, dc := range f.domainCols(0) {
		eq, err := f.b.domainEq(dc, expr.NewColumn(k+j, f.corr.types[j], dc.String()), c.nullable[j])
		if err != nil {
			return flat{}, err
		}
		conds = append(conds, eq...)
	}
	join := &planner.Join{Type: planner.LeftJoin, Left: d, Right: agg, Cond: planner.JoinAnd(conds)}
	var exprs []expr.Expr
	var names []string
	for i, a := range n.Aggs {
		e, err := emptyGroupValue(f.b, a, expr.NewColumn(2*k+i, a.Type, a.Name))
		if err != nil {
			return flat{}, err
		}
		exprs = append(exprs, e)
		names = append(names, a.Name)
	}
	return flat{plan: f.project(join, exprs, names, 0), width: na, nullable: allNullable(k)}, nil
}

// groupedByDomain is n over the flattened input c, grouped by n's keys and
// then the domain columns.
func (f *flattener) groupedByDomain(n *planner.Aggregate, c flat) (*planner.Aggregate, error) {
	agg := &planner.Aggregate{Child: c.plan}
	for i, e := range n.GroupBy {
		r, err := f.rewrite(e, c.width)
		if err != nil {
			return nil, err
		}
		agg.GroupBy = append(agg.GroupBy, r)
		agg.Names = append(agg.Names, n.Names[i])
	}
	for j, d := range f.domainCols(c.width) {
		agg.GroupBy = append(agg.GroupBy, d)
		agg.Names = append(agg.Names, fmt.Sprintf("__domain%d", j))
	}
	for _, a := range n.Aggs {
		r, err := f.rewrite(a.Arg, c.width)
		if err != nil {
			return nil, err
		}
		a.Arg = r
		agg.Aggs = append(agg.Aggs, a)
	}
	return agg, nil
}

// emptyGroupValue is v (an aggregate's column after a left join) with the
// aggregate's value over no rows where the join found no group: 0 for
// COUNT, NULL (as v already is) for the others.
func emptyGroupValue(b *Binder, a planner.AggCall, v expr.Expr) (expr.Expr, error) {
	if a.Fn != "count" && a.Fn != "count_star" {
		return v, nil
	}
	return b.call("coalesce", v, expr.NewLiteral(int64(0), a.Type))
}
