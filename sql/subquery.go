package sql

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"

	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/planner"
)

// outerColumn is a correlated reference from a subquery to column index
// of the query depth levels out. A subquery's plan holds them wherever
// the SQL wrote them; decorrelation (decorrelate.go) replaces those of
// depth 1 when the subquery is joined into its host and moves deeper ones
// one level in, so none survives binding.
type outerColumn struct {
	depth int
	index int
	typ   arrow.DataType
	name  string
}

func newOuterColumn(s *scope, depth, i int) *outerColumn {
	c := s.cols[i]
	return &outerColumn{depth: depth, index: i, typ: c.Type, name: qualified(c.Table, c.Name)}
}

// up is the same reference seen from one query level further out.
func (o *outerColumn) up() *outerColumn {
	c := *o
	c.depth--
	return &c
}

func (o *outerColumn) DataType() arrow.DataType { return o.typ }
func (o *outerColumn) Eval(*expr.Context, arrow.RecordBatch) (arrow.Array, error) {
	return nil, fmt.Errorf("%w: correlated reference to %s was not decorrelated", exec.ErrInternal, o.name)
}
func (o *outerColumn) Children() []expr.Expr { return nil }
func (o *outerColumn) String() string {
	if o.depth > 1 {
		return fmt.Sprintf("outer%d.%s", o.depth, o.name)
	}
	return "outer." + o.name
}

// subqueryHost is the plan an expression's scalar subqueries join into.
type subqueryHost struct {
	plan planner.Plan
}

func hasSubquery(n ast.ExprNode) bool {
	found := false
	n.Accept(&subFinder{found: &found})
	return found
}

type subFinder struct{ found *bool }

func (v *subFinder) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.SubqueryExpr, *ast.ExistsSubqueryExpr:
		*v.found = true
		return n, true
	case *ast.PatternInExpr:
		if x.Sel != nil {
			*v.found = true
			return n, true
		}
	}
	return n, false
}

func (v *subFinder) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// splitConjuncts lists the conjuncts of n, left to right (without
// recursing down a long AND chain, see chainTerms).
func splitConjuncts(n ast.ExprNode) []ast.ExprNode {
	inner := n
	for {
		p, ok := inner.(*ast.ParenthesesExpr)
		if !ok {
			break
		}
		inner = p.Expr
	}
	if x, ok := inner.(*ast.BinaryOperationExpr); ok && x.Op == opcode.LogicAnd {
		return chainTerms(x)
	}
	return []ast.ExprNode{n}
}

// bindWhere filters plan by a WHERE clause. Top-level IN/EXISTS subqueries
// become semi and anti joins (NOT IN a null-aware anti join); scalar
// subqueries join their single value in. Conjuncts that reference an outer
// query stay in the filter; the subquery's decorrelation moves them.
//
// When some conjuncts hold subqueries, the others (those that reference
// no outer query) filter plan before the subqueries join into it: a
// correlated subquery computes its domain from the plan it joins into,
// and over the bare FROM clause of a comma join that is the cross product
// of its tables (web_returns x household_demographics x income_band is
// two billion rows at scale 0.2), where the filtered join is the rows
// the subquery is asked about.
func (b *Binder) bindWhere(n ast.ExprNode, plan planner.Plan, sc *scope) (planner.Plan, error) {
	width := len(plan.Schema())
	var filters, first []expr.Expr
	conjs := splitConjuncts(n)
	var withSub []ast.ExprNode
	for _, c := range conjs {
		if hasSubquery(c) {
			withSub = append(withSub, c)
		}
	}
	if len(withSub) > 0 && len(withSub) < len(conjs) {
		for _, c := range conjs {
			if hasSubquery(c) {
				continue
			}
			e, err := b.bindBool(c, &exprCtx{sc: sc, sub: &subqueryHost{plan: plan}}, "WHERE")
			if err != nil {
				return nil, err
			}
			if refsDepth(e, 0) {
				filters = append(filters, planner.FactorOr(e)...)
			} else {
				first = append(first, planner.FactorOr(e)...)
			}
		}
		if len(first) > 0 {
			plan = &planner.Filter{Child: plan, Cond: planner.JoinAnd(first)}
		}
		conjs = withSub
	}
	for _, c := range conjs {
		if p, ok, err := b.semiJoin(c, plan, sc); err != nil {
			return nil, err
		} else if ok {
			plan = p
			continue
		}
		host := &subqueryHost{plan: plan}
		e, err := b.bindBool(c, &exprCtx{sc: sc, sub: host}, "WHERE")
		if err != nil {
			return nil, err
		}
		plan = host.plan
		// A correlation written inside every branch of an OR (TPC-DS q41)
		// is factored out so it can become a join key.
		filters = append(filters, planner.FactorOr(e)...)
	}
	if len(filters) > 0 {
		plan = &planner.Filter{Child: plan, Cond: planner.JoinAnd(filters)}
	}
	if len(plan.Schema()) != width {
		plan = projectPrefix(plan, width)
	}
	return plan, nil
}

