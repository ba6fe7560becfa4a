package planner

import (
	"math"
	"math/bits"
	"slices"

	"github.com/fsql-dev/fsql/exec/expr"
)

// maxSearchInputs bounds the inputs of a connected component that
// search_joins orders by dynamic programming: the search tries every
// split of every subset, 3^n steps (531,441 at 12, a few milliseconds).
// Larger components keep the greedy order of order_joins.
const maxSearchInputs = 12

// searchJoins orders each connected component of a MultiJoin's inputs
// by a cost-based search instead of order_joins' greedy rule: dynamic
// programming over the component's subsets (DPsub), where a subset is
// joinable when it splits into two joinable halves that a condition
// connects (so no cross product is ever formed inside a component), and
// a plan costs the sum of its intermediate results' estimated rows
// (C_out). Trees may be bushy: two facts each joined with their own
// dimensions first meet on a composite key. Components are still crossed
// last, smallest first.
//
// The estimate of a subset does not depend on how it was joined:
// the product of its inputs' rows and of the selectivity of every
// condition among them. Equalities between columns form classes (the
// columns a chain of equalities makes equal); a class whose members in
// the subset have distinct counts d1 ≥ d2 ≥ ... ≥ dk keeps 1/(d1···dk-1)
// of the product, the containment assumption, with distinct counts from
// Parquet statistics (hive.Table.DistinctBound) bounded by the rows of
// the input. A member whose count is unknown, in a class with a known
// one, is taken as a key of the smallest input of its class (a
// foreign-key join). A class with no known member but a table's column
// (string keys) is no key join: each such member is taken to have
// unknownDistinct values, at most its input's rows, so the join fans out
// (see unknownDistinct); a class of expressions and derived keys only
// leaves the component to the greedy rule. Other conditions
// keep the fixed fractions of estimate.go. A join of two halves no
// equality connects runs as a nested loop, so it also costs the product
// of their rows.
//
// q72 is why: the greedy order starts from inventory, its largest input,
// and joins it with one year of dates by week before catalog_sales
// arrives (16.4M rows); the search joins catalog_sales with its filtered
// dimensions first and meets inventory last. And q24: its store sales
// with their store and item meet customer_address on s_zip = ca_zip
// only after customer joined them, on (ss_customer_sk, ca_address_sk) =
// (c_customer_sk, c_current_addr_sk); taken as a key join, the zip join
// went first and made 252M rows of 228k.
//
// Switching this rule off leaves every MultiJoin to order_joins.
type searchJoins struct{}

func (searchJoins) Name() string { return "search_joins" }

func (r searchJoins) Apply(p Plan, ctx *Context) (Plan, bool, error) {
	return bottomUp(p, ctx, r, func(p Plan) (Plan, bool, error) {
		mj, ok := p.(*MultiJoin)
		if !ok {
			return p, false, nil
		}
		return orderMultiJoinWith(mj, searchOrder), true, nil
	})
}

// unknownDistinct is the distinct count taken for a join key no
// statistics bound, in a class of keys none of which has one:
// PostgreSQL's default (DEFAULT_NUM_DISTINCT) when a column has no
// statistics. Taking such keys as unique instead made a join on
// low-cardinality strings look like a key join: q85's
// customer_demographics with itself on marital and education status
// (5 and 7 values; trillions of rows), q24's store with
// customer_address on zip codes (1,100 addresses a store).
const unknownDistinct = 200

// searchOrder orders a connected MultiJoin by the search above, or by the
// greedy rule when it has too many inputs, when an equality joins only
// expressions or derived keys without statistics (joinGraph.blind), or
// when its conditions cannot join it without a cross product (a
// condition over three inputs that no two-input condition prepares).
func searchOrder(mj *MultiJoin) Plan {
	n := len(mj.Inputs)
	if n < 3 || n > maxSearchInputs {
		return orderConnected(mj)
	}
	g := newJoinGraph(mj)
	if g.blind || !g.search() {
		return orderConnected(mj)
	}

	return g.plan()
}

