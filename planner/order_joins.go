package planner

import (
	"slices"
	"sort"

	"github.com/fsql-dev/fsql/exec/expr"
)

// orderJoins turns each MultiJoin into a tree of inner joins. Inputs
// connected by conditions form components, each ordered left-deep: it
// starts from the component's input estimated largest (in a star query,
// the fact table), then repeatedly joins the most selective input
// connected to what is joined so far by an equality on a key with known
// distinct values (else by any equality, else by any condition): an
// equality of strings or expressions without statistics may fan out, so
// it waits until no known key join is left (q24 joined its store with
// customer_address on s_zip = ca_zip, 228k rows into 252M, before the
// customer join that meets customer_address on its key). Components are crossed only after each is joined, smallest
// first, so no cross product is formed before a join that has a
// predicate (an unconnected big dimension crossed with the first input
// before the fact joins it was 588M rows of item x date_dim).
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

func orderMultiJoin(mj *MultiJoin) Plan { return orderMultiJoinWith(mj, orderConnected) }

// orderMultiJoinWith orders each component of mj with order (the greedy
// rule here, or search_joins' search) and crosses the components.
func orderMultiJoinWith(mj *MultiJoin, order func(*MultiJoin) Plan) Plan {
	comps := joinComponents(mj)
	if len(comps) <= 1 {
		return order(mj)
	}
	return crossComponents(mj, comps, order)
}

// joinComponents groups the inputs of mj that conditions connect, each
// group in input order, groups by their first input.
func joinComponents(mj *MultiJoin) [][]int {
	n := len(mj.Inputs)
	offsets := inputOffsets(mj)
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	for _, c := range mj.Conds {
		first := -1
		for _, col := range expr.Columns(c) {
			o := ownerOf(offsets, col)
			if first < 0 {
				first = o
			} else if a, b := find(first), find(o); a != b {
				parent[max(a, b)] = min(a, b)
			}
		}
	}
	var comps [][]int
	index := map[int]int{}
	for i := 0; i < n; i++ {
		r := find(i)
		k, ok := index[r]
		if !ok {
			k = len(comps)
			index[r] = k
			comps = append(comps, nil)
		}
		comps[k] = append(comps[k], i)
	}
	return comps
}

func inputOffsets(mj *MultiJoin) []int {
	offsets := make([]int, len(mj.Inputs)+1)
	for i, in := range mj.Inputs {
		offsets[i+1] = offsets[i] + width(in)
	}
	return offsets
}

// ownerOf is the input whose columns [offsets[i], offsets[i+1]) hold col.
func ownerOf(offsets []int, col int) int {
	n := len(offsets) - 1
	return min(sort.Search(n, func(i int) bool { return col < offsets[i+1] }), n-1)
}

// crossComponents orders each component of mj as a MultiJoin of its own
// and crosses the results, smallest first (the intermediate cross
// products stay smallest). Conditions reading no input filter the top.
func crossComponents(mj *MultiJoin, comps [][]int, orderComp func(*MultiJoin) Plan) Plan {
	offsets := inputOffsets(mj)
	compOf := make([]int, len(mj.Inputs))
	for k, comp := range comps {
		for _, i := range comp {
			compOf[i] = k
		}
	}
	type part struct {
		plan Plan
		rows float64
		cols []int // the MultiJoin's columns, in the part's output order
	}
	parts := make([]part, len(comps))
	for k, comp := range comps {
		sub := &MultiJoin{}
		var cols []int
		at := map[int]int{} // input -> offset in sub
		for _, i := range comp {
			at[i] = len(cols)
			sub.Inputs = append(sub.Inputs, mj.Inputs[i])
			for c := offsets[i]; c < offsets[i+1]; c++ {
				cols = append(cols, c)
			}
		}
		for _, c := range mj.Conds {
			used := expr.Columns(c)
			if len(used) == 0 || compOf[ownerOf(offsets, used[0])] != k {
				continue
			}
			sub.Conds = append(sub.Conds, remap(c, func(col int) int {
				o := ownerOf(offsets, col)
				return at[o] + col - offsets[o]
			}))
		}
		// One input: its own conditions filter it (orderConnected puts
		// them on its first join, which one input does not have).
		p := wrapFilter(sub.Inputs[0], sub.Conds)
		if len(sub.Inputs) > 1 {
			p = orderComp(sub)
		}
		parts[k] = part{plan: p, rows: rowsOf(p).Rows, cols: cols}
	}
	sort.SliceStable(parts, func(a, b int) bool { return parts[a].rows < parts[b].rows })
	tree := parts[0].plan
	var order []int
	order = append(order, parts[0].cols...)
	for _, pt := range parts[1:] {
		tree = &Join{Type: InnerJoin, Left: tree, Right: pt.plan}
		order = append(order, pt.cols...)
	}
	var constant []expr.Expr
	for _, c := range mj.Conds {
		if len(expr.Columns(c)) == 0 {
			constant = append(constant, c)
		}
	}
	tree = wrapFilter(tree, constant)
	pos := make([]int, len(order)) // MultiJoin column -> tree column
	for at, c := range order {
		pos[c] = at
	}
	s := tree.Schema()
	proj := &Project{Child: tree}
	for c := range order {
		at := pos[c]
		proj.Exprs = append(proj.Exprs, expr.NewColumn(at, s[at].Type, s[at].Name))
		proj.Names = append(proj.Names, s[at].Name)
		proj.Tables = append(proj.Tables, s[at].Table)
	}
	return proj
}

// orderConnected orders a MultiJoin left-deep by the greedy rule above.
func orderConnected(mj *MultiJoin) Plan {
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
		// keyed: an equality of which one side has a distinct count
		// from statistics (a key join, as far as is known).
		keyed bool
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
		// <=> is a hash join key too (physical.go), and an equality for
		// the order: only its NULL = NULL pairs differ.
		equi := isCall && (call.Fn == "=" || call.Fn == "<=>") && len(uses) == 2
		conds[i] = &cond{e: c, uses: uses, equi: equi, keyed: equi && knownKey(mj, offsets, call)}
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
	// links[i] / equiLinks[i] / keyLinks[i]: unused conditions
	// (equalities, keyed equalities) between input i and the inputs
	// joined so far, kept as inputs join, so choosing the next input
	// costs one pass over the inputs.
	links, equiLinks, keyLinks := make([]int, n), make([]int, n), make([]int, n)
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
						if c.keyed {
							keyLinks[o]++
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
		// Prefer an input joined by an equality on a known key, then one
		// joined by any equality (a hash join), then by any condition,
		// and only then a cross product.
		for tier := 0; tier < 4; tier++ {
			for i := 0; i < n; i++ {
				if joined[i] || (tier == 0 && keyLinks[i] == 0) || (tier == 1 && equiLinks[i] == 0) || (tier == 2 && links[i] == 0) {
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

// knownKey reports whether either side of the equality eq, over the
// columns of mj, is a column whose distinct values statistics bound.
func knownKey(mj *MultiJoin, offsets []int, eq *expr.Call) bool {
	for _, side := range eq.Args {
		c, ok := side.(*expr.Column)
		if !ok {
			continue
		}
		o := ownerOf(offsets, c.Index)
		if _, ok := columnDistinct(mj.Inputs[o], c.Index-offsets[o]); ok {
			return true
		}
	}
	return false
}