// projectPrefix keeps the first n columns of p.
func projectPrefix(p planner.Plan, n int) planner.Plan {
	s := p.Schema()
	proj := &planner.Project{Child: p}
	for i := 0; i < n; i++ {
		proj.Exprs = append(proj.Exprs, expr.NewColumn(i, s[i].Type, s[i].Name))
		proj.Names = append(proj.Names, s[i].Name)
		proj.Tables = append(proj.Tables, s[i].Table)
	}
	return proj
}

// semiJoin plans a top-level [NOT] IN (subquery) or [NOT] EXISTS conjunct.
func (b *Binder) semiJoin(c ast.ExprNode, plan planner.Plan, sc *scope) (planner.Plan, bool, error) {
	not := false
	for {
		if u, ok := c.(*ast.UnaryOperationExpr); ok && (u.Op == opcode.Not || u.Op == opcode.Not2) {
			not, c = !not, u.V
			continue
		}
		if p, ok := c.(*ast.ParenthesesExpr); ok {
			c = p.Expr
			continue
		}
		break
	}
	var query ast.ResultSetNode
	var probe ast.ExprNode
	switch x := c.(type) {
	case *ast.ExistsSubqueryExpr:
		query = x.Sel.(*ast.SubqueryExpr).Query
		if x.Not {
			not = !not
		}
	case *ast.PatternInExpr:
		if x.Sel == nil {
			return nil, false, nil
		}
		query, probe = x.Sel.(*ast.SubqueryExpr).Query, x.Expr
		if x.Not {
			not = !not
		}
	default:
		return nil, false, nil
	}
	sub, err := b.bindQuery(query, sc)
	if err != nil {
		return nil, false, err
	}
	hw := len(plan.Schema())
	var x expr.Expr
	if probe != nil {
		if len(sub.names) != 1 {
			return nil, false, b.errAt(c, errs.ErOperandColumns, "the IN subquery returns %d columns, expected 1", len(sub.names))
		}
		if x, err = b.bindValue(probe, &exprCtx{sc: sc}); err != nil {
			return nil, false, err
		}
		if !hasFreeRefs(sub.plan) && len(expr.Columns(x)) == 0 {
			// A hash join needs a column on the probe side.
			plan, x = materialize(plan, x)
		}
	}
	if _, ok := mixedUnionArms(sub.plan); ok {
		// One arm correlated and one not: a disjunction of the arms'
		// predicates (subquery_union.go), kept where it is true.
		host := &subqueryHost{plan: plan}
		var v expr.Expr
		if probe != nil {
			v, err = b.inSubqueryValue(host, x, sub.plan)
		} else {
			v, err = b.existsValue(host, sub.plan)
		}
		if err == nil && not {
			v, err = b.call("not", v)
		}
		if err != nil {
			return nil, false, err
		}
		return projectPrefix(&planner.Filter{Child: host.plan, Cond: v}, hw), true, nil
	}
	typ := planner.SemiJoin
	if not {
		typ = planner.AntiJoin
	}
	if probe != nil && not && hasFreeRefs(sub.plan) {
		// Correlated NOT IN: the IN predicate's three-valued value per
		// outer row, kept where it is false.
		host := &subqueryHost{plan: plan}
		v, err := b.inValue(host, x, sub.plan)
		if err != nil {
			return nil, false, err
		}
		nv, err := b.call("not", v)
		if err != nil {
			return nil, false, err
		}
		return projectPrefix(&planner.Filter{Child: host.plan, Cond: nv}, hw), true, nil
	}
	right, conds, err := b.joinable(plan, sub.plan)
	if err != nil {
		return nil, false, err
	}
	if probe != nil {
		// The subquery's value follows the host's columns, the
		// materialized constant probe's too: compared at hw, it would
		// be the probe itself, and `7 IN (SELECT ...)` true for any
		// row the subquery returns.
		eq, err := b.call("=", x, valueColumn(right, len(plan.Schema())))
		if err != nil {
			return nil, false, err
		}
		conds = append([]expr.Expr{eq}, conds...)
		if not {
			// NOT IN is NULL-aware: a NULL on either side makes the
			// predicate unknown, which WHERE treats as false.
			typ = planner.NullAwareAntiJoin
		}
	}
	p := planner.Plan(&planner.Join{Type: typ, Left: plan, Right: right, Cond: planner.JoinAnd(conds)})
	if len(p.Schema()) != hw {
		p = projectPrefix(p, hw)
	}
	return p, true, nil
}