// joinGraph is one component's inputs, conditions and search state,
// subsets of inputs as bit masks.
type joinGraph struct {
	mj      *MultiJoin
	n       int
	offsets []int
	leaves  []Plan // inputs under their own single-input conditions
	rows    []float64
	base    []float64

	conds    []joinCond // conditions over two or more inputs
	constant []expr.Expr
	classes  [][]keyMember // equality classes of key expressions

	// blind: an equality class whose members are all expressions or
	// derived keys without statistics; the component keeps the greedy
	// order (see newJoinGraph).
	blind bool

	adj, equiAdj []uint32 // inputs a condition (an equality) links to input i
	hyper        []uint32 // conditions over three or more inputs

	valid []bool
	card  []float64
	cost  []float64
	split []uint32 // the half of a joinable subset holding its lowest input
}

type joinCond struct {
	e    expr.Expr
	uses uint32
	// sel is the fraction a condition outside the equality classes keeps;
	// 1 for the equalities, which the classes account for.
	sel float64
}

// keyMember is one side of an equality between two inputs.
type keyMember struct {
	input int
	// d bounds the distinct values of the key over the input's unfiltered
	// rows (its domain; filters are taken as independent of it, as in
	// estimate.go's fractions).
	d float64
	// known: d is used as it is, from statistics or, for a stored
	// column in a class without any, unknownDistinct; otherwise the
	// member is taken as a key.
	known bool
	// stored: a table's column without statistics (not an expression, an
	// aggregate's group key or a window's output).
	stored bool
	// key: a column of a table scan that has a distinct value per row, so
	// by referential integrity the other members' values lie within its
	// domain (a foreign key's range statistics may be loose: a default 0
	// among date keys makes its range the whole calendar).
	key bool
}

func newJoinGraph(mj *MultiJoin) *joinGraph {
	n := len(mj.Inputs)
	g := &joinGraph{mj: mj, n: n, offsets: inputOffsets(mj),
		adj: make([]uint32, n), equiAdj: make([]uint32, n)}
	owner := func(col int) int { return ownerOf(g.offsets, col) }
	local := func(e expr.Expr, i int) expr.Expr {
		return remap(e, func(col int) int { return col - g.offsets[i] })
	}
	single := make([][]expr.Expr, n)
	type pending struct {
		e    expr.Expr
		uses uint32
	}
	var multi []pending
	for _, c := range mj.Conds {
		var uses uint32
		for _, col := range expr.Columns(c) {
			uses |= 1 << owner(col)
		}
		switch bits.OnesCount32(uses) {
		case 0:
			g.constant = append(g.constant, c)
		case 1:
			i := bits.TrailingZeros32(uses)
			single[i] = append(single[i], local(c, i))
		default:
			multi = append(multi, pending{c, uses})
		}
	}
	g.leaves = make([]Plan, n)
	g.rows, g.base = make([]float64, n), make([]float64, n)
	for i, in := range mj.Inputs {
		g.leaves[i] = wrapFilter(in, single[i])
		st := rowsOf(g.leaves[i])
		g.rows[i], g.base[i] = max(st.Rows*residualSelectivity(g.leaves[i]), 1), st.Base
	}
	// Equalities between a key of one input and a key of another join
	// their members' classes; a plain column is one member wherever it
	// appears, any other expression a member of its own.
	var members []keyMember
	ids := map[int]int{} // MultiJoin column -> member
	member := func(e expr.Expr, i int) int {
		c, isCol := e.(*expr.Column)
		if isCol {
			if m, ok := ids[c.Index]; ok {
				return m
			}
		}
		le := local(e, i)
		d, known := distinctOf(g.leaves[i], le, g.base[i])
		key := known && d >= g.base[i] && isTableScan(g.leaves[i])
		stored := false
		if lc, ok := le.(*expr.Column); ok && !known {
			stored = storedColumn(g.leaves[i], lc.Index)
		}
		members = append(members, keyMember{input: i, d: d, known: known, key: key, stored: stored})
		if isCol {
			ids[c.Index] = len(members) - 1
		}
		return len(members) - 1
	}
	var parent []int
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	for _, p := range multi {
		jc := joinCond{e: p.e, uses: p.uses, sel: selectivity([]expr.Expr{p.e})}
		if a, b, ok := keyInputs(p.e, owner); ok {
			call := p.e.(*expr.Call)
			ma, mb := member(call.Args[0], a), member(call.Args[1], b)
			for len(parent) < len(members) {
				parent = append(parent, len(parent))
			}
			if ra, rb := find(ma), find(mb); ra != rb {
				parent[max(ra, rb)] = min(ra, rb)
			}
			jc.sel = 1
			g.equiAdj[a] |= 1 << b
			g.equiAdj[b] |= 1 << a
		}
		if bits.OnesCount32(p.uses) == 2 {
			a := bits.TrailingZeros32(p.uses)
			b := bits.TrailingZeros32(p.uses &^ (1 << a))
			g.adj[a] |= 1 << b
			g.adj[b] |= 1 << a
		} else {
			g.hyper = append(g.hyper, p.uses)
		}
		g.conds = append(g.conds, jc)
	}
	byRoot := map[int]int{}
	for m := range members {
		r := find(m)
		k, ok := byRoot[r]
		if !ok {
			k = len(g.classes)
			byRoot[r] = k
			g.classes = append(g.classes, nil)
		}
		g.classes[k] = append(g.classes[k], members[m])
	}
	for _, class := range g.classes {
		if slices.ContainsFunc(class, func(m keyMember) bool { return m.known }) {
			continue
		}
		if !slices.ContainsFunc(class, func(m keyMember) bool { return m.stored }) {
			// Expressions and derived keys only (q4's CTE references on
			// customer_id, an aggregate's group key each): nothing says
			// how they join, and the greedy rule keeps such a component.
			g.blind = true
			continue
		}
		for i := range class {
			if class[i].stored {
				class[i].d, class[i].known = min(g.base[class[i].input], unknownDistinct), true
			}
		}
	}
	return g
}

