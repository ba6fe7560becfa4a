package planner

import (
	"github.com/fsql-dev/fsql/exec/expr"
)

// pushDownFilters moves filter conjuncts as close to the scans as they can
// go (after factoring conjuncts shared by every branch of an OR out of
// it, see factorOr): through projections (by substitution), into the inputs of inner
// joins they reference alone, into the non-preserved side of outer joins
// only from the ON clause, below aggregates when they only test group
// keys, into every branch of a UNION ALL, and finally into the scans,
// where static partition pruning and row-group skipping read them. A WHERE
// conjunct that rejects NULLs from an outer join's optional side turns the
// join into an inner join. A WHERE conjunct on a left, semi or anti join's
// left input that tests a join key is copied onto the right input's key
// (pushdown_through_keys.go).
type pushDownFilters struct{}

func (pushDownFilters) Name() string { return "push_down_filters" }

func (pushDownFilters) Apply(p Plan, ctx *Context) (Plan, bool, error) {
	np, err := pusher{ctx}.push(p, nil)
	if err != nil {
		return nil, false, err
	}
	return np, !samePlan(p, np), nil
}

// push returns p with preds (conjuncts over p's output) applied as low as
// possible.
// pusher carries the query's context down the walk: a pass rebuilds every
// expression it moves, which takes long on big plans.
type pusher struct{ ctx *Context }

func (ps pusher) push(p Plan, preds []expr.Expr) (Plan, error) {
	if err := ps.ctx.Err(); err != nil {
		return nil, err
	}
	switch n := p.(type) {
	case *Filter:
		all := append([]expr.Expr{}, preds...)
		for _, c := range expr.SplitAnd(n.Cond) {
			all = append(all, factorOr(c)...)
		}
		return ps.push(n.Child, dedupConjuncts(all))
	case *Scan:
		if len(preds) == 0 {
			return n, nil
		}
		all := dedupConjuncts(append(append([]expr.Expr{}, n.Filters...), preds...))
		if len(all) == len(n.Filters) {
			return n, nil // every predicate is one the scan already has
		}
		c := *n
		c.Filters = all
		c.Pruned = false
		return &c, nil
	case *Project:
		// Every predicate goes through: projections are deterministic.
		var down []expr.Expr
		for _, pr := range preds {
			s, err := substitute(pr, n.Exprs)
			if err != nil {
				return nil, err
			}
			down = append(down, s)
		}
		child, err := ps.push(n.Child, down)
		if err != nil {
			return nil, err
		}
		c := *n
		c.Child = child
		return &c, nil
	case *MultiJoin:
		return ps.pushMultiJoin(n, preds)
	case *Join:
		return ps.pushJoin(n, preds)
	case *Aggregate:
		var down, keep []expr.Expr
		k := len(n.GroupBy)
		for _, pr := range preds {
			if !n.Rollup && colRange(pr, 0, k) && len(expr.Columns(pr)) > 0 {
				s, err := substitute(pr, n.GroupBy)
				if err != nil {
					return nil, err
				}
				down = append(down, s)
			} else {
				keep = append(keep, pr)
			}
		}
		child, err := ps.push(n.Child, down)
		if err != nil {
			return nil, err
		}
		c := *n
		c.Child = child
		return wrapFilter(&c, keep), nil
	case *Union:
		c := &Union{}
		for _, in := range n.Inputs {
			ni, err := ps.push(in, preds)
			if err != nil {
				return nil, err
			}
			c.Inputs = append(c.Inputs, ni)
		}
		return c, nil
	}
	// Sort, Limit, Window, Values, MaxOneRow: filters stay above; push
	// what their inputs hold.
	ch := p.Children()
	newCh := make([]Plan, len(ch))
	for i, c := range ch {
		nc, err := ps.push(c, nil)
		if err != nil {
			return nil, err
		}
		newCh[i] = nc
	}
	return wrapFilter(withChildren(p, newCh), preds), nil
}

func wrapFilter(p Plan, preds []expr.Expr) Plan {
	if len(preds) == 0 {
		return p
	}
	return &Filter{Child: p, Cond: joinAnd(preds)}
}