// valueColumn is the first column of a subquery joined after the host's
// hw columns.
func valueColumn(right planner.Plan, hw int) expr.Expr {
	c := right.Schema()[0]
	return expr.NewColumn(hw, c.Type, c.Name)
}

// materialize appends e as a column of p.
func materialize(p planner.Plan, e expr.Expr) (planner.Plan, expr.Expr) {
	s := p.Schema()
	exprs, names := passthrough(s, 0, len(s))
	proj := &planner.Project{Child: p, Exprs: append(exprs, e), Names: append(names, "__probe")}
	for _, c := range s {
		proj.Tables = append(proj.Tables, c.Table)
	}
	return proj, expr.NewColumn(len(s), e.DataType(), "__probe")
}

// joinable turns subquery q into the right side of a semi, anti or mark
// join with host and the conditions that correlate them (over host
// columns, then the right side's). The subquery's own value columns come
// first on the right. Correlated filters reachable through projections
// are pulled up into the join condition; anything else is flattened
// against the domain of the host's correlated columns.
func (b *Binder) joinable(host, q planner.Plan) (planner.Plan, []expr.Expr, error) {
	hw := len(host.Schema())
	f := b.newFlattener(host, q)
	if pulled, corr, ok, err := f.pullUp(q); err != nil {
		return nil, nil, err
	} else if ok {
		right, err := decrement(pulled)
		if err != nil {
			return nil, nil, err
		}
		conds := make([]expr.Expr, len(corr))
		for i, c := range corr {
			r, err := remapColumns(c, func(i int) int { return i + hw })
			if err != nil {
				return nil, nil, err
			}
			if conds[i], err = toHost(r); err != nil {
				return nil, nil, err
			}
		}
		return right, conds, nil
	}
	fl, err := f.flatten(q)
	if err != nil {
		return nil, nil, err
	}
	conds, err := f.hostEq(hw+fl.width, fl.nullable)
	return fl.plan, conds, err
}

