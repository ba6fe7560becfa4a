package planner

import (
	"slices"

	"github.com/fsql-dev/fsql/exec/expr"
)

// pushDistinctBelowJoin pre-aggregates the larger input of an inner join
// under a DISTINCT (an aggregate with no aggregate calls) on the columns
// of that input the DISTINCT and the join read. The rows the join makes
// from two input rows equal on those columns are equal on every column
// the DISTINCT keeps, so dropping the duplicates first changes no answer,
// whatever the keys' uniqueness. q38's and q87's
// `select distinct c_last_name, c_first_name, d_date` join 548k
// store_sales rows with customer, gathering two strings per row, to keep
// 45k distinct rows: grouping (ss_customer_sk, d_date) first leaves about
// a tenth of the rows to join and gather.
//
// The pre-aggregation is Local: each task groups its own rows and the
// DISTINCT above removes what repeats across tasks, so it adds no
// exchange; it runs as a partial aggregate, which stops grouping when
// its first rows barely share groups (exec's pass-through), so a
// pre-aggregation that does not reduce costs little. It is pushed one
// join deep and runs after join ordering, so the join order and the
// dynamic filters of the joins below it are those of the plan without it.
type pushDistinctBelowJoin struct{}

func (pushDistinctBelowJoin) Name() string { return "push_distinct_below_join" }

func (r pushDistinctBelowJoin) Apply(p Plan, ctx *Context) (Plan, bool, error) {
	return bottomUp(p, ctx, r, func(p Plan) (Plan, bool, error) {
		a, ok := p.(*Aggregate)
		if !ok || a.Local || a.Rollup || len(a.Aggs) > 0 || len(a.GroupBy) == 0 {
			return p, false, nil
		}
		// The join, under projections. tops are the columns of the
		// aggregate's child its keys read, exprs what each is over the
		// join's output.
		var tops []int
		var exprs []expr.Expr
		var names []string
		projected := false
		child := a.Child
		for {
			proj, ok := child.(*Project)
			if !ok {
				break
			}
			if !projected {
				projected = true
				tops = columnsOf(a.GroupBy)
				for _, c := range tops {
					exprs = append(exprs, proj.Exprs[c])
					names = append(names, proj.Names[c])
				}
			} else {
				for i, e := range exprs {
					ne, err := substitute(e, proj.Exprs)
					if err != nil {
						return nil, false, err
					}
					exprs[i] = ne
				}
			}
			child = proj.Child
		}
		j, _ := child.(*Join)
		if j == nil || j.Type != InnerJoin || j.Cond == nil {
			return p, false, nil
		}
		used := exprs
		if !projected {
			used = a.GroupBy
		}
		lw, rw := width(j.Left), width(j.Right)
		left := rowsOf(j.Left).Rows >= rowsOf(j.Right).Rows
		side, sw := j.Left, lw
		if !left {
			side, sw = j.Right, rw
		}
		if !joined(side) {
			// A scan under the DISTINCT's join: its join carries the
			// scan's dynamic filters (a pre-aggregation between them
			// would read the whole fact table, q37's catalog_sales),
			// and a fact's rows are mostly distinct on the keys it
			// joins by (q97's date, item and customer).
			return p, false, nil
		}
		// keep[i]: column i of the side is read above or by the join.
		keep := make([]bool, sw)
		for _, c := range columnsOf(append([]expr.Expr{j.Cond}, used...)) {
			switch {
			case left && c < lw:
				keep[c] = true
			case !left && c >= lw:
				keep[c-lw] = true
			}
		}
		// The side's new positions: its kept columns, in order.
		pos := make([]int, sw)
		pre := &Aggregate{Child: side, Local: true}
		ss := side.Schema()
		for i, k := range keep {
			pos[i] = -1
			if k {
				pos[i] = len(pre.GroupBy)
				pre.GroupBy = append(pre.GroupBy, expr.NewColumn(i, ss[i].Type, ss[i].Name))
				pre.Names = append(pre.Names, ss[i].Name)
			}
		}
		if len(pre.GroupBy) == sw {
			return p, false, nil // nothing to drop: a DISTINCT of the whole side would group every row
		}
		nw := len(pre.GroupBy)
		// m maps the join's output columns to the new join's.
		m := func(c int) int {
			switch {
			case left && c < lw:
				return pos[c]
			case left:
				return c - lw + nw
			case c < lw:
				return c
			default:
				return lw + pos[c-lw]
			}
		}
		nj := &Join{Type: InnerJoin, Left: j.Left, Right: j.Right, Cond: remap(j.Cond, m)}
		if left {
			nj.Left = pre
		} else {
			nj.Right = pre
		}
		out := *a
		remapKeys := func(f func(int) int) {
			out.GroupBy = make([]expr.Expr, len(a.GroupBy))
			for i, e := range a.GroupBy {
				out.GroupBy[i] = remap(e, f)
			}
		}
		if !projected {
			out.Child = nj
			remapKeys(m)
		} else {
			// One projection of what the DISTINCT reads (the rest may
			// read columns the pre-aggregation drops).
			np := &Project{Child: nj, Names: names}
			pm := make([]int, width(a.Child))
			for i, c := range tops {
				pm[c] = i
				np.Exprs = append(np.Exprs, remap(exprs[i], m))
			}
			out.Child = np
			remapKeys(func(c int) int { return pm[c] })
		}
		return &out, true, nil
	})
}

// columnsOf lists the columns es read, ascending, each once.
func columnsOf(es []expr.Expr) []int {
	var out []int
	for _, e := range es {
		for _, c := range expr.Columns(e) {
			if !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	slices.Sort(out)
	return out
}