func (ps pusher) pushMultiJoin(n *MultiJoin, preds []expr.Expr) (Plan, error) {
	inputs, all := spliceJoins(n.Inputs, append(append([]expr.Expr{}, n.Conds...), preds...))
	n = &MultiJoin{Inputs: inputs}
	offsets := make([]int, len(n.Inputs)+1)
	for i, in := range n.Inputs {
		offsets[i+1] = offsets[i] + width(in)
	}
	perInput := make([][]expr.Expr, len(n.Inputs))
	var conds, keep []expr.Expr
	for _, pr := range all {
		cols := expr.Columns(pr)
		if len(cols) == 0 {
			keep = append(keep, pr)
			continue
		}
		owner := -1
		for i := range n.Inputs {
			if colRange(pr, offsets[i], offsets[i+1]) {
				owner = i
			}
		}
		if owner >= 0 {
			perInput[owner] = append(perInput[owner], shift(pr, -offsets[owner]))
			continue
		}
		conds = append(conds, pr)
		for i := range n.Inputs {
			for _, d := range impliedByOr(pr, offsets[i], offsets[i+1]) {
				perInput[i] = append(perInput[i], shift(d, -offsets[i]))
			}
		}
	}
	out := &MultiJoin{Conds: conds}
	for i, in := range n.Inputs {
		ni, err := ps.push(in, perInput[i])
		if err != nil {
			return nil, err
		}
		out.Inputs = append(out.Inputs, ni)
	}
	return wrapFilter(out, keep), nil
}

func (ps pusher) pushJoin(n *Join, preds []expr.Expr) (Plan, error) {
	lw := width(n.Left)
	rw := width(n.Right)
	var left, right, conds, keep []expr.Expr
	typ := n.Type
	// WHERE conjuncts.
	for _, pr := range preds {
		switch {
		case len(expr.Columns(pr)) == 0:
			keep = append(keep, pr)
		case colRange(pr, 0, lw):
			left = append(left, pr)
		case typ == InnerJoin && colRange(pr, lw, lw+rw):
			right = append(right, shift(pr, -lw))
		case typ == LeftJoin && nullRejecting(pr, lw, lw+rw):
			// A WHERE that rejects NULLs of the optional side removes
			// exactly the rows the outer join added: it is an inner join.
			typ = InnerJoin
			if colRange(pr, lw, lw+rw) {
				right = append(right, shift(pr, -lw))
			} else {
				conds = append(conds, pr)
			}
		case typ == InnerJoin:
			conds = append(conds, pr)
		default:
			keep = append(keep, pr)
		}
	}
	// ON conjuncts: for an inner join any side; for outer, semi and anti
	// joins only those on the non-preserved (right) side may go down.
	for _, c := range expr.SplitAnd(n.Cond) {
		switch {
		case c == nil:
		case typ == InnerJoin && colRange(c, 0, lw) && len(expr.Columns(c)) > 0:
			left = append(left, c)
		case colRange(c, lw, lw+rw) && len(expr.Columns(c)) > 0:
			right = append(right, shift(c, -lw))
		default:
			conds = append(conds, c)
		}
	}
	right = append(right, throughJoinKeys(typ, left, n.Cond, lw)...)
	// What a condition over both sides implies on one side alone
	// (or_implied.go): both sides of an inner join; only the optional
	// side of a left, semi or anti join, whose rows the condition only
	// decides matches for. Not null-aware anti or mark joins, where a
	// NULL condition on a right row changes the answer.
	for _, c := range conds {
		if typ == InnerJoin {
			left = append(left, impliedByOr(c, 0, lw)...)
		}
		if typ == InnerJoin || typ == LeftJoin || typ == SemiJoin || typ == AntiJoin {
			for _, d := range impliedByOr(c, lw, lw+rw) {
				right = append(right, shift(d, -lw))
			}
		}
	}
	l, err := ps.push(n.Left, left)
	if err != nil {
		return nil, err
	}
	r, err := ps.push(n.Right, right)
	if err != nil {
		return nil, err
	}
	return wrapFilter(&Join{Type: typ, Left: l, Right: r, Cond: joinAnd(conds)}, keep), nil
}