// hostEq equates the host's correlated columns with the domain columns
// of a flattened subquery joined after the host, at dbase.
func (f *flattener) hostEq(dbase int, nullable []bool) ([]expr.Expr, error) {
	var conds []expr.Expr
	for j, h := range f.corr.cols {
		eq, err := f.b.domainEq(expr.NewColumn(h, f.corr.types[j], f.corr.names[j]), expr.NewColumn(dbase+j, f.corr.types[j], f.corr.names[j]), nullable[j])
		if err != nil {
			return nil, err
		}
		conds = append(conds, eq...)
	}
	return conds, nil
}

// pullUp removes the correlated conjuncts of the filters reachable from
// p's root through projections, filters and sorts, and returns them over
// the new plan's columns (a projection passes on the columns they read).
// ok is false when a host reference is left anywhere else.
func (f *flattener) pullUp(p planner.Plan) (planner.Plan, []expr.Expr, bool, error) {
	switch n := p.(type) {
	case *planner.Filter:
		child, conds, ok, err := f.pullUp(n.Child)
		if !ok || err != nil {
			return nil, nil, ok, err
		}
		var rest []expr.Expr
		for _, c := range expr.SplitAnd(n.Cond) {
			if refsDepth(c, 1) {
				conds = append(conds, c)
			} else {
				rest = append(rest, c)
			}
		}
		if len(rest) == 0 {
			return child, conds, true, nil
		}
		return &planner.Filter{Child: child, Cond: planner.JoinAnd(rest)}, conds, true, nil
	case *planner.Sort:
		child, conds, ok, err := f.pullUp(n.Child)
		if !ok || err != nil || len(conds) == 0 {
			return n, nil, ok, err
		}
		for _, k := range n.Keys {
			if refsDepth(k.Expr, 1) {
				return nil, nil, false, nil
			}
		}
		return &planner.Sort{Child: child, Keys: n.Keys}, conds, true, nil
	case *planner.Project:
		for _, e := range n.Exprs {
			if refsDepth(e, 1) {
				return nil, nil, false, nil
			}
		}
		child, conds, ok, err := f.pullUp(n.Child)
		if !ok || err != nil || len(conds) == 0 {
			return n, nil, ok, err
		}
		proj := &planner.Project{Child: child, Exprs: append([]expr.Expr(nil), n.Exprs...), Names: append([]string(nil), n.Names...), Tables: append([]string(nil), n.Tables...)}
		for len(proj.Tables) < len(proj.Exprs) {
			proj.Tables = append(proj.Tables, "")
		}
		cs := child.Schema()
		pos := map[int]int{}
		out := make([]expr.Expr, len(conds))
		for i, c := range conds {
			r, err := remapColumns(c, func(idx int) int {
				p, seen := pos[idx]
				if !seen {
					p = len(proj.Exprs)
					pos[idx] = p
					proj.Exprs = append(proj.Exprs, expr.NewColumn(idx, cs[idx].Type, cs[idx].Name))
					proj.Names = append(proj.Names, "__corr_"+cs[idx].Name)
					proj.Tables = append(proj.Tables, cs[idx].Table)
				}
				return p
			})
			if err != nil {
				return nil, nil, false, err
			}
			out[i] = r
		}
		return proj, out, true, nil
	}
	if f.dependent(p) {
		return nil, nil, false, nil
	}
	return p, nil, true, nil
}

// atMostOneRow reports whether q yields at most one row (per domain value
// once flattened): a scalar aggregate, LIMIT 1, one constant row, and
// projections, filters and sorts of those.
func atMostOneRow(q planner.Plan) bool {
	switch n := q.(type) {
	case *planner.Project:
		return atMostOneRow(n.Child)
	case *planner.Filter:
		return atMostOneRow(n.Child)
	case *planner.Sort:
		return atMostOneRow(n.Child)
	case *planner.Aggregate:
		return len(n.GroupBy) == 0 && !n.Rollup
	case *planner.Limit:
		return n.N <= 1 || atMostOneRow(n.Child)
	case *planner.Values:
		return len(n.Rows) <= 1
	}
	return false
}

