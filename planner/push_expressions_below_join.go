package planner

import (
	"slices"

	"github.com/fsql-dev/fsql/exec/expr"
)

// pushExpressionsBelowJoin computes an expression over one input of an
// inner join below the join, on that input, when the input has fewer
// rows than the join makes: a dimension's column is computed once per
// dimension row instead of once per fact row it joins, and the join
// gathers the result instead of the columns it reads. q23's frequent
// items group store_sales by `substr(i_item_desc, 1, 30)`: the join
// gathered every item description, up to 200 bytes, for 2.2M rows, and
// the aggregate cut each; now the 18k items are cut once and the join
// gathers 30 bytes. It applies to a projection's expressions and an
// aggregate's group keys over the join (through plain column
// projections), and only to expressions that cannot fail: the input's
// rows the join drops would be computed too.
type pushExpressionsBelowJoin struct{}

func (pushExpressionsBelowJoin) Name() string { return "push_expressions_below_join" }

func (r pushExpressionsBelowJoin) Apply(p Plan, ctx *Context) (Plan, bool, error) {
	return bottomUp(p, ctx, r, func(p Plan) (Plan, bool, error) {
		switch n := p.(type) {
		case *Project:
			j, es, ok := overJoin(n.Child, n.Exprs)
			if !ok {
				return p, false, nil
			}
			nj, nes, ok := pushExprs(j, es)
			if !ok {
				return p, false, nil
			}
			return &Project{Child: nj, Exprs: nes, Names: n.Names}, true, nil
		case *Aggregate:
			if n.Rollup || n.Local {
				return p, false, nil
			}
			all := append([]expr.Expr{}, n.GroupBy...)
			for _, a := range n.Aggs {
				if a.Arg != nil {
					all = append(all, a.Arg)
				}
			}
			j, es, ok := overJoin(n.Child, all)
			if !ok {
				return p, false, nil
			}
			// Only the group keys move; the aggregates' arguments are
			// mapped to the new join.
			nj, nes, ok := pushExprs(j, es[:len(n.GroupBy)])
			if !ok {
				return p, false, nil
			}
			m := joinShift(j, nj)
			out := *n
			out.Child = nj
			out.GroupBy = nes
			out.Aggs = make([]AggCall, len(n.Aggs))
			k := len(n.GroupBy)
			for i, a := range n.Aggs {
				if a.Arg != nil {
					a.Arg = remap(es[k], m)
					k++
				}
				out.Aggs[i] = a
			}
			return &out, true, nil
		}
		return p, false, nil
	})
}

// overJoin follows plain column projections from p down to an inner
// join and returns it with es rewritten over the join's output.
func overJoin(p Plan, es []expr.Expr) (*Join, []expr.Expr, bool) {
	out := append([]expr.Expr{}, es...)
	for {
		switch n := p.(type) {
		case *Join:
			if n.Type != InnerJoin || n.Cond == nil {
				return nil, nil, false
			}
			return n, out, true
		case *Project:
			for _, e := range n.Exprs {
				if _, ok := e.(*expr.Column); !ok {
					return nil, nil, false
				}
			}
			for i, e := range out {
				ne, err := substitute(e, n.Exprs)
				if err != nil {
					return nil, nil, false
				}
				out[i] = ne
			}
			p = n.Child
		default:
			return nil, nil, false
		}
	}
}

// pushable reports whether e (over j's output) may be computed below j
// on its small side (-1 left, 1 right; smallSide): a call that cannot
// fail over that side's columns only.
func pushable(e expr.Expr, lw int, small int) bool {
	if _, ok := e.(*expr.Call); !ok || expr.CanFail(e) {
		return false
	}
	cols := expr.Columns(e)
	if len(cols) == 0 {
		return false
	}
	for _, c := range cols {
		if (c < lw) != (small < 0) {
			return false
		}
	}
	return true
}

// smallSide is the side of j (-1 left, 1 right) with fewer estimated
// rows than the join makes, or 0 when neither has.
func smallSide(j *Join) int {
	l, r, out := rowsOf(j.Left).Rows, rowsOf(j.Right).Rows, rowsOf(j).Rows
	switch {
	case r < l && r < out:
		return 1
	case l < r && l < out:
		return -1
	}
	return 0
}

// pushExprs computes the pushable expressions of es (over j's output)
// below j on its small side and returns the new join and es over it;
// false when none is pushable.
func pushExprs(j *Join, es []expr.Expr) (*Join, []expr.Expr, bool) {
	lw, rw := width(j.Left), width(j.Right)
	onSide := func(small int) func(expr.Expr) bool {
		return func(e expr.Expr) bool { return pushable(e, lw, small) }
	}
	// The estimates only when some expression could move at all: most
	// projections over a join only pick columns.
	if !slices.ContainsFunc(es, onSide(-1)) && !slices.ContainsFunc(es, onSide(1)) {
		return nil, nil, false
	}
	small := smallSide(j)
	if small == 0 || !slices.ContainsFunc(es, onSide(small)) {
		return nil, nil, false
	}
	side, sw, base := j.Left, lw, 0
	if small > 0 {
		side, sw, base = j.Right, rw, lw
	}
	ss := side.Schema()
	proj := &Project{Child: side}
	for i, c := range ss {
		proj.Exprs = append(proj.Exprs, expr.NewColumn(i, c.Type, c.Name))
		proj.Names = append(proj.Names, c.Name)
	}
	nj := &Join{Type: j.Type, Left: j.Left, Right: j.Right}
	if small < 0 {
		nj.Left = proj
	} else {
		nj.Right = proj
	}
	out := make([]expr.Expr, len(es))
	pushedAt := map[string]int{} // one column per distinct expression
	var pending []int
	for i, e := range es {
		if !pushable(e, lw, small) {
			pending = append(pending, i)
			continue
		}
		key := e.String()
		at, ok := pushedAt[key]
		if !ok {
			at = len(proj.Exprs)
			pushedAt[key] = at
			proj.Exprs = append(proj.Exprs, shift(e, -base))
			proj.Names = append(proj.Names, key)
		}
		out[i] = expr.NewColumn(base+at, e.DataType(), key)
	}
	k := len(proj.Exprs) - sw // columns added
	m := func(c int) int {
		if small < 0 && c >= lw {
			return c + k
		}
		return c
	}
	nj.Cond = remap(j.Cond, m)
	for _, i := range pending {
		out[i] = remap(es[i], m)
	}
	return nj, out, true
}

// joinShift maps the columns of j's output to those of nj, made by
// pushExprs from j.
func joinShift(j, nj *Join) func(int) int {
	lw := width(j.Left)
	k := width(nj.Left) - lw
	return func(c int) int {
		if c >= lw {
			return c + k
		}
		return c
	}
}
