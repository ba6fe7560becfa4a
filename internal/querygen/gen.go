package querygen

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Options shape the generated queries. The zero value is a reasonable
// default; Disable switches features off.
type Options struct {
	// MaxJoins bounds the joins after the first FROM item (default 3).
	MaxJoins int
	// MaxDepth bounds subquery nesting (default 2).
	MaxDepth int
	// Limit is the LIMIT of queries that return rows rather than groups
	// (default 50).
	Limit int
	// CrossRows: tables of at most this many rows may be cross joined
	// (default 50), once per FROM clause, and only while the product of
	// the table row counts stays under CrossProduct (default 200,000).
	CrossRows, CrossProduct int64
	// BaseRows: tables of more rows are only joined to, through a link,
	// never the first table of a query or a subquery (0: no bound).
	BaseRows int64
	// Features switched off.
	NoSubqueries, NoWindows, NoSetOps, NoDerived, NoRollup bool
}

// Gen generates queries over one schema from one source of choices.
type Gen struct {
	s      *Schema
	src    Source
	opt    Options
	aliasN int
}

// New returns a generator. The schema must pass Check.
func New(s *Schema, src Source, opt Options) *Gen {
	if opt.MaxJoins == 0 {
		opt.MaxJoins = 3
	}
	if opt.MaxDepth == 0 {
		opt.MaxDepth = 2
	}
	if opt.Limit == 0 {
		opt.Limit = 50
	}
	if opt.CrossRows == 0 {
		opt.CrossRows = 50
	}
	if opt.CrossProduct == 0 {
		opt.CrossProduct = 200_000
	}
	return &Gen{s: s, src: src, opt: opt}
}

func (g *Gen) n(k int) int { return g.src.Intn(k) }

// chance is true pct percent of the time; with an exhausted BytesSource it
// is false, the simpler query.
func (g *Gen) chance(pct int) bool { return g.n(100) >= 100-pct }

func (g *Gen) alias() string {
	g.aliasN++
	return "t" + strconv.Itoa(g.aliasN)
}

// operand is something an expression can be built on: a column in scope,
// or (for predicates over groups) a group key or an aggregate.
type operand struct {
	e      Expr
	values []string // raw values of e's type, for constants
	origin string   // table.column when e is a plain table column
	// setDecimal marks a set operation's decimal column: DuckDB's text
	// of it casts each arm to decimal(38,10) (see Select.write), so its
	// digits after the point differ from MySQL's (0.000 against
	// 0.0000000000) wherever it becomes text.
	setDecimal bool
}

// scope is what a SELECT block's expressions may refer to.
type scope struct {
	ops []operand
	// unique are expressions that together identify a row of the FROM
	// clause (nil when unknown): ROW_NUMBER orders on them.
	unique []Expr
	// tables are the aliases of base tables in the FROM clause, for
	// correlating subqueries through links.
	tables []aliasRef
	// rows bounds the FROM clause's row count (links keep it, a cross
	// join multiplies it); crossed says a cross join is in already.
	rows    int64
	crossed bool
	// uniquePos: in a derived table's scope, the positions of the output
	// columns that are unique (unique then holds their expressions).
	uniquePos []int
}

type aliasRef struct{ alias, table string }

func (sc *scope) ofType(t Type) []operand {
	var out []operand
	for _, o := range sc.ops {
		if o.e.Type() == t {
			out = append(out, o)
		}
	}
	return out
}

// Query returns the next random statement.
func (g *Gen) Query() Query {
	g.aliasN = 0
	if !g.opt.NoSetOps && g.chance(8) {
		return g.setOp()
	}
	return g.Select()
}

// Select returns the next random SELECT (no set operation).
func (g *Gen) Select() *Select {
	g.aliasN = 0
	return g.selectBlock(0, true, nil)
}

// selectBlock builds one SELECT. top blocks get ORDER BY and LIMIT; types,
// when set, forces the output column types (set operations).
func (g *Gen) selectBlock(depth int, top bool, types []Type) *Select {
	q := &Select{}
	sc := g.from(q, depth, top)
	q.scope = sc
	if g.chance(65) {
		q.Where = g.pred(sc, depth, 0)
	}
	if types == nil && g.chance(45) {
		g.aggregate(q, sc, depth, top)
	} else {
		g.rows(q, sc, depth, top, types)
	}
	return q
}