// bindScalarSubquery joins a one-column subquery into the host plan and
// returns a reference to its value.
func (b *Binder) bindScalarSubquery(x *ast.SubqueryExpr, c *exprCtx) (expr.Expr, error) {
	if c.sub == nil {
		return nil, b.errAt(x, errs.Unsupported, "the scalar subquery %s in ON, GROUP BY or an aggregate's argument (fsql runs subqueries in WHERE, HAVING, ORDER BY and the select list): compute it in a derived table, FROM (SELECT ...) AS s, and use its column", snippet(x))
	}
	sub, err := b.bindQuery(x.Query, c.sc)
	if err != nil {
		return nil, err
	}
	if len(sub.names) != 1 {
		return nil, b.errAt(x, errs.ErOperandColumns, "the scalar subquery returns %d columns, expected 1", len(sub.names))
	}
	host := c.sub.plan
	hw := len(host.Schema())
	f := b.newFlattener(host, sub.plan)
	if v, ok, err := b.scalarAggregate(c.sub, f, sub.plan); err != nil || ok {
		return v, err
	}
	q, err := f.flatten(sub.plan)
	if err != nil {
		return nil, err
	}
	k := f.corr.k()
	col := q.plan.Schema()[0]
	if atMostOneRow(sub.plan) {
		conds, err := f.hostEq(hw+q.width, q.nullable)
		if err != nil {
			return nil, err
		}
		c.sub.plan = &planner.Join{Type: planner.LeftJoin, Left: host, Right: q.plan, Cond: planner.JoinAnd(conds)}
		return expr.NewColumn(hw, col.Type, col.Name), nil
	}
	// Per domain value: one of the subquery's values and how many rows it
	// had. scalar_subquery fails for a count above one, lazily, so only
	// for outer rows that evaluate the value.
	agg := &planner.Aggregate{Child: q.plan, GroupBy: f.domainCols(q.width)}
	for j := 0; j < k; j++ {
		agg.Names = append(agg.Names, fmt.Sprintf("__domain%d", j))
	}
	agg.Aggs = []planner.AggCall{
		{Fn: "any_value", Arg: expr.NewColumn(0, col.Type, col.Name), Type: col.Type, Name: col.Name},
		{Fn: "count_star", Type: arrow.PrimitiveTypes.Int64, Name: "__rows"},
	}
	conds, err := f.hostEq(hw, q.nullable)
	if err != nil {
		return nil, err
	}
	c.sub.plan = &planner.Join{Type: planner.LeftJoin, Left: host, Right: agg, Cond: planner.JoinAnd(conds)}
	return b.call("scalar_subquery", expr.NewColumn(hw+k+1, arrow.PrimitiveTypes.Int64, "__rows"), expr.NewColumn(hw+k, col.Type, col.Name))
}

