package planner

import (
	"github.com/fsql-dev/fsql/exec/expr"
)

// orderJoins turns each MultiJoin into a left-deep tree of inner joins.
// It starts from the input estimated largest (in a star query, the fact
// table), then repeatedly joins the most selective input connected to what
// is joined so far by an equality (else by any condition), so no cross
// product is formed where a join predicate exists.
// A projection on top restores the column order the query was bound with.
type orderJoins struct{}

func (orderJoins) Name() string { return "order_joins" }

func (r orderJoins) Apply(p Plan, ctx *Context) (Plan, bool, error) {
	return bottomUp(p, ctx, r, func(p Plan) (Plan, bool, error) {
		mj, ok := p.(*MultiJoin)
		if !ok {
			return p, false, nil
		}
		return orderMultiJoin(mj), true, nil
	})
}

func orderMultiJoin(mj *MultiJoin) Plan {
	n := len(mj.Inputs)
	offsets := make([]int, n+1)
	for i, in := range mj.Inputs {
		offsets[i+1] = offsets[i] + len(in.Schema())
	}
	owner := func(col int) int {
		for i := 0; i < n; i++ {
			if col < offsets[i+1] {
				return i
			}
		}
		return n - 1
	}
	type cond struct {
		e    expr.Expr
		uses map[int]bool
		used bool
		equi bool // an equality between inputs: a hash join key
	}
	conds := make([]*cond, len(mj.Conds))
	for i, c := range mj.Conds {
		u := map[int]bool{}
		for _, col := range expr.Columns(c) {
			u[owner(col)] = true
		}
		call, isCall := c.(*expr.Call)
		conds[i] = &cond{e: c, uses: u, equi: isCall && call.Fn == "=" && len(u) == 2}
	}
	est := make([]float64, n)
	frac := make([]float64, n) // the fraction of its rows an input keeps
	start := 0
	for i, in := range mj.Inputs {
		st := Estimate(in)
		est[i], frac[i] = st.Rows, st.Rows/st.Base
		if est[i] > est[start] {
			start = i
		}
	}
	// better: joining the input that keeps the smallest fraction of its
	// rows first shrinks a star join's probe side fastest (the fraction is
	// what a foreign-key join keeps of the other side); ties go to the
	// smaller input, the cheaper build.
	better := func(i, j int) bool {
		if frac[i] != frac[j] {
			return frac[i] < frac[j]
		}
		return est[i] < est[j]
	}
	joined := map[int]bool{start: true}
	order := []int{start}
	// pos[i] is where input i's first column lands in the joined output.
	pos := map[int]int{start: 0}
	width := offsets[start+1] - offsets[start]
	var tree Plan = mj.Inputs[start]
	connected := func(i int, equiOnly bool) bool {
		for _, c := range conds {
			if !c.used && c.uses[i] && (c.equi || !equiOnly) {
				for o := range c.uses {
					if joined[o] {
						return true
					}
				}
			}
		}
		return false
	}
	for len(order) < n {
		next := -1
		// Prefer an input joined by an equality (a hash join), then one
		// joined by any condition, and only then a cross product.
		for tier := 0; tier < 3; tier++ {
			for i := 0; i < n; i++ {
				if joined[i] || (tier == 0 && !connected(i, true)) || (tier == 1 && !connected(i, false)) {
					continue
				}
				if next < 0 || better(i, next) {
					next = i
				}
			}
			if next >= 0 {
				break
			}
		}
		joined[next] = true
		order = append(order, next)
		pos[next] = width
		width += offsets[next+1] - offsets[next]
		// Conditions whose inputs are now all joined go on this join.
		var on []expr.Expr
		for _, c := range conds {
			if c.used {
				continue
			}
			all := true
			for o := range c.uses {
				all = all && joined[o]
			}
			if all {
				c.used = true
				on = append(on, remap(c.e, func(col int) int {
					o := owner(col)
					return pos[o] + col - offsets[o]
				}))
			}
		}
		tree = &Join{Type: InnerJoin, Left: tree, Right: mj.Inputs[next], Cond: expr.JoinAnd(on)}
	}
	var leftover []expr.Expr
	for _, c := range conds {
		if !c.used { // constant conditions
			leftover = append(leftover, c.e)
		}
	}
	tree = wrapFilter(tree, leftover)
	// Restore the bound column order.
	s := tree.Schema()
	proj := &Project{Child: tree}
	for i := 0; i < n; i++ {
		for c := offsets[i]; c < offsets[i+1]; c++ {
			at := pos[i] + c - offsets[i]
			proj.Exprs = append(proj.Exprs, expr.NewColumn(at, s[at].Type, s[at].Name))
			proj.Names = append(proj.Names, s[at].Name)
			proj.Tables = append(proj.Tables, s[at].Table)
		}
	}
	return proj
}