// residualSelectivity is the fraction the conditions of an input's top
// inner join that are not hash keys keep, which estimate.go does not
// count: q6's item joined with its category's average price keeps the
// items above 1.2 times it, and without the fraction the search saw no
// reason to join that input before customer and customer_address.
func residualSelectivity(p Plan) float64 {
	for {
		switch n := p.(type) {
		case *Project:
			p = n.Child
		case *Filter:
			p = n.Child
		case *Join:
			if n.Type != InnerJoin || n.Cond == nil {
				return 1
			}
			_, _, residual := splitEquiKeys(n.Cond, width(n.Left), width(n.Right))
			return selectivity(residual)
		default:
			return 1
		}
	}
}

// isTableScan reports whether p is a table scan under filters and column
// projections, whose rows are the table's.
func isTableScan(p Plan) bool {
	for {
		switch n := p.(type) {
		case *Scan:
			return true
		case *Filter:
			p = n.Child
		case *Project:
			for _, e := range n.Exprs {
				if _, ok := e.(*expr.Column); !ok {
					return false
				}
			}
			p = n.Child
		default:
			return false
		}
	}
}

// keyInputs reports whether e is an equality (= or <=>, both hash join
// keys) whose two sides each read one input, different ones, and which.
func keyInputs(e expr.Expr, owner func(int) int) (a, b int, ok bool) {
	call, isCall := e.(*expr.Call)
	if !isCall || (call.Fn != "=" && call.Fn != "<=>") || len(call.Args) != 2 {
		return 0, 0, false
	}
	side := func(x expr.Expr) int {
		in := -1
		for _, col := range expr.Columns(x) {
			o := owner(col)
			if in >= 0 && o != in {
				return -1
			}
			in = o
		}
		return in
	}
	a, b = side(call.Args[0]), side(call.Args[1])
	return a, b, a >= 0 && b >= 0 && a != b
}