// scalarAggregate plans a scalar subquery that is projections over an
// aggregate without GROUP BY (the common correlated form): the aggregate
// is grouped by the domain instead and left-joined to the host, and the
// projections are computed over the join, with COUNT reading 0 for an
// outer row without a group (the COUNT bug). No domain is built unless
// the aggregate's input needs one.
func (b *Binder) scalarAggregate(host *subqueryHost, f *flattener, q planner.Plan) (expr.Expr, bool, error) {
	var projs []*planner.Project
	p := q
	for {
		pr, ok := p.(*planner.Project)
		if !ok {
			break
		}
		projs = append(projs, pr)
		p = pr.Child
	}
	agg, ok := p.(*planner.Aggregate)
	if !ok || len(agg.GroupBy) > 0 || agg.Rollup {
		return nil, false, nil
	}
	c, err := f.flatten(agg.Child)
	if err != nil {
		return nil, false, err
	}
	grouped, err := f.groupedByDomain(agg, c)
	if err != nil {
		return nil, false, err
	}
	hw, k := len(host.plan.Schema()), f.corr.k()
	conds, err := f.hostEq(hw, c.nullable)
	if err != nil {
		return nil, false, err
	}
	// Values of the aggregate's output columns, over the join.
	vals := make([]expr.Expr, len(agg.Aggs))
	for i, a := range agg.Aggs {
		if vals[i], err = emptyGroupValue(b, a, expr.NewColumn(hw+k+i, a.Type, a.Name)); err != nil {
			return nil, false, err
		}
	}
	for i := len(projs) - 1; i >= 0; i-- {
		next := make([]expr.Expr, len(projs[i].Exprs))
		for j, e := range projs[i].Exprs {
			r, err := expr.Rewrite(e, func(x expr.Expr) (expr.Expr, error) {
				switch y := x.(type) {
				case *expr.Column:
					return vals[y.Index], nil
				case *outerColumn:
					if y.depth > 1 {
						return y.up(), nil
					}
					return expr.NewColumn(y.index, y.typ, y.name), nil
				}
				return x, nil
			})
			if err != nil {
				return nil, false, err
			}
			next[j] = r
		}
		vals = next
	}
	host.plan = &planner.Join{Type: planner.LeftJoin, Left: host.plan, Right: grouped, Cond: planner.JoinAnd(conds)}
	return vals[0], true, nil
}

// inValue joins what `x IN (q)` needs for a correlated q into the host and
// returns the predicate's three-valued value: per domain value the
// subquery's row count and non-NULL count (an aggregate, left-joined),
// and whether some row equals x (a mark join): true on a match, false
// over no rows, NULL when x or some row is NULL, false otherwise.
func (b *Binder) inValue(h *subqueryHost, x expr.Expr, q planner.Plan) (expr.Expr, error) {
	host := h.plan
	hw := len(host.Schema())
	f := b.newFlattener(host, q)
	k := f.corr.k()
	q1, err := f.flatten(q)
	if err != nil {
		return nil, err
	}
	s := q1.plan.Schema()[0]
	agg := &planner.Aggregate{Child: q1.plan, GroupBy: f.domainCols(q1.width)}
	for j := 0; j < k; j++ {
		agg.Names = append(agg.Names, fmt.Sprintf("__domain%d", j))
	}
	i64 := arrow.PrimitiveTypes.Int64
	agg.Aggs = []planner.AggCall{
		{Fn: "count_star", Type: i64, Name: "__rows"},
		{Fn: "count", Arg: expr.NewColumn(0, s.Type, s.Name), Type: i64, Name: "__values"},
	}
	conds, err := f.hostEq(hw, q1.nullable)
	if err != nil {
		return nil, err
	}
	var plan planner.Plan = &planner.Join{Type: planner.LeftJoin, Left: host, Right: agg, Cond: planner.JoinAnd(conds)}
	rows, values := expr.NewColumn(hw+k, i64, "__rows"), expr.NewColumn(hw+k+1, i64, "__values")
	if len(expr.Columns(x)) == 0 {
		plan, x = materialize(plan, x)
	}
	w := len(plan.Schema())
	q2, err := b.newFlattener(host, q).flatten(q)
	if err != nil {
		return nil, err
	}
	eq, err := b.call("=", x, expr.NewColumn(w, s.Type, s.Name))
	if err != nil {
		return nil, err
	}
	mconds, err := f.hostEq(w+1, q2.nullable)
	if err != nil {
		return nil, err
	}
	h.plan = &planner.Join{Type: planner.MarkJoin, Left: plan, Right: q2.plan, Cond: planner.JoinAnd(append([]expr.Expr{eq}, mconds...))}
	boolT := arrow.FixedWidthTypes.Boolean
	f0, t0 := expr.NewLiteral(false, boolT), expr.NewLiteral(true, boolT)
	matched, err := b.call("coalesce", expr.NewColumn(w, boolT, "mark"), f0)
	if err != nil {
		return nil, err
	}
	n, err := b.call("coalesce", rows, expr.NewLiteral(int64(0), i64))
	if err != nil {
		return nil, err
	}
	empty, err := b.call("=", n, expr.NewLiteral(int64(0), i64))
	if err != nil {
		return nil, err
	}
	xNull, err := b.call("isnull", x)
	if err != nil {
		return nil, err
	}
	someNull, err := b.call(">", rows, values)
	if err != nil {
		return nil, err
	}
	unknown, err := b.call("or", xNull, someNull)
	if err != nil {
		return nil, err
	}
	return b.call("case", matched, t0, empty, f0, unknown, expr.Null(boolT), f0)
}

