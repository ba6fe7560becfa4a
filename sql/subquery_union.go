package sql

import (
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/planner"
)

// A subquery over a UNION [ALL] whose arms differ in correlation, such as
//
//	x IN (SELECT s_hours FROM store WHERE s_market_id <=> outer.ss_hdemo_sk
//	      UNION SELECT t_time_id FROM time_dim)
//
// decorrelates into D ⋈ (A ∪ B) = (D ⋈ A) ∪ (D × B): the uncorrelated arm
// B is crossed with every domain value, here 7,201 hdemo keys by 86,400
// times, 622M rows grouped before the semi join (a statement DuckDB
// answers at once ran past 90 s). A set's membership is the disjunction
// of its arms' — x IN (A ∪ B) is x IN A OR x IN B, and EXISTS likewise —
// exactly in three-valued logic too: TRUE when some arm has x, else NULL
// when some arm compares x to NULL, else FALSE; duplicates and DISTINCT
// change no membership. So each arm is joined into the host on its own:
// the uncorrelated one as a mark join on x alone, the correlated one
// decorrelated against its own (small) domain.

// mixedUnionArms returns the arms of subquery q when it is a UNION or
// UNION ALL (under the DISTINCT of a UNION and an ORDER BY without LIMIT,
// which change no membership) with at least one arm that references the
// host (one level out) and one that does not. Arms that all reference it,
// or none, decorrelate without a cross product and are left whole.
func mixedUnionArms(q planner.Plan) ([]planner.Plan, bool) {
	for {
		switch n := q.(type) {
		case *planner.Sort:
			q = n.Child
			continue
		case *planner.Aggregate:
			if !isDistinct(n) {
				return nil, false
			}
			q = n.Child
			continue
		}
		break
	}
	u, ok := q.(*planner.Union)
	if !ok {
		return nil, false
	}
	var dependent, independent bool
	for _, in := range u.Inputs {
		if refsHost(in) {
			dependent = true
		} else {
			independent = true
		}
	}
	return u.Inputs, dependent && independent
}

// isDistinct reports whether a is a DISTINCT: grouped by each of its
// input's columns in order, with no aggregate.
func isDistinct(a *planner.Aggregate) bool {
	if len(a.Aggs) > 0 || a.Rollup || len(a.GroupBy) != len(a.Child.Schema()) {
		return false
	}
	for i, g := range a.GroupBy {
		if c, ok := g.(*expr.Column); !ok || c.Index != i {
			return false
		}
	}
	return true
}

// refsHost reports whether p's subtree references the query one level
// out.
func refsHost(p planner.Plan) bool {
	found := false
	walkPlanExprs(p, func(e expr.Expr) {
		if !found && refsDepth(e, 1) {
			found = true
		}
	})
	return found
}

// inUnionArms is `l IN (arm1 ∪ arm2 ∪ ...)` as the OR of each arm's IN
// over host h. A constant l becomes a host column first, so every arm
// compares the same column.
func (b *Binder) inUnionArms(h *subqueryHost, l expr.Expr, arms []planner.Plan) (expr.Expr, error) {
	if len(expr.Columns(l)) == 0 {
		h.plan, l = materialize(h.plan, l)
	}
	var v expr.Expr
	for _, arm := range arms {
		a, err := b.inSubqueryValue(h, l, arm)
		if err != nil {
			return nil, err
		}
		if v == nil {
			v = a
		} else if v, err = b.call("or", v, a); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// existsUnionArms is `EXISTS (arm1 ∪ arm2 ∪ ...)` as the OR of each
// arm's EXISTS over host h.
func (b *Binder) existsUnionArms(h *subqueryHost, arms []planner.Plan) (expr.Expr, error) {
	var v expr.Expr
	for _, arm := range arms {
		a, err := b.existsValue(h, arm)
		if err != nil {
			return nil, err
		}
		if v == nil {
			v = a
		} else if v, err = b.call("or", v, a); err != nil {
			return nil, err
		}
	}
	return v, nil
}