// search fills the tables of every joinable subset, smaller masks first
// (a subset's halves are smaller numbers than it), and reports whether
// the whole component is joinable.
func (g *joinGraph) search() bool {
	size := 1 << g.n
	g.valid = make([]bool, size)
	g.card = make([]float64, size)
	g.cost = make([]float64, size)
	g.split = make([]uint32, size)
	nbr, equiNbr := make([]uint32, size), make([]uint32, size)
	for s := 1; s < size; s++ {
		low := bits.TrailingZeros32(uint32(s))
		rest := s & (s - 1)
		nbr[s], equiNbr[s] = nbr[rest]|g.adj[low], equiNbr[rest]|g.equiAdj[low]
	}
	for i := 0; i < g.n; i++ {
		g.valid[1<<i] = true
		g.card[1<<i] = g.rows[i]
	}
	for s := uint32(1); s < uint32(size); s++ {
		if s&(s-1) == 0 {
			continue
		}
		low := s & -s
		best := math.Inf(1)
		// Each split once: the half with the lowest input is s1.
		for s1 := (s - 1) & s; s1 > 0; s1 = (s1 - 1) & s {
			if s1&low == 0 {
				continue
			}
			s2 := s ^ s1
			if !g.valid[s1] || !g.valid[s2] || !g.linked(s1, s2, nbr) {
				continue
			}
			c := g.cost[s1] + g.cost[s2]
			if equiNbr[s1]&s2 == 0 {
				c += g.card[s1] * g.card[s2] // a nested-loop join
			}
			if c < best {
				best, g.split[s] = c, s1
			}
		}
		if !math.IsInf(best, 1) {
			g.valid[s] = true
			g.card[s] = g.estimate(s)
			g.cost[s] = best + g.card[s]
		}
	}
	return g.valid[size-1]
}

// linked reports whether a condition reads both halves and nothing
// outside them.
func (g *joinGraph) linked(s1, s2 uint32, nbr []uint32) bool {
	if nbr[s1]&s2 != 0 {
		return true
	}
	for _, h := range g.hyper {
		if h&^(s1|s2) == 0 && h&s1 != 0 && h&s2 != 0 {
			return true
		}
	}
	return false
}

// estimate is the rows of the join of subset s (see searchJoins).
func (g *joinGraph) estimate(s uint32) float64 {
	rows := 1.0
	for m := s; m != 0; m &= m - 1 {
		rows *= g.rows[bits.TrailingZeros32(m)]
	}
	for _, c := range g.conds {
		if c.uses&^s == 0 {
			rows *= c.sel
		}
	}
	var ds []float64
	var ins []int
	pairs := map[[2]int]*pairKeys{}
	var pairOrder []*pairKeys
	for _, class := range g.classes {
		ds, ins = ds[:0], ins[:0]
		smallest, keyD := math.Inf(1), math.Inf(1)
		for _, m := range class {
			if s&(1<<m.input) != 0 {
				smallest = min(smallest, g.base[m.input])
				if m.key {
					keyD = min(keyD, m.d)
				}
			}
		}
		for _, m := range class {
			if s&(1<<m.input) == 0 {
				continue
			}
			d := m.d
			if !m.known {
				d = min(g.base[m.input], smallest)
			}
			ds = append(ds, max(min(d, keyD), 1))
			ins = append(ins, m.input)
		}
		if len(ds) < 2 {
			continue
		}
		if len(ds) == 2 && ins[0] != ins[1] {
			// An equality of two inputs: divided below with the pair's
			// other keys.
			a, b, da, db := ins[0], ins[1], ds[0], ds[1]
			if a > b {
				a, b, da, db = b, a, db, da
			}
			pk := pairs[[2]int{a, b}]
			if pk == nil {
				pk = &pairKeys{a: a, b: b, da: 1, db: 1}
				pairs[[2]int{a, b}] = pk
				pairOrder = append(pairOrder, pk)
			}
			pk.da *= da
			pk.db *= db
			continue
		}
		slices.Sort(ds)
		for _, d := range ds[1:] {
			rows /= d
		}
	}
	// Two inputs that meet on several keys meet on one composite key,
	// whose distinct values on a side are at most that side's rows, not
	// the product of its keys' counts: q50's store_sales and
	// store_returns on ticket, item and customer (240k, 18k and 100k
	// values) keep a returns row's sale, where the product made the join
	// one row and put it before the returns' date filter. With one key
	// this is the class's larger count, as for the classes above.
	for _, pk := range pairOrder { // in class order, so estimates repeat exactly
		da := min(pk.da, max(g.base[pk.a], 1))
		db := min(pk.db, max(g.base[pk.b], 1))
		rows /= max(da, db)
	}
	return max(rows, 1)
}