// bindInSubquery plans `x [NOT] IN (subquery)` nested in an expression:
// uncorrelated, as a mark join, whose mark column is the IN predicate's
// three-valued result; correlated, through inValue.
func (b *Binder) bindInSubquery(x *ast.PatternInExpr, c *exprCtx) (expr.Expr, error) {
	if c.sub == nil {
		return nil, b.errAt(x, errs.Unsupported, "%s in ON, GROUP BY or an aggregate's argument (fsql runs subqueries in WHERE, HAVING, ORDER BY and the select list): move the condition to WHERE, or compute it in a derived table", snippet(x))
	}
	sub, err := b.bindQuery(x.Sel.(*ast.SubqueryExpr).Query, c.sc)
	if err != nil {
		return nil, err
	}
	if len(sub.names) != 1 {
		return nil, b.errAt(x, errs.ErOperandColumns, "the IN subquery returns %d columns, expected 1", len(sub.names))
	}
	l, err := b.bindExpr(x.Expr, c)
	if err != nil {
		return nil, err
	}
	v, err := b.inSubqueryValue(c.sub, l, sub.plan)
	if err != nil {
		return nil, err
	}
	if x.Not {
		return b.call("not", v)
	}
	return v, nil
}

// inSubqueryValue is the three-valued `l IN (q)` over the rows of host
// h, whose plan it joins q into.
func (b *Binder) inSubqueryValue(h *subqueryHost, l expr.Expr, q planner.Plan) (expr.Expr, error) {
	if arms, ok := mixedUnionArms(q); ok {
		return b.inUnionArms(h, l, arms)
	}
	if hasFreeRefs(q) {
		return b.inValue(h, l, q)
	}
	if len(expr.Columns(l)) == 0 {
		h.plan, l = materialize(h.plan, l)
	}
	lw := len(h.plan.Schema())
	eq, err := b.call("=", l, valueColumn(q, lw))
	if err != nil {
		return nil, err
	}
	h.plan = &planner.Join{Type: planner.MarkJoin, Left: h.plan, Right: q, Cond: eq}
	return expr.NewColumn(lw, arrow.FixedWidthTypes.Boolean, "mark"), nil
}

// bindExists plans [NOT] EXISTS nested in an expression. With a
// correlated equality it pulls up, it is a mark join on it; otherwise the
// subquery's row count per domain value is left-joined in. EXISTS is
// never NULL.
func (b *Binder) bindExists(x *ast.ExistsSubqueryExpr, c *exprCtx) (expr.Expr, error) {
	if c.sub == nil {
		return nil, b.errAt(x, errs.Unsupported, "%s in ON, GROUP BY or an aggregate's argument (fsql runs subqueries in WHERE, HAVING, ORDER BY and the select list): move the condition to WHERE, or compute it in a derived table", snippet(x))
	}
	sub, err := b.bindQuery(x.Sel.(*ast.SubqueryExpr).Query, c.sc)
	if err != nil {
		return nil, err
	}
	e, err := b.existsValue(c.sub, sub.plan)
	if err != nil {
		return nil, err
	}
	if !x.Not {
		return e, nil
	}
	return b.call("not", e)
}