func (g *Gen) baseTables() []*Table {
	var out []*Table
	for _, t := range g.s.Tables {
		if g.opt.BaseRows == 0 || t.Rows <= g.opt.BaseRows {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return g.s.Tables
	}
	return out
}

// tableScope adds a base table's columns under alias to sc.
func tableScope(sc *scope, t *Table, alias string) {
	for _, c := range t.Columns {
		sc.ops = append(sc.ops, operand{e: &Col{Qual: alias, Name: c.Name, T: c.Type}, values: c.Values, origin: t.Name + "." + c.Name})
	}
	sc.tables = append(sc.tables, aliasRef{alias, t.Name})
}

func keyExprs(t *Table, alias string) []Expr {
	var out []Expr
	for _, k := range t.Key {
		out = append(out, &Col{Qual: alias, Name: k, T: t.Column(k).Type})
	}
	return out
}

// from builds the FROM clause: a first table (or derived table), then
// joins that follow links, so the result is never bigger than the first
// input, plus cross joins with tiny tables.
func (g *Gen) from(q *Select, depth int, top bool) *scope {
	sc := &scope{}
	if !g.opt.NoDerived && depth == 0 && g.chance(10) {
		sub, subScope := g.derived()
		q.From = FromItem{Sub: sub, Alias: g.alias(), CTE: top && g.chance(50)}
		sc.rows = subScope.rows
		for i, it := range sub.Items {
			o := operand{e: &Col{Qual: q.From.Alias, Name: "c" + strconv.Itoa(i), T: it.E.Type()}}
			if i < len(subScope.ops) {
				o.values, o.origin = subScope.ops[i].values, subScope.ops[i].origin
			}
			sc.ops = append(sc.ops, o)
			if i < len(sub.GroupBy) {
				sc.unique = append(sc.unique, o.e) // group keys are unique
			}
		}
		if q.From.CTE && g.chance(30) {
			g.cteAgain(q, sc, sub, subScope)
		}
	} else if !g.opt.NoDerived && depth == 0 && g.chance(9) {
		// A derived table of rows (a window over them, DISTINCT, or a
		// top-N), or of a set operation: the filters of this block over
		// its columns may reach inside only where that keeps its rows.
		var sub *Select
		var set *SetOp
		var subScope *scope
		if !g.opt.NoSetOps && g.chance(30) {
			set, subScope = g.derivedSet()
		} else {
			sub, subScope = g.derivedRows()
		}
		q.From = FromItem{Sub: sub, Set: set, Alias: g.alias(), CTE: top && g.chance(40)}
		sc.rows = subScope.rows
		for i, o := range subScope.ops {
			c := &Col{Qual: q.From.Alias, Name: "c" + strconv.Itoa(i), T: o.e.Type()}
			sc.ops = append(sc.ops, operand{e: c, values: o.values, origin: o.origin, setDecimal: set != nil && o.e.Type() == Decimal})
		}
		if subScope.unique != nil {
			for _, i := range subScope.uniquePos {
				sc.unique = append(sc.unique, sc.ops[i].e)
			}
		}
	} else {
		bases := g.baseTables()
		t := bases[g.n(len(bases))]
		q.From = FromItem{Table: t.Name, Alias: g.alias()}
		tableScope(sc, t, q.From.Alias)
		sc.rows = max(t.Rows, 1)
		sc.unique = keyExprs(t, q.From.Alias)
		if len(t.Key) == 0 {
			sc.unique = nil
		}
	}
	comma := g.chance(40)
	for j := g.n(g.opt.MaxJoins + 1); j > 0; j-- {
		if !g.join(q, sc, comma, depth) {
			break
		}
	}
	return sc
}

// join adds one join to q; false when no link leaves the tables in scope
// and no table is small enough to cross join.
func (g *Gen) join(q *Select, sc *scope, comma bool, depth int) bool {
	type cand struct {
		from operand
		to   *Table
		col  string
	}
	var cands []cand
	for _, o := range sc.ops {
		for _, l := range g.s.Links {
			if o.origin == l.From+"."+l.FromCol {
				cands = append(cands, cand{o, g.s.Table(l.To), l.ToCol})
			}
		}
	}
	var tiny []*Table
	for _, t := range g.s.Tables {
		if t.Rows <= g.opt.CrossRows && !sc.crossed && sc.rows*max(t.Rows, 1) <= g.opt.CrossProduct {
			tiny = append(tiny, t)
		}
	}
	if len(cands) == 0 || (len(tiny) > 0 && g.chance(8)) {
		if len(tiny) == 0 {
			return false
		}
		t := tiny[g.n(len(tiny))]
		it := FromItem{Table: t.Name, Alias: g.alias()}
		kind := CrossJoin
		if comma {
			kind = Comma
		}
		q.Joins = append(q.Joins, Join{Kind: kind, Item: it})
		tableScope(sc, t, it.Alias)
		sc.rows, sc.crossed = sc.rows*max(t.Rows, 1), true
		if sc.unique != nil && len(t.Key) > 0 {
			sc.unique = append(sc.unique, keyExprs(t, it.Alias)...)
		} else {
			sc.unique = nil
		}
		return true
	}
	if !g.opt.NoDerived && depth == 0 && !comma && g.chance(10) && g.derivedJoin(q, sc) {
		return true
	}
	c := cands[g.n(len(cands))]
	it := FromItem{Table: c.to.Name, Alias: g.alias()}
	// <=> on a link matches what = does (a key is never NULL), planned
	// as a hash join on (x IS NULL, COALESCE(x, 0)) keys.
	op := "="
	if g.chance(15) {
		op = "<=>"
	}
	cond := Expr(&Bin{Op: op, L: c.from.e, R: &Col{Qual: it.Alias, Name: c.col, T: c.from.e.Type()}, T: Bool})
	inner := &scope{}
	tableScope(inner, c.to, it.Alias)
	if comma {
		q.Joins = append(q.Joins, Join{Kind: Comma, Item: it})
		q.JoinConds = append(q.JoinConds, cond)
	} else {
		kind := []JoinKind{InnerJoin, InnerJoin, InnerJoin, LeftJoin, LeftJoin, LeftJoin, RightJoin}[g.n(7)]
		if g.chance(25) {
			// A condition on the joined table alone: on an outer join it
			// decides matches, not rows, which a filter would.
			cond = and(cond, g.pred(inner, g.opt.MaxDepth, 1))
		}
		if g.chance(15) {
			// A condition on the tables before the join alone: on a left
			// join it decides which of them find their match, never which
			// come back, so it must not be pushed below the join.
			cond = and(cond, g.pred(&scope{ops: sc.ops}, g.opt.MaxDepth, 1))
		}
		if g.chance(12) {
			// A non-equality across the two sides beside the key: the
			// hash join's residual, deciding matches of an outer join.
			o := sc.ops[g.n(len(sc.ops))]
			if same := inner.ofType(o.e.Type()); len(same) > 0 {
				op := []string{"<", "<=", ">", ">=", "<>"}[g.n(5)]
				cond = and(cond, &Bin{Op: op, L: o.e, R: same[g.n(len(same))].e, T: Bool})
			}
		}
		q.Joins = append(q.Joins, Join{Kind: kind, Item: it, On: cond})
		if kind == RightJoin {
			sc.unique = nil // unmatched rows of the right side repeat NULL keys
		}
	}
	sc.ops = append(sc.ops, inner.ops...)
	sc.tables = append(sc.tables, inner.tables...)
	return true
}

// derived is a grouped subquery used as a FROM item. Its group keys are
// plain columns, so links from them still apply; its aggregates are exact.
func (g *Gen) derived() (*Select, *scope) {
	q := &Select{}
	sc := g.from(q, 1, false)
	q.scope = sc
	if g.chance(50) {
		q.Where = g.pred(sc, 1, 0)
	}
	out := &scope{rows: sc.rows}
	for k := 1 + g.n(2); k > 0; k-- {
		o := sc.ops[g.n(len(sc.ops))]
		q.GroupBy = append(q.GroupBy, o.e)
		q.Items = append(q.Items, Item{o.e})
		out.ops = append(out.ops, o)
	}
	for k := 1 + g.n(2); k > 0; k-- {
		a := g.exactAgg(sc, 1)
		q.Items = append(q.Items, Item{a.e})
		out.ops = append(out.ops, a)
	}
	return q, out
}

// derivedRows is a subquery of rows used as a FROM item: columns and
// expressions of its FROM clause, sometimes its unique key (so the outer
// block may still number its rows), a window function, and DISTINCT or an
// ORDER BY on every column with a LIMIT (rows equal on every column are
// equal, so which of them a LIMIT keeps does not matter).
func (g *Gen) derivedRows() (*Select, *scope) {
	q := &Select{}
	in := g.from(q, 1, false)
	q.scope = in
	if g.chance(50) {
		q.Where = g.pred(in, 1, 0)
	}
	out := &scope{rows: in.rows}
	add := func(o operand) {
		q.Items = append(q.Items, Item{o.e})
		out.ops = append(out.ops, o)
	}
	for k := 1 + g.n(3); k > 0; k-- {
		if g.chance(70) {
			add(in.ops[g.n(len(in.ops))])
		} else {
			t := []Type{Int, Int, Decimal, String, Date}[g.n(5)]
			add(operand{e: g.scalar(t, in, 1, 1)})
		}
	}
	if in.unique != nil && g.chance(50) {
		out.unique = in.unique
		for _, u := range in.unique {
			out.uniquePos = append(out.uniquePos, len(q.Items))
			o := operand{e: u}
			for _, x := range in.ops {
				if x.e == u {
					o = x
				}
			}
			add(o)
		}
	}
	if !g.opt.NoWindows && g.chance(50) {
		w := g.window(in, 1)
		o := operand{e: w, values: []string{"0", "1", "2", "3", "5"}}
		if w.T != Int {
			o.values = valuesOf(in, w.Arg)
		}
		add(o)
	}
	switch {
	case g.chance(15):
		q.Distinct = true
	case g.chance(30):
		for i := range q.Items {
			q.OrderBy = append(q.OrderBy, OrderKey{Pos: i, Desc: g.chance(30)})
		}
		q.Limit = 1 + g.n(4*g.opt.Limit)
		q.Offset = g.offset()
	}
	return q, out
}

// derivedSet is a set operation of two or three blocks used as a FROM
// item, without ORDER BY. The rows of UNION, INTERSECT and EXCEPT are
// distinct, so all their columns together are unique.
func (g *Gen) derivedSet() (*SetOp, *scope) {
	s := g.setOfBlocks(1)
	out := &scope{rows: s.rows(), ops: opsOf(s.first())}
	if s.Op != "union all" && (!s.Flat || s.LeftSet.Op != "union all") {
		// Flat, a UNION ALL b INTERSECT c is a UNION ALL (b INTERSECT c).
		for i := range out.ops {
			out.uniquePos = append(out.uniquePos, i)
			out.unique = append(out.unique, out.ops[i].e)
		}
	}
	return s, out
}

// setOfBlocks is l op r, or (l op r) op r2 (sometimes written without
// the parentheses, to test INTERSECT's precedence), of blocks at depth
// with the first block's column types.
func (g *Gen) setOfBlocks(depth int) *SetOp {
	op := func() string { return []string{"union all", "union", "intersect", "except"}[g.n(4)] }
	l := g.selectBlock(depth, false, nil)
	l.From.CTE = false // a WITH clause would end up mid-statement
	var types []Type
	for _, it := range l.Items {
		types = append(types, it.E.Type())
	}
	r := g.selectBlock(depth, false, types)
	r.From.CTE = false
	s := &SetOp{Op: op(), Left: l, Right: r}
	if g.chance(25) {
		r2 := g.selectBlock(depth, false, types)
		r2.From.CTE = false
		s = &SetOp{Op: op(), LeftSet: s, Right: r2, Flat: g.chance(50)}
	}
	return s
}

// first is the set operation's first block, which names its columns.
func (s *SetOp) first() *Select {
	if s.LeftSet != nil {
		return s.LeftSet.first()
	}
	return s.Left
}

// rows bounds the operation's row count: the sum of its blocks'.
func (s *SetOp) rows() int64 {
	n := s.Right.scope.rows
	if s.LeftSet != nil {
		return n + s.LeftSet.rows()
	}
	return n + s.Left.scope.rows
}

// opsOf is what a block's output columns are, as operands: an item that
// is an operand of the block's scope keeps its values and origin.
func opsOf(q *Select) []operand {
	var out []operand
	for _, it := range q.Items {
		o := operand{e: it.E}
		for _, x := range q.scope.ops {
			if x.e == it.E {
				o = x
			}
		}
		out = append(out, o)
	}
	return out
}

// cteAgain joins the CTE of q's FROM item to itself on its group keys (a
// second reference to one WITH clause, which the planner may compute
// once), inner or left: one match per row, so the row bound stays.
func (g *Gen) cteAgain(q *Select, sc *scope, sub *Select, subScope *scope) {
	alias := g.alias()
	var cond Expr
	var ops []operand
	for i, it := range sub.Items {
		c := &Col{Qual: alias, Name: "c" + strconv.Itoa(i), T: it.E.Type()}
		o := operand{e: c}
		if i < len(subScope.ops) {
			o.values = subScope.ops[i].values
		}
		ops = append(ops, o)
		if i < len(sub.GroupBy) {
			// A NULL group key is a group too: <=> matches it to itself.
			cond = and(cond, &Bin{Op: "<=>", L: sc.ops[i].e, R: c, T: Bool})
		}
	}
	if g.chance(30) {
		// Fewer matches: a filter on the second reference alone.
		cond = and(cond, g.pred(&scope{ops: ops}, g.opt.MaxDepth, 1))
	}
	kind := []JoinKind{InnerJoin, LeftJoin}[g.n(2)]
	q.Joins = append(q.Joins, Join{Kind: kind, Item: FromItem{Table: q.From.Alias, Alias: alias}, On: cond})
	sc.ops = append(sc.ops, ops...)
}

// derivedJoin joins a subquery grouped on one column, on its key. The
// key is unique in the subquery, so the join keeps sc's row bound; a NULL
// key is a group of its own, which `=` never matches and `<=>` matches
// with the outer NULLs. False when no column in scope has the key's type.
func (g *Gen) derivedJoin(q *Select, sc *scope) bool {
	sub := &Select{}
	in := g.from(sub, 1, false)
	sub.scope = in
	if g.chance(40) {
		sub.Where = g.pred(in, 1, 1)
	}
	key := in.ops[g.n(len(in.ops))]
	same := sc.ofType(key.e.Type())
	if len(same) == 0 {
		return false
	}
	outer := same[g.n(len(same))]
	sub.GroupBy = []Expr{key.e}
	sub.Items = []Item{{key.e}}
	out := &scope{}
	alias := g.alias()
	kcol := &Col{Qual: alias, Name: "c0", T: key.e.Type()}
	out.ops = append(out.ops, operand{e: kcol, values: key.values})
	for k := 1 + g.n(2); k > 0; k-- {
		a := g.exactAgg(in, 1)
		sub.Items = append(sub.Items, Item{a.e})
		out.ops = append(out.ops, operand{e: &Col{Qual: alias, Name: "c" + strconv.Itoa(len(sub.Items)-1), T: a.e.Type()}, values: a.values})
	}
	cond := Expr(&Bin{Op: []string{"=", "=", "<=>"}[g.n(3)], L: outer.e, R: kcol, T: Bool})
	kind := []JoinKind{InnerJoin, LeftJoin, LeftJoin, RightJoin}[g.n(4)]
	q.Joins = append(q.Joins, Join{Kind: kind, Item: FromItem{Sub: sub, Alias: alias}, On: cond})
	if kind == RightJoin {
		sc.unique = nil
	}
	sc.ops = append(sc.ops, out.ops...)
	return true
}

// aggregate makes q a grouped query: group keys first in the select
// list, then aggregates.
func (g *Gen) aggregate(q *Select, sc *scope, depth int, top bool) {
	for k := g.n(4); k > 0; k-- {
		var e Expr
		if g.chance(75) {
			e = sc.ops[g.n(len(sc.ops))].e
		} else {
			e = g.scalar([]Type{Int, String, Date, Decimal}[g.n(4)], sc, depth, 1)
		}
		if !refsColumn(e) {
			// A constant key: whether HAVING sees ROLLUP's NULL in its
			// place is where MySQL and DuckDB part.
			e = sc.ops[g.n(len(sc.ops))].e
		}
		if d := sc.ofType(Decimal); len(d) > 0 && g.chance(8) {
			// A DOUBLE key, negated: a zero becomes -0.0, which must
			// group (and partition, and compare) with 0.0. Both engines
			// convert a decimal to the same nearest double.
			e = &Bin{Op: "*", L: &Cast{E: d[g.n(len(d))].e, T: Float}, R: &Lit{Val: "-1", T: Float}, T: Float}
		}
		if slices.ContainsFunc(q.GroupBy, func(k Expr) bool { return Render(k, MySQL) == Render(e, MySQL) }) {
			continue // a repeated key: which copy ROLLUP sets to NULL is the engine's choice
		}
		q.GroupBy = append(q.GroupBy, e)
		q.Items = append(q.Items, Item{e})
	}
	var aggOps []operand
	for k := 1 + g.n(3); k > 0; k-- {
		var a operand
		if top && g.chance(20) {
			a = g.inexactAgg(sc, depth)
		} else {
			a = g.exactAgg(sc, depth)
		}
		q.Items = append(q.Items, Item{a.e})
		if !inexact(a.e) {
			aggOps = append(aggOps, a)
		}
	}
	var grouping *Func
	if len(q.GroupBy) > 0 && top && !g.opt.NoRollup && g.chance(10) {
		q.Rollup = true
		if g.chance(60) {
			// GROUPING(k): 1 where ROLLUP replaced k, so a NULL key of
			// the data tells from a subtotal.
			grouping = &Func{Name: "grouping", T: Int}
			grouping.Args = []Expr{q.GroupBy[g.n(len(q.GroupBy))]} // fsql declines more arguments
			q.Items = append(q.Items, Item{grouping})
		}
	}
	if g.chance(30) {
		hs := &scope{}
		for _, k := range q.GroupBy {
			hs.ops = append(hs.ops, operand{e: k, values: valuesOf(sc, k)})
		}
		if grouping != nil {
			hs.ops = append(hs.ops, operand{e: grouping, values: []string{"0", "1", "2", "3"}})
		}
		hs.ops = append(hs.ops, aggOps...)
		hs.ops = append(hs.ops, g.exactAgg(sc, depth))
		q.Having = g.pred(hs, g.opt.MaxDepth, 0)
	}
	if !g.opt.NoSubqueries && depth < g.opt.MaxDepth && !q.Rollup && g.chance(12) {
		// A subquery in HAVING, correlated on the group keys that are
		// columns, or compared with an aggregate.
		ks := &scope{tables: sc.tables}
		for _, k := range q.GroupBy {
			for _, o := range sc.ops {
				if o.e == k {
					ks.ops = append(ks.ops, o)
				}
			}
		}
		switch {
		case len(aggOps) > 0 && (len(ks.ops) == 0 || g.chance(50)):
			a := aggOps[g.n(len(aggOps))]
			op := []string{"=", "<", ">", "<=", ">=", "<>"}[g.n(6)]
			q.Having = and(q.Having, &Bin{Op: op, L: a.e, R: g.scalarSubOf(ks, depth, a), T: Bool})
		case len(ks.ops) > 0:
			q.Having = and(q.Having, g.subPred(ks, depth))
		}
	}
	if top && !g.opt.NoWindows && len(aggOps) > 0 && len(q.GroupBy) > 0 && !q.Rollup && g.chance(12) {
		// Any window over the grouped rows: sum(sum(x)) OVER, lag and
		// lead ordered on the group keys (unique per row), frames over
		// aggregates. The window sees the group keys and aggregates only.
		gs := &scope{unique: q.GroupBy}
		for _, k := range q.GroupBy {
			gs.ops = append(gs.ops, operand{e: k, values: valuesOf(sc, k)})
		}
		gs.ops = append(gs.ops, aggOps...)
		q.Items = append(q.Items, Item{g.window(gs, depth)})
	} else if top && !g.opt.NoWindows && len(aggOps) > 0 && g.chance(8) {
		a := aggOps[g.n(len(aggOps))].e
		w := &Window{Fn: []string{"rank", "dense_rank"}[g.n(2)], Order: []OrderItem{{E: a, Desc: g.chance(50)}}, T: Int}
		if len(q.GroupBy) > 1 && g.chance(50) {
			w.Partition = []Expr{q.GroupBy[0]}
		}
		q.Items = append(q.Items, Item{w})
	}
	if !top {
		return
	}
	for i := range q.GroupBy {
		q.OrderBy = append(q.OrderBy, OrderKey{Pos: i, Desc: g.chance(30)})
	}
	if len(q.OrderBy) == 0 {
		return // one row
	}
	for i := len(q.GroupBy); i < len(q.Items); i++ {
		if !inexact(q.Items[i].E) && g.chance(30) {
			q.OrderBy = append(q.OrderBy, OrderKey{Pos: i, Desc: g.chance(30)})
		}
	}
	total := !q.Rollup
	if q.Rollup && g.chance(40) {
		// A LIMIT over ROLLUP's rows: the order is total only with
		// GROUPING() of every key beside the keys, since a subtotal's NULL
		// ties with a NULL of the data.
		for _, k := range q.GroupBy {
			pos := -1
			if grouping != nil && grouping.Args[0] == k {
				pos = slices.IndexFunc(q.Items, func(it Item) bool { return it.E == Expr(grouping) })
			}
			if pos < 0 {
				pos = len(q.Items)
				q.Items = append(q.Items, Item{&Func{Name: "grouping", Args: []Expr{k}, T: Int}})
			}
			q.OrderBy = append(q.OrderBy, OrderKey{Pos: pos, Desc: g.chance(50)})
		}
		total = true
	}
	if total && g.chance(40) {
		q.Limit = 1 + g.n(g.opt.Limit)
		q.Offset = g.offset()
	}
}

// valuesOf finds constants for a group key: its column's values.
func valuesOf(sc *scope, e Expr) []string {
	for _, o := range sc.ops {
		if o.e == e {
			return o.values
		}
	}
	return nil
}

func (g *Gen) numeric(sc *scope) (operand, bool) {
	nums := append(sc.ofType(Int), sc.ofType(Decimal)...)
	if len(nums) == 0 {
		return operand{}, false
	}
	return nums[g.n(len(nums))], true
}

// exactAgg is an aggregate both engines compute exactly.
func (g *Gen) exactAgg(sc *scope, depth int) operand {
	switch g.n(12) {
	case 11:
		return operand{e: g.groupConcat(sc)}
	case 1:
		o := sc.ops[g.n(len(sc.ops))]
		return operand{e: &Agg{Fn: "count", Arg: o.e, T: Int}, values: []string{"0", "1", "2", "5"}}
	case 2:
		o := sc.ops[g.n(len(sc.ops))]
		a := &Agg{Fn: "count", Distinct: true, Arg: o.e, T: Int}
		for k := g.n(3); k > 0 && g.chance(40); k-- {
			a.More = append(a.More, sc.ops[g.n(len(sc.ops))].e)
		}
		return operand{e: a, values: []string{"1", "2", "3"}}
	case 3, 4:
		if o, ok := g.numeric(sc); ok {
			arg := o.e
			if g.chance(30) {
				arg = g.scalar(o.e.Type(), sc, depth, 1)
			}
			if o.e.Type() == Int && g.chance(15) {
				// Terms near 2^61: their sum passes BIGINT, which MySQL's
				// DECIMAL sum and DuckDB's HUGEINT hold exactly.
				arg = &Bin{Op: "*", L: o.e, R: &Lit{Val: "1000000000000", T: Int}, T: Int}
			}
			return operand{e: &Agg{Fn: "sum", Arg: arg, T: o.e.Type()}, values: o.values}
		}
	case 5, 6, 7:
		o := sc.ops[g.n(len(sc.ops))]
		fn := []string{"min", "max"}[g.n(2)]
		return operand{e: &Agg{Fn: fn, Arg: o.e, T: o.e.Type()}, values: o.values}
	case 9:
		if o, ok := g.numeric(sc); ok {
			return operand{e: &Agg{Fn: "sum", Distinct: true, Arg: o.e, T: o.e.Type()}, values: o.values}
		}
	case 10:
		o := sc.ops[g.n(len(sc.ops))]
		fn := []string{"min", "max"}[g.n(2)]
		return operand{e: &Agg{Fn: fn, Distinct: true, Arg: o.e, T: o.e.Type()}, values: o.values}
	case 8:
		if o, ok := g.numeric(sc); ok {
			// An expression over aggregates.
			a := &Agg{Fn: "max", Arg: o.e, T: o.e.Type()}
			b := &Agg{Fn: "min", Arg: o.e, T: o.e.Type()}
			return operand{e: &Bin{Op: "-", L: a, R: b, T: o.e.Type()}, values: []string{"0", "1"}}
		}
	}
	return operand{e: &Agg{Fn: "count", T: Int}, values: []string{"0", "1", "2", "3", "10"}}
}

// groupConcat is GROUP_CONCAT in a total order, so its text is the
// same in both engines: on the value itself (equal values are equal
// text), or on any column and then a unique key of the FROM row. DISTINCT
// orders on the value, which must then be a string or a date (DuckDB
// sorts the text it concatenates, whose order for those is the value's).
func (g *Gen) groupConcat(sc *scope) *Agg {
	o := sc.ops[g.n(len(sc.ops))]
	if o.e.Type() == Float || o.setDecimal {
		// A double's text differs (MySQL 2 and -0, DuckDB 2.0 and -0.0),
		// and so does a set operation's decimal's (its scale).
		o.e = &Cast{E: o.e, T: Int}
	}
	a := &Agg{Fn: "group_concat", Arg: o.e, Sep: []string{",", ",", ", ", "", "|"}[g.n(5)], T: String}
	t := o.e.Type()
	switch {
	case (t == String || t == Date) && g.chance(30):
		a.Distinct = true
		a.Order = []OrderItem{{E: o.e, Desc: g.chance(40)}}
	case sc.unique != nil && g.chance(60):
		if g.chance(50) {
			a.Order = append(a.Order, OrderItem{E: sc.ops[g.n(len(sc.ops))].e, Desc: g.chance(40)})
		}
		for _, u := range sc.unique {
			a.Order = append(a.Order, OrderItem{E: u, Desc: g.chance(20)})
		}
	default:
		a.Order = []OrderItem{{E: o.e, Desc: g.chance(40)}}
	}
	return a
}

// inexactAgg is an aggregate whose value the engines give in different
// types (decimal against double): output only.
func (g *Gen) inexactAgg(sc *scope, depth int) operand {
	o, ok := g.numeric(sc)
	if !ok {
		return g.exactAgg(sc, depth)
	}
	switch g.n(4) {
	case 0:
		return operand{e: &Agg{Fn: "avg", Arg: o.e, T: Float}}
	case 1:
		return operand{e: &Agg{Fn: "stddev_samp", Arg: o.e, T: Float}}
	case 2:
		s := &Agg{Fn: "sum", Arg: o.e, T: o.e.Type()}
		return operand{e: &Bin{Op: "/", L: s, R: &Agg{Fn: "count", T: Int}, T: Float}}
	default:
		return operand{e: &Agg{Fn: "avg", Distinct: true, Arg: o.e, T: Float}}
	}
}

// rows makes q a query returning rows: scalar items, maybe a window, and
// on top an ORDER BY on every column with a LIMIT.
func (g *Gen) rows(q *Select, sc *scope, depth int, top bool, types []Type) {
	forced := types != nil
	if !forced {
		for k := 1 + g.n(4); k > 0; k-- {
			types = append(types, []Type{Int, Int, Decimal, String, String, Date}[g.n(6)])
		}
	}
	for _, t := range types {
		var e Expr
		switch {
		case !forced && g.chance(8) && !g.opt.NoSubqueries && depth < g.opt.MaxDepth && (t == Int || t == Decimal):
			e = g.scalarSub(sc, depth, t)
		default:
			e = g.scalar(t, sc, depth, 0)
		}
		q.Items = append(q.Items, Item{e})
	}
	if top && !forced && !g.opt.NoWindows && g.chance(20) {
		q.Items = append(q.Items, Item{g.window(sc, depth)})
		if g.chance(25) {
			q.Items = append(q.Items, Item{g.window(sc, depth)})
		}
	}
	q.Distinct = g.chance(12)
	if !top {
		return
	}
	for i := range q.Items {
		q.OrderBy = append(q.OrderBy, OrderKey{Pos: i, Desc: g.chance(30)})
	}
	q.Limit = 1 + g.n(g.opt.Limit)
	q.Offset = g.offset()
}

// offset is an OFFSET for a LIMIT under an ORDER BY that is total on the
// output (rows equal on every key are equal rows), so which rows are
// skipped is unambiguous: mostly none, sometimes past the last row.
func (g *Gen) offset() int {
	if !g.chance(20) {
		return 0
	}
	return []int{1, 2, 5, 17, 1000}[g.n(5)]
}

// window is a window function whose value is unambiguous: ranking
// functions tie peers alike, ROW_NUMBER orders on a unique key, aggregates
// use the default frame (peers included).
func (g *Gen) window(sc *scope, depth int) *Window {
	w := &Window{T: Int}
	for k := g.n(3); k > 0; k-- {
		w.Partition = append(w.Partition, sc.ops[g.n(len(sc.ops))].e)
	}
	order := func() {
		for k := 1 + g.n(2); k > 0; k-- {
			w.Order = append(w.Order, OrderItem{E: sc.ops[g.n(len(sc.ops))].e, Desc: g.chance(40)})
		}
	}
	switch g.n(8) {
	case 0:
		w.Fn = "rank"
		if depth == 0 && g.chance(30) {
			// Doubles from ranks and counts, the same division in both
			// engines; output only, so never under a filter.
			w.Fn, w.T = []string{"percent_rank", "cume_dist"}[g.n(2)], Float
		}
		order()
	case 1:
		w.Fn = "dense_rank"
		order()
	case 2:
		if sc.unique == nil {
			w.Fn = "count"
			break
		}
		w.Fn = "row_number"
		order()
		for _, u := range sc.unique {
			w.Order = append(w.Order, OrderItem{E: u})
		}
	case 3:
		w.Fn = "count"
		if g.chance(50) {
			order()
		}
	case 4:
		if sc.unique == nil {
			w.Fn = "dense_rank"
			order()
			break
		}
		// Functions that see rows one by one in window order: the order
		// ends on a unique key, so it is total and their values are too.
		order()
		for _, u := range sc.unique {
			w.Order = append(w.Order, OrderItem{E: u, Desc: g.chance(20)})
		}
		o := sc.ops[g.n(len(sc.ops))]
		switch g.n(5) {
		case 0, 1:
			w.Fn, w.Arg, w.T = []string{"lag", "lead"}[g.n(2)], o.e, o.e.Type()
			if g.chance(60) {
				w.More = append(w.More, &Lit{Val: strconv.Itoa(g.n(4)), T: Int})
				if g.chance(50) {
					w.More = append(w.More, g.lit(o))
				}
			}
		case 2:
			w.Fn, w.Arg, w.T = []string{"first_value", "last_value"}[g.n(2)], o.e, o.e.Type()
			if g.chance(50) {
				w.Frame = g.rowsFrame()
			}
		case 3:
			if g.chance(50) {
				// The n-th row of the frame, NULL while the frame is
				// shorter.
				w.Fn, w.Arg, w.T = "nth_value", o.e, o.e.Type()
				w.More = []Expr{&Lit{Val: strconv.Itoa(1 + g.n(3)), T: Int}}
				if g.chance(60) {
					w.Frame = g.rowsFrame()
				}
				break
			}
			w.Fn = "ntile"
			w.More = []Expr{&Lit{Val: strconv.Itoa(1 + g.n(5)), T: Int}}
		default:
			w.Fn, w.Arg, w.T = []string{"min", "max"}[g.n(2)], o.e, o.e.Type()
			if n, ok := g.numeric(sc); ok && g.chance(60) {
				w.Fn, w.Arg, w.T = "sum", n.e, n.e.Type()
			} else if g.chance(20) {
				w.Fn, w.Arg, w.T = "count", nil, Int
			}
			w.Frame = g.rowsFrame()
		}
	case 5:
		// A RANGE frame with an offset: one integer ORDER BY key, whose
		// peers (NULLs included) share a frame, so no unique key is
		// needed.
		ints := sc.ofType(Int)
		dates := sc.ofType(Date)
		if len(ints) == 0 && len(dates) == 0 {
			w.Fn = "count"
			break
		}
		w.Fn, w.T = "count", Int
		if n, ok := g.numeric(sc); ok && g.chance(70) {
			w.Fn, w.Arg, w.T = []string{"sum", "min", "max"}[g.n(3)], n.e, n.e.Type()
		}
		if len(dates) > 0 && (len(ints) == 0 || g.chance(35)) {
			// A DATE key's frame spans an interval of days or months.
			w.Order = []OrderItem{{E: dates[g.n(len(dates))].e, Desc: g.chance(40)}}
			w.Frame, w.DuckFrame = g.dateRangeFrame()
			break
		}
		w.Order = []OrderItem{{E: ints[g.n(len(ints))].e, Desc: g.chance(40)}}
		w.Frame = g.rangeFrame()
	default:
		o := sc.ops[g.n(len(sc.ops))]
		w.Fn, w.Arg, w.T = []string{"min", "max"}[g.n(2)], o.e, o.e.Type()
		if n, ok := g.numeric(sc); ok && g.chance(50) {
			w.Fn, w.Arg, w.T = "sum", n.e, n.e.Type()
		}
		if g.chance(60) {
			order()
		}
	}
	return w
}

// rowsFrame is a ROWS frame; the window's order must be total.
func (g *Gen) rowsFrame() string {
	bound := func(follow bool) string {
		switch g.n(4) {
		case 0:
			if follow {
				return "unbounded following"
			}
			return "unbounded preceding"
		case 1:
			return "current row"
		}
		if follow {
			return strconv.Itoa(g.n(4)) + " following"
		}
		return strconv.Itoa(g.n(4)) + " preceding"
	}
	switch g.n(4) {
	case 0:
		return "rows " + bound(false)
	case 1:
		// A frame that may lie wholly before or after the row (empty at
		// a partition's edge).
		return fmt.Sprintf("rows between %d following and %d following", g.n(2), 2+g.n(3))
	}
	return "rows between " + bound(false) + " and " + bound(true)
}

// rangeFrame is a RANGE frame with integer offsets.
func (g *Gen) rangeFrame() string {
	switch g.n(3) {
	case 0:
		return fmt.Sprintf("range between %d preceding and current row", g.n(20))
	case 1:
		return fmt.Sprintf("range between current row and %d following", g.n(20))
	}
	return fmt.Sprintf("range between %d preceding and %d following", g.n(10), g.n(10))
}

// dateRangeFrame is a RANGE frame with INTERVAL offsets, in MySQL's and
// DuckDB's spelling.
func (g *Gen) dateRangeFrame() (string, string) {
	n, m := g.n(40), g.n(40)
	unit := []string{"day", "day", "month"}[g.n(3)]
	if unit == "month" {
		n, m = n%4, m%4
	}
	my := func(k int) string { return fmt.Sprintf("interval %d %s", k, unit) }
	duck := func(k int) string { return fmt.Sprintf("interval (%d) %s", k, unit) }
	switch g.n(3) {
	case 0:
		f := "range between %s preceding and current row"
		return fmt.Sprintf(f, my(n)), fmt.Sprintf(f, duck(n))
	case 1:
		f := "range between current row and %s following"
		return fmt.Sprintf(f, my(n)), fmt.Sprintf(f, duck(n))
	}
	f := "range between %s preceding and %s following"
	return fmt.Sprintf(f, my(n), my(m)), fmt.Sprintf(f, duck(n), duck(m))
}

// lit is a constant of o's type: one of its values, a made-up one, or
// (rarely) NULL.
func (g *Gen) lit(o operand) *Lit {
	t := o.e.Type()
	if g.chance(4) {
		return &Lit{Null: true, T: t}
	}
	if len(o.values) > 0 && !g.chance(15) {
		return &Lit{Val: o.values[g.n(len(o.values))], T: t}
	}
	return g.anyLit(t)
}

func (g *Gen) anyLit(t Type) *Lit {
	switch t {
	case Int:
		return &Lit{Val: strconv.Itoa(g.n(21) - 5), T: t}
	case Decimal:
		return &Lit{Val: fmt.Sprintf("%d.%02d", g.n(100)-20, g.n(100)), T: t}
	case String:
		return &Lit{Val: []string{"a", "A", "", "b", "ab", "x y", "zz"}[g.n(7)], T: t}
	case Date:
		if g.chance(30) {
			// Month ends, where adding months clamps the day.
			return &Lit{Val: []string{"2000-01-31", "2000-02-29", "2001-02-28", "1999-03-31", "2002-08-31", "2000-12-31", "2001-04-30", "2003-05-31",
				"1999-12-31", "2001-01-01", "2004-02-29", "2002-12-31"}[g.n(12)], T: t}
		}
		return &Lit{Val: fmt.Sprintf("%d-%02d-%02d", 1998+g.n(6), 1+g.n(12), 1+g.n(28)), T: t}
	case Float:
		return &Lit{Val: []string{"0", "-0.0", "1.5", "-2.25", "100"}[g.n(5)], T: t}
	}
	return &Lit{Val: "true", T: Bool}
}

// pred is a random predicate over sc. depth is the subquery nesting;
// size grows with the expression so recursion ends.
func (g *Gen) pred(sc *scope, depth, size int) Expr {
	o := sc.ops[g.n(len(sc.ops))]
	k := g.n(20)
	if size > 3 && k >= 7 && k <= 9 {
		k = 0
	}
	switch k {
	case 5, 6:
		t := o.e.Type()
		if (t == Int || t == Decimal) && g.chance(20) {
			// An integer against a decimal: both engines compare the
			// exact values.
			t = Int + Decimal - t
		}
		if same := sc.ofType(t); len(same) > 1 || (t != o.e.Type() && len(same) > 0) {
			r := same[g.n(len(same))]
			return &Bin{Op: []string{"=", "<>", "<", ">=", "<=>"}[g.n(5)], L: o.e, R: r.e, T: Bool}
		}
	case 7, 8:
		return &Bin{Op: []string{"and", "or"}[g.n(2)], L: g.pred(sc, depth, size+1), R: g.pred(sc, depth, size+1), T: Bool}
	case 9:
		if g.chance(25) {
			// IS [NOT] TRUE|FALSE: two-valued, so a NULL of an outer
			// join's optional side may pass it.
			return &Truth{E: g.pred(sc, depth, size+1), False: g.chance(50), Not: g.chance(50)}
		}
		return &Not{E: g.pred(sc, depth, size+1)}
	case 10:
		return &IsNull{E: o.e, Not: g.chance(50)}
	case 11:
		lo, hi := g.lit(o), g.lit(o)
		return &Between{E: o.e, Lo: lo, Hi: hi, Not: g.chance(25)}
	case 12:
		in := &InList{E: o.e, Not: g.chance(30)}
		for j := 1 + g.n(4); j > 0; j-- {
			in.List = append(in.List, g.lit(o))
		}
		return in
	case 13:
		if s := sc.ofType(String); len(s) > 0 {
			o = s[g.n(len(s))]
			if g.chance(30) {
				return g.collated(o)
			}
			return &Like{E: o.e, Pattern: g.pattern(o), Not: g.chance(25)}
		}
	case 14, 15, 16:
		if !g.opt.NoSubqueries && depth < g.opt.MaxDepth && len(sc.tables) > 0 {
			return g.subPred(sc, depth)
		}
	case 17, 18:
		// A comparison of a computed value.
		t := o.e.Type()
		e := g.scalar(t, sc, depth, size+1)
		return &Bin{Op: []string{"=", "<>", "<", ">", "<=", ">="}[g.n(6)], L: e, R: g.lit(o), T: Bool}
	case 19:
		c := &Case{Whens: []Expr{g.pred(sc, depth, size+2)}, Thens: []Expr{&Lit{Val: "1", T: Int}}, Else: &Lit{Val: "0", T: Int}, T: Int}
		return &Bin{Op: "=", L: c, R: &Lit{Val: "1", T: Int}, T: Bool}
	}
	return &Bin{Op: []string{"=", "<>", "<", ">", "<=", ">=", "=", "<=>"}[g.n(8)], L: o.e, R: g.lit(o), T: Bool}
}

// collated compares o case-insensitively with its values, their case
// changed, by = or <> or IN.
func (g *Gen) collated(o operand) Expr {
	flip := func() Expr {
		l := g.lit(o)
		if !l.Null {
			l.Val = strings.TrimRight(l.Val, " ")
			if g.chance(50) {
				l.Val = strings.ToLower(l.Val)
			} else {
				l.Val = strings.ToUpper(l.Val)
			}
		}
		return l
	}
	c := &Collate{E: o.e}
	if g.chance(30) {
		in := &InList{E: c, Not: g.chance(30)}
		for j := 1 + g.n(3); j > 0; j-- {
			in.List = append(in.List, flip())
		}
		return in
	}
	return &Bin{Op: []string{"=", "<>"}[g.n(2)], L: c, R: flip(), T: Bool}
}

// pattern is a LIKE pattern built from one of o's values.
func (g *Gen) pattern(o operand) string {
	v := "a"
	if len(o.values) > 0 {
		v = o.values[g.n(len(o.values))]
	}
	v = strings.NewReplacer(`\`, "", "%", "", "_", "").Replace(v)
	if len(v) > 3 {
		v = v[:1+g.n(3)]
	}
	switch g.n(4) {
	case 0:
		return v + "%"
	case 1:
		return "%" + v + "%"
	case 2:
		if v != "" {
			return "_" + v[1:] + "%"
		}
	}
	return v
}

// scalar is an exact expression of type t over sc.
func (g *Gen) scalar(t Type, sc *scope, depth, size int) Expr {
	cands := sc.ofType(t)
	col := func() Expr {
		if len(cands) == 0 {
			return g.anyLit(t)
		}
		if size > 0 && g.chance(3) {
			// A typed NULL argument: every function and operator over it
			// must give NULL (or its documented value) in both engines.
			return &Cast{E: &Lit{Null: true, T: t}, T: t, Prec: 7, Scale: 2}
		}
		return cands[g.n(len(cands))].e
	}
	if size > 2 {
		return col()
	}
	k := g.n(10)
	if k < 4 {
		return col()
	}
	switch t {
	case Int:
		switch k {
		case 4:
			return &Bin{Op: []string{"+", "-", "*"}[g.n(3)], L: col(), R: &Lit{Val: strconv.Itoa(g.n(7) - 2), T: Int}, T: Int}
		case 5:
			return &Bin{Op: []string{"+", "-"}[g.n(2)], L: col(), R: g.scalar(Int, sc, depth, size+1), T: Int}
		case 6:
			return &Bin{Op: []string{"%", "div"}[g.n(2)], L: col(), R: &Lit{Val: strconv.Itoa(g.n(6)), T: Int}, T: Int}
		case 7:
			if s := sc.ofType(String); len(s) > 0 && g.chance(50) {
				if g.chance(30) {
					// Position of a piece of one of its values (1-based, 0
					// when absent, NULL of NULL).
					o := s[g.n(len(s))]
					if g.chance(40) {
						return &Func{Name: "locate", Args: []Expr{&Lit{Val: g.piece(o), T: String}, o.e}, T: Int}
					}
					return &Func{Name: "instr", Args: []Expr{o.e, &Lit{Val: g.piece(o), T: String}}, T: Int}
				}
				return &Func{Name: []string{"length", "char_length"}[g.n(2)], Args: []Expr{s[g.n(len(s))].e}, T: Int}
			}
			if d := sc.ofType(Date); len(d) > 0 {
				if g.chance(30) {
					return &Func{Name: "datediff", Args: []Expr{g.scalar(Date, sc, depth, size+1), g.scalar(Date, sc, depth, size+1)}, T: Int}
				}
				arg := Expr(d[g.n(len(d))].e)
				if g.chance(30) {
					arg = g.scalar(Date, sc, depth, size+1) // month ends, intervals
				}
				return &Func{Name: []string{"year", "month", "day", "quarter", "dayofyear", "dayofweek", "weekday", "dayofmonth"}[g.n(8)], Args: []Expr{arg}, T: Int}
			}
			return &Func{Name: "abs", Args: []Expr{col()}, T: Int}
		case 8:
			if d := sc.ofType(Decimal); len(d) > 0 && g.chance(50) {
				return &Cast{E: d[g.n(len(d))].e, T: Int}
			}
			return g.choice(Int, sc, depth, size)
		}
	case Decimal:
		switch k {
		case 4:
			return &Bin{Op: []string{"+", "-"}[g.n(2)], L: col(), R: g.scalar([]Type{Int, Decimal}[g.n(2)], sc, depth, size+1), T: Decimal}
		case 5:
			return &Bin{Op: "*", L: col(), R: &Lit{Val: []string{"2", "1.5", "0.01", "-1"}[g.n(4)], T: Decimal}, T: Decimal}
		case 6:
			return &Func{Name: "round", Args: []Expr{col(), &Lit{Val: strconv.Itoa(g.n(3)), T: Int}}, T: Decimal}
		case 7:
			return &Func{Name: []string{"abs", "floor", "ceil"}[g.n(3)], Args: []Expr{col()}, T: Decimal}
		case 8:
			if i := sc.ofType(Int); len(i) > 0 && g.chance(50) {
				return &Cast{E: i[g.n(len(i))].e, T: Decimal, Prec: 12, Scale: 2}
			}
			return g.choice(Decimal, sc, depth, size)
		}
	case String:
		switch k {
		case 4:
			return &Func{Name: []string{"upper", "lower", "trim", "ltrim", "rtrim", "reverse"}[g.n(6)], Args: []Expr{col()}, T: String}
		case 5:
			if g.chance(50) {
				return g.stringFunc(col(), sc, depth, size)
			}
			return &Func{Name: "substr", Args: []Expr{col(), &Lit{Val: strconv.Itoa(1 + g.n(3)), T: Int}, &Lit{Val: strconv.Itoa(1 + g.n(4)), T: Int}}, T: String}
		case 6:
			return &Func{Name: "concat", Args: []Expr{col(), g.scalar(String, sc, depth, size+1)}, T: String}
		case 7:
			if i := sc.ofType(Int); len(i) > 0 {
				return &Cast{E: i[g.n(len(i))].e, T: String}
			}
			return col()
		case 8:
			return g.choice(String, sc, depth, size)
		}
	case Date:
		switch k {
		case 4, 5:
			return &DateAdd{E: col(), N: g.n(61) - 30, Unit: []string{"day", "day", "week", "month", "year"}[g.n(5)],
				Form: []string{"", "", "-", "date_add", "date_sub"}[g.n(5)]}
		case 6:
			if g.chance(50) {
				return &Func{Name: "last_day", Args: []Expr{col()}, T: Date}
			}
			// Months from a month end: 01-31 + 1 month is 02-28 or 02-29.
			return &DateAdd{E: g.anyLit(Date), N: g.n(25) - 12, Unit: []string{"month", "month", "quarter", "year"}[g.n(4)]}
		case 7, 8:
			return g.choice(Date, sc, depth, size)
		}
	}
	// k == 9: a conditional, in a select item sometimes over a scalar
	// subquery (evaluated only where its WHEN holds).
	then := col()
	if size == 0 && (t == Int || t == Decimal) && !g.opt.NoSubqueries && depth < g.opt.MaxDepth && len(sc.tables) > 0 && g.chance(20) {
		then = g.scalarSub(sc, depth, t)
	}
	c := &Case{T: t}
	var subject operand
	if g.chance(25) {
		// The simple form: CASE x WHEN v1 THEN ... (x = v1, so a NULL x
		// or a NULL v matches nothing and falls to ELSE).
		subject = sc.ops[g.n(len(sc.ops))]
		c.Operand = subject.e
	}
	when := func() Expr {
		if c.Operand != nil {
			return g.lit(subject)
		}
		return g.pred(sc, depth, size+2)
	}
	c.Whens, c.Thens = []Expr{when()}, []Expr{then}
	for k := g.n(3); k > 0 && g.chance(50); k-- {
		// Later WHENs count only where the earlier ones are not true; a
		// THEN may be NULL.
		c.Whens = append(c.Whens, when())
		if g.chance(25) {
			c.Thens = append(c.Thens, &Lit{Null: true, T: t})
		} else {
			c.Thens = append(c.Thens, g.scalar(t, sc, depth, size+1))
		}
	}
	c.Else = g.elseOf(t, sc, depth, size)
	return c
}

func (g *Gen) elseOf(t Type, sc *scope, depth, size int) Expr {
	if g.chance(30) {
		return nil
	}
	if t == Decimal && g.chance(25) {
		// Mixed branch types: an integer ELSE of a decimal CASE is read
		// as a decimal by both engines.
		return g.scalar(Int, sc, depth, size+1)
	}
	return g.scalar(t, sc, depth, size+1)
}

// stringFunc is a string function of s whose MySQL and DuckDB results
// agree, NULL and the empty string included: LEFT/RIGHT, LPAD/RPAD (which cut a longer
// string), REPEAT, REPLACE of a piece of a value, CONCAT_WS (which skips
// NULLs in both).
func (g *Gen) stringFunc(s Expr, sc *scope, depth, size int) Expr {
	n := func(k int) Expr { return &Lit{Val: strconv.Itoa(g.n(k)), T: Int} }
	switch g.n(6) {
	case 0:
		return &Func{Name: []string{"left", "right"}[g.n(2)], Args: []Expr{s, n(4)}, T: String}
	case 1:
		return &Func{Name: []string{"lpad", "rpad"}[g.n(2)], Args: []Expr{s, n(8), &Lit{Val: []string{"*", "ab", " "}[g.n(3)], T: String}}, T: String}
	case 2:
		return &Func{Name: "repeat", Args: []Expr{s, n(3)}, T: String}
	case 3:
		from := "a"
		if c, ok := s.(*Col); ok {
			for _, o := range sc.ops {
				if o.e == Expr(c) {
					from = g.piece(o)
				}
			}
		}
		return &Func{Name: "replace", Args: []Expr{s, &Lit{Val: from, T: String}, &Lit{Val: []string{"", "Z", "--"}[g.n(3)], T: String}}, T: String}
	}
	return &Func{Name: "concat_ws", Args: []Expr{&Lit{Val: []string{",", "", " - "}[g.n(3)], T: String}, s, g.scalar(String, sc, depth, size+1)}, T: String}
}

// piece is a non-empty part of one of o's values (or "a").
func (g *Gen) piece(o operand) string {
	v := "a"
	if len(o.values) > 0 {
		v = o.values[g.n(len(o.values))]
	}
	if len(v) > 3 {
		i := g.n(len(v) - 2)
		v = v[i : i+1+g.n(2)]
	}
	if v == "" {
		v = "a"
	}
	return v
}

// choice is one of the NULL-handling functions.
func (g *Gen) choice(t Type, sc *scope, depth, size int) Expr {
	a := g.scalar(t, sc, depth, size+1)
	if t == Decimal && g.chance(25) {
		// One arm an integer: both engines unify to a decimal.
		return g.mixed(a, sc, depth, size)
	}
	switch g.n(3) {
	case 0:
		return &Func{Name: "coalesce", Args: []Expr{a, g.anyLit(t)}, T: t}
	case 1:
		return &Func{Name: "nullif", Args: []Expr{a, g.anyLit(t)}, T: t}
	default:
		return &Func{Name: "if", Args: []Expr{g.pred(sc, depth, size+2), a, g.scalar(t, sc, depth, size+1)}, T: t}
	}
}

// mixed is COALESCE or IF of a decimal a and an integer, in either
// order: a decimal in both engines.
func (g *Gen) mixed(a Expr, sc *scope, depth, size int) Expr {
	i := g.scalar(Int, sc, depth, size+1)
	args := []Expr{a, i}
	if g.chance(50) {
		args = []Expr{i, a}
	}
	if g.chance(50) {
		return &Func{Name: "if", Args: append([]Expr{g.pred(sc, depth, size+2)}, args...), T: Decimal}
	}
	return &Func{Name: "coalesce", Args: args, T: Decimal}
}

// linked finds a table and column that o joins to through a link, in
// either direction, or any column of o's type.
func (g *Gen) linked(o operand) (*Table, string) {
	var cands [][2]string
	for _, l := range g.s.Links {
		if o.origin == l.From+"."+l.FromCol {
			cands = append(cands, [2]string{l.To, l.ToCol})
		}
		if o.origin == l.To+"."+l.ToCol {
			cands = append(cands, [2]string{l.From, l.FromCol})
		}
	}
	if len(cands) > 0 && !g.chance(15) {
		c := cands[g.n(len(cands))]
		return g.s.Table(c[0]), c[1]
	}
	bases := g.baseTables()
	for tries := 0; tries < 8; tries++ {
		t := bases[g.n(len(bases))]
		var cols []string
		for _, c := range t.Columns {
			if c.Type == o.e.Type() {
				cols = append(cols, c.Name)
			}
		}
		if len(cols) > 0 {
			return t, cols[g.n(len(cols))]
		}
	}
	return nil, ""
}

// inner starts a subquery block over t, and returns its scope of t's
// columns alone (the subquery's own predicates do not reach outside; its
// correlation is one explicit equality).
func (g *Gen) inner(t *Table) (*Select, *scope) {
	q := &Select{From: FromItem{Table: t.Name, Alias: g.alias()}}
	sc := &scope{}
	tableScope(sc, t, q.From.Alias)
	q.scope = sc
	return q, sc
}

// correlate adds `inner = outer` (or <=>) for some pair of columns that
// link, or that share a type, and sometimes a non-equality between
// another pair beside it (a residual of the decorrelated join). Only
// plain columns of the outer scope are correlated, never its aggregates.
func (g *Gen) correlate(q *Select, in, outer *scope) {
	var cols []operand
	for _, o := range outer.ops {
		if _, ok := o.e.(*Col); ok {
			cols = append(cols, o)
		}
	}
	if len(cols) == 0 {
		return
	}
	eq := func() string {
		if g.chance(20) {
			return "<=>"
		}
		return "="
	}
	n := len(andList(q.Where))
	defer func() {
		if len(andList(q.Where)) == n || !g.chance(25) {
			return // no equality: a non-equality alone would pair every row
		}
		o := cols[g.n(len(cols))]
		if same := in.ofType(o.e.Type()); len(same) > 0 {
			op := []string{"<", "<=", ">", ">=", "<>"}[g.n(5)]
			q.Where = and(q.Where, &Bin{Op: op, L: same[g.n(len(same))].e, R: o.e, T: Bool})
		}
	}()
	for tries := 0; tries < 6; tries++ {
		o := cols[g.n(len(cols))]
		for _, i := range in.ops {
			for _, l := range g.s.Links {
				if (o.origin == l.From+"."+l.FromCol && i.origin == l.To+"."+l.ToCol) ||
					(o.origin == l.To+"."+l.ToCol && i.origin == l.From+"."+l.FromCol) {
					q.Where = and(q.Where, &Bin{Op: eq(), L: i.e, R: o.e, T: Bool})
					return
				}
			}
		}
	}
	o := cols[g.n(len(cols))]
	if same := in.ofType(o.e.Type()); len(same) > 0 {
		q.Where = and(q.Where, &Bin{Op: eq(), L: same[g.n(len(same))].e, R: o.e, T: Bool})
	}
}

// andList is e's conjuncts.
func andList(e Expr) []Expr {
	if b, ok := e.(*Bin); ok && b.Op == "and" {
		return append(andList(b.L), andList(b.R)...)
	}
	if e == nil {
		return nil
	}
	return []Expr{e}
}

// subPred is an IN, EXISTS or scalar-comparison subquery.
func (g *Gen) subPred(sc *scope, depth int) Expr {
	o := sc.ops[g.n(len(sc.ops))]
	switch g.n(3) {
	case 0: // [not] in
		t, col := g.linked(o)
		if t == nil {
			break
		}
		q, in := g.inner(t)
		key := &Col{Qual: q.From.Alias, Name: col, T: o.e.Type()}
		q.Items = []Item{{key}}
		if g.chance(60) {
			q.Where = g.pred(in, depth+1, 1)
		}
		if g.chance(25) {
			g.correlate(q, in, sc)
		}
		if g.chance(15) {
			g.groupedSub(q, in, key)
		}
		if !g.opt.NoSetOps && g.chance(12) {
			// The values of two blocks combined: NOT IN over a UNION
			// that brings a NULL in is never true.
			if t2, col2 := g.linked(o); t2 != nil {
				q2, in2 := g.inner(t2)
				q2.Items = []Item{{&Col{Qual: q2.From.Alias, Name: col2, T: o.e.Type()}}}
				if g.chance(60) {
					q2.Where = g.pred(in2, depth+1, 1)
				}
				if g.chance(35) {
					// Arms correlated apart: one on an equality (its
					// domain an inner column, NULLs and all), the other
					// on another, or on none (joined on its own).
					g.correlate(q2, in2, sc)
				}
				set := &SetOp{Op: []string{"union all", "union", "intersect", "except"}[g.n(4)], Left: q, Right: q2}
				return &Sub{Kind: In, E: o.e, Not: g.chance(40), Set: set, T: Bool}
			}
		}
		probe := o.e
		if g.chance(10) {
			// A constant probe: one value tested against the subquery,
			// the same for every row.
			probe = g.lit(o)
		}
		return &Sub{Kind: In, E: probe, Not: g.chance(40), Q: q, T: Bool}
	case 1: // [not] exists
		t, col := g.linked(o)
		if t == nil {
			break
		}
		q, in := g.inner(t)
		key := &Col{Qual: q.From.Alias, Name: col, T: o.e.Type()}
		q.Items = []Item{{&Lit{Val: "1", T: Int}}}
		if g.chance(80) {
			q.Where = &Bin{Op: "=", L: key, R: o.e, T: Bool}
		}
		if g.chance(60) {
			q.Where = and(q.Where, g.pred(in, depth+1, 1))
		}
		switch {
		case g.chance(10):
			// An aggregate without GROUP BY has one row on no input:
			// EXISTS is true, NOT EXISTS false, whatever the correlation.
			q.Items = []Item{{&Agg{Fn: "count", T: Int}}}
		case g.chance(12):
			q.Items = []Item{{key}}
			g.groupedSub(q, in, key)
		case !g.opt.NoSetOps && g.chance(12):
			// EXISTS over a union of two blocks, correlated apart (an
			// equality, a non-equality beside one, or none).
			if t2, _ := g.linked(o); t2 != nil {
				q2, in2 := g.inner(t2)
				q2.Items = []Item{{&Lit{Val: "1", T: Int}}}
				if g.chance(60) {
					q2.Where = g.pred(in2, depth+1, 1)
				}
				if g.chance(50) {
					g.correlate(q2, in2, sc)
				}
				set := &SetOp{Op: []string{"union all", "union"}[g.n(2)], Left: q, Right: q2}
				return &Sub{Kind: Exists, Not: g.chance(40), Set: set, T: Bool}
			}
		}
		return &Sub{Kind: Exists, Not: g.chance(40), Q: q, T: Bool}
	}
	return &Bin{Op: []string{"=", "<", ">", "<=", ">=", "<>"}[g.n(6)], L: o.e, R: g.scalarSubOf(sc, depth, o), T: Bool}
}

// scalarSubOf is a one-value aggregate subquery comparable with o.
func (g *Gen) scalarSubOf(sc *scope, depth int, o operand) Expr {
	t := o.e.Type()
	tbl, col := g.linked(o)
	if tbl == nil {
		return g.lit(o)
	}
	q, in := g.inner(tbl)
	arg := &Col{Qual: q.From.Alias, Name: col, T: t}
	fn := []string{"min", "max"}[g.n(2)]
	if g.chance(12) {
		// The first value in an order: MIN or MAX, but a NULL first
		// ascending (MySQL's order) and last descending; no row: NULL.
		q.Items = []Item{{arg}}
		q.OrderBy = []OrderKey{{Pos: 0, Desc: g.chance(50)}}
		q.Limit = 1
	} else if t == Int && g.chance(30) {
		q.Items = []Item{{&Agg{Fn: "count", T: Int}}}
	} else if (t == Int || t == Decimal) && g.chance(30) {
		q.Items = []Item{{&Agg{Fn: "sum", Arg: arg, T: t}}}
	} else {
		q.Items = []Item{{&Agg{Fn: fn, Arg: arg, T: t}}}
	}
	if g.chance(50) {
		q.Where = g.pred(in, depth+1, 1)
	}
	if g.chance(50) {
		g.correlate(q, in, sc)
	}
	return &Sub{Kind: Scalar, Q: q, T: t}
}

// groupedSub groups the subquery q on key (its only item) and keeps the
// groups a HAVING over key and aggregates of in accepts.
func (g *Gen) groupedSub(q *Select, in *scope, key *Col) {
	q.GroupBy = []Expr{key}
	kop := operand{e: key}
	for _, o := range in.ops {
		if x, ok := o.e.(*Col); ok && x.Qual == key.Qual && x.Name == key.Name {
			kop.values = o.values
		}
	}
	hs := &scope{ops: []operand{kop, g.exactAgg(in, g.opt.MaxDepth), {e: &Agg{Fn: "count", T: Int}, values: []string{"1", "2", "3"}}}}
	q.Having = g.pred(hs, g.opt.MaxDepth, 1)
}

// scalarSub is a scalar subquery used as a value of type t (Int or
// Decimal): a count or a sum, correlated or not.
func (g *Gen) scalarSub(sc *scope, depth int, t Type) Expr {
	bases := g.baseTables()
	tbl := bases[g.n(len(bases))]
	q, in := g.inner(tbl)
	if nums := in.ofType(t); t == Decimal && len(nums) > 0 {
		q.Items = []Item{{&Agg{Fn: []string{"sum", "max"}[g.n(2)], Arg: nums[g.n(len(nums))].e, T: t}}}
	} else {
		q.Items = []Item{{&Agg{Fn: "count", T: Int}}}
	}
	if g.chance(40) {
		q.Where = g.pred(in, depth+1, 1)
	}
	if g.chance(70) {
		g.correlate(q, in, sc)
	}
	return &Sub{Kind: Scalar, Q: q, T: q.Items[0].E.Type()}
}

// setOp combines two or three row blocks of the same column types.
func (g *Gen) setOp() Query {
	s := g.setOfBlocks(0)
	for i := range s.first().Items {
		s.OrderBy = append(s.OrderBy, OrderKey{Pos: i, Desc: g.chance(30)})
	}
	s.Limit = 1 + g.n(g.opt.Limit)
	s.Offset = g.offset()
	return s
}
