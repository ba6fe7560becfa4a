package planner

import (
	"slices"
	"sort"

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
		offsets[i+1] = offsets[i] + width(in)
	}
	owner := func(col int) int {
		// The input whose columns [offsets[i], offsets[i+1]) hold col.
		i := sort.Search(n, func(i int) bool { return col < offsets[i+1] })
		return min(i, n-1)
	}
	type cond struct {
		e      expr.Expr
		uses   []int // inputs the condition reads, in order of first use
		used   bool
		equi   bool // an equality between inputs: a hash join key
		joined int  // how many of uses are joined so far
	}
	conds := make([]*cond, len(mj.Conds))
	condsOf := make([][]int, n) // conditions reading each input
	for i, c := range mj.Conds {
		var uses []int
		for _, col := range expr.Columns(c) {
			if o := owner(col); !slices.Contains(uses, o) {
				uses = append(uses, o)
			}
		}
		call, isCall := c.(*expr.Call)
		conds[i] = &cond{e: c, uses: uses, equi: isCall && call.Fn == "=" && len(uses) == 2}
		for _, o := range uses {
			condsOf[o] = append(condsOf[o], i)
		}
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
	joined := make([]bool, n)
	// links[i] / equiLinks[i]: unused conditions (equalities) between
	// input i and the inputs joined so far, kept as inputs join, so
	// choosing the next input costs one pass over the inputs.
	links, equiLinks := make([]int, n), make([]int, n)
	var order []int
	pos := make([]int, n) // where input i's first column lands in the joined output
	width := 0
	// join adds input i and returns the conditions it completes, in
	// their written order.
	join := func(i int) []int {
		joined[i] = true
		order = append(order, i)
		pos[i] = width
		width += offsets[i+1] - offsets[i]
		var done []int
		for _, ci := range condsOf[i] {
			c := conds[ci]
			if c.joined == 0 {
				for _, o := range c.uses {
					if !joined[o] {
						links[o]++
						if c.equi {
							equiLinks[o]++
						}
					}
				}
			}
			c.joined++
			if c.joined == len(c.uses) && !c.used {
				c.used = true
				done = append(done, ci)
			}
		}
		sort.Ints(done)
		return done
	}
	first := join(start) // conditions over the first input alone
	var tree Plan = mj.Inputs[start]
	for len(order) < n {
		next := -1
		// Prefer an input joined by an equality (a hash join), then one
		// joined by any condition, and only then a cross product.
		for tier := 0; tier < 3; tier++ {
			for i := 0; i < n; i++ {
				if joined[i] || (tier == 0 && equiLinks[i] == 0) || (tier == 1 && links[i] == 0) {
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
		done := join(next)
		if len(order) == 2 {
			// Conditions over the first input alone and those that read
			// no input go on the first join.
			done = append(done, first...)
			for ci, c := range conds {
				if len(c.uses) == 0 {
					c.used = true
					done = append(done, ci)
				}
			}
			sort.Ints(done)
		}
		// Conditions whose inputs are now all joined go on this join.
		var on []expr.Expr
		for _, ci := range done {
			on = append(on, remap(conds[ci].e, func(col int) int {
				o := owner(col)
				return pos[o] + col - offsets[o]
			}))
		}
		tree = &Join{Type: InnerJoin, Left: tree, Right: mj.Inputs[next], Cond: joinAnd(on)}
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