// existsValue is `EXISTS (q)` over the rows of host h, whose plan it
// joins q into.
func (b *Binder) existsValue(h *subqueryHost, sq planner.Plan) (expr.Expr, error) {
	if arms, ok := mixedUnionArms(sq); ok {
		return b.existsUnionArms(h, arms)
	}
	host := h.plan
	hw := len(host.Schema())
	boolT := arrow.FixedWidthTypes.Boolean
	var e expr.Expr
	if right, conds, ok, err := b.markable(host, sq); err != nil {
		return nil, err
	} else if ok {
		h.plan = &planner.Join{Type: planner.MarkJoin, Left: host, Right: right, Cond: planner.JoinAnd(conds)}
		if e, err = b.call("coalesce", expr.NewColumn(hw, boolT, "mark"), expr.NewLiteral(false, boolT)); err != nil {
			return nil, err
		}
	} else {
		f := b.newFlattener(host, sq)
		q, err := f.flatten(sq)
		if err != nil {
			return nil, err
		}
		k := f.corr.k()
		agg := &planner.Aggregate{Child: q.plan, GroupBy: f.domainCols(q.width)}
		for j := 0; j < k; j++ {
			agg.Names = append(agg.Names, fmt.Sprintf("__domain%d", j))
		}
		i64 := arrow.PrimitiveTypes.Int64
		agg.Aggs = []planner.AggCall{{Fn: "count_star", Type: i64, Name: "__rows"}}
		conds, err := f.hostEq(hw, q.nullable)
		if err != nil {
			return nil, err
		}
		h.plan = &planner.Join{Type: planner.LeftJoin, Left: host, Right: agg, Cond: planner.JoinAnd(conds)}
		n, err := b.call("coalesce", expr.NewColumn(hw+k, i64, "__rows"), expr.NewLiteral(int64(0), i64))
		if err != nil {
			return nil, err
		}
		if e, err = b.call(">", n, expr.NewLiteral(int64(0), i64)); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// markable returns the right side and conditions of a mark join for an
// EXISTS whose correlated filters pull up and include an equality between
// the host and the subquery (a hash key).
func (b *Binder) markable(host, q planner.Plan) (planner.Plan, []expr.Expr, bool, error) {
	if !hasFreeRefs(q) {
		return nil, nil, false, nil
	}
	f := b.newFlattener(host, q)
	pulled, _, ok, err := f.pullUp(q)
	if err != nil || !ok || pulled == nil {
		return nil, nil, false, err
	}
	right, conds, err := b.joinable(host, q)
	if err != nil {
		return nil, nil, false, err
	}
	hw := len(host.Schema())
	for _, c := range conds {
		call, ok := c.(*expr.Call)
		if !ok || call.Fn != "=" {
			continue
		}
		l, r := expr.Columns(call.Args[0]), expr.Columns(call.Args[1])
		if len(l) > 0 && len(r) > 0 && (allBelow(l, hw) && allAtLeast(r, hw) || allBelow(r, hw) && allAtLeast(l, hw)) {
			return right, conds, true, nil
		}
	}
	return nil, nil, false, nil
}

func allBelow(cols []int, n int) bool {
	for _, c := range cols {
		if c >= n {
			return false
		}
	}
	return true
}

func allAtLeast(cols []int, n int) bool {
	for _, c := range cols {
		if c < n {
			return false
		}
	}
	return true
}

// checkDecorrelated fails when a correlated reference survived binding.
func checkDecorrelated(p planner.Plan) error {
	var bad *outerColumn
	walkPlanExprs(p, func(e expr.Expr) {
		expr.Walk(e, func(x expr.Expr) bool {
			if o, ok := x.(*outerColumn); ok && bad == nil {
				bad = o
			}
			return bad == nil
		})
	})
	if bad != nil {
		return fmt.Errorf("%w: correlated reference to %s was not decorrelated", exec.ErrInternal, bad.name)
	}
	return nil
}