// pairKeys is, for two inputs joined by equalities of their keys, the
// product of the keys' distinct counts on each side.
type pairKeys struct {
	a, b   int
	da, db float64
}

// plan builds the chosen tree and restores the bound column order on top.
func (g *joinGraph) plan() Plan {
	full := uint32(1)<<g.n - 1
	tree, order := g.build(full)
	tree = wrapFilter(tree, g.constant)
	pos := make([]int, g.n) // where input i's first column lands
	at := 0
	for _, i := range order {
		pos[i] = at
		at += g.offsets[i+1] - g.offsets[i]
	}
	s := tree.Schema()
	proj := &Project{Child: tree}
	for i := 0; i < g.n; i++ {
		for c := g.offsets[i]; c < g.offsets[i+1]; c++ {
			at := pos[i] + c - g.offsets[i]
			proj.Exprs = append(proj.Exprs, expr.NewColumn(at, s[at].Type, s[at].Name))
			proj.Names = append(proj.Names, s[at].Name)
			proj.Tables = append(proj.Tables, s[at].Table)
		}
	}
	return proj
}

// build joins subset s by its best split, the larger half on the left
// (the probe side, as in the greedy left-deep tree), and returns the
// inputs in the order of its columns. The conditions that read both
// halves go on the join, in their written order.
func (g *joinGraph) build(s uint32) (Plan, []int) {
	if s&(s-1) == 0 {
		i := bits.TrailingZeros32(s)
		return g.leaves[i], []int{i}
	}
	s1 := g.split[s]
	s2 := s ^ s1
	if g.card[s2] > g.card[s1] {
		s1, s2 = s2, s1
	}
	l, lo := g.build(s1)
	r, ro := g.build(s2)
	order := append(lo, ro...)
	pos := make([]int, g.n)
	at := 0
	for _, i := range order {
		pos[i] = at
		at += g.offsets[i+1] - g.offsets[i]
	}
	var on []expr.Expr
	for _, c := range g.conds {
		if c.uses&^s == 0 && c.uses&s1 != 0 && c.uses&s2 != 0 {
			on = append(on, remap(c.e, func(col int) int {
				o := ownerOf(g.offsets, col)
				return pos[o] + col - g.offsets[o]
			}))
		}
	}
	return &Join{Type: InnerJoin, Left: l, Right: r, Cond: joinAnd(on)}, order
}

// storedColumn reports whether column col of p is a table's column,
// followed down through column projections, filters, sorts, limits and
// the column-preserving sides of joins: its values are the table's, not
// an aggregate's group keys (each distinct) or computed.
func storedColumn(p Plan, col int) bool {
	for {
		switch n := p.(type) {
		case *Scan:
			return col >= 0 && col < len(n.Columns)
		case *Filter:
			p = n.Child
		case *Sort:
			p = n.Child
		case *Limit:
			p = n.Child
		case *Project:
			c, ok := n.Exprs[col].(*expr.Column)
			if !ok {
				return false
			}
			p, col = n.Child, c.Index
		case *Join:
			lw := width(n.Left)
			switch {
			case col < lw:
				p = n.Left
			case n.Type == InnerJoin || n.Type == LeftJoin:
				p, col = n.Right, col-lw
			default:
				return false
			}
		default:
			return false
		}
	}
}
