package sql

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"

	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/planner"
)

// outerColumn is a correlated reference from a subquery to a column of the
// enclosing query. Decorrelation turns it into a join condition; one that
// survives (outside a subquery's WHERE) fails with a clear error.
type outerColumn struct {
	index int
	typ   arrow.DataType
	name  string
}

func (s *scope) outerColumn(i int) *outerColumn {
	c := s.outer.cols[i]
	return &outerColumn{index: i, typ: c.Type, name: qualified(c.Table, c.Name)}
}

func (o *outerColumn) DataType() arrow.DataType { return o.typ }
func (o *outerColumn) Eval(*expr.Context, arrow.RecordBatch) (arrow.Array, error) {
	return nil, fmt.Errorf("%w: correlated reference to %s outside the WHERE clause of a subquery", exec.ErrNotImplemented, o.name)
}
func (o *outerColumn) Children() []expr.Expr { return nil }
func (o *outerColumn) String() string        { return "outer." + o.name }

func hasOuter(e expr.Expr) bool {
	found := false
	expr.Walk(e, func(x expr.Expr) bool {
		if _, ok := x.(*outerColumn); ok {
			found = true
		}
		return !found
	})
	return found
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
// query are returned separately for the caller to decorrelate.
func (b *Binder) bindWhere(n ast.ExprNode, plan planner.Plan, sc *scope) (planner.Plan, error) {
	p, corr, err := b.bindWhereCorr(n, plan, sc)
	if err != nil {
		return nil, err
	}
	if len(corr) > 0 {
		return nil, fmt.Errorf("%w: correlated condition %s", exec.ErrNotImplemented, corr[0])
	}
	return p, nil
}

func (b *Binder) bindWhereCorr(n ast.ExprNode, plan planner.Plan, sc *scope) (planner.Plan, []expr.Expr, error) {
	width := len(plan.Schema())
	var filters, corr []expr.Expr
	for _, c := range splitConjuncts(n) {
		if p, ok, err := b.semiJoin(c, plan, sc); err != nil {
			return nil, nil, err
		} else if ok {
			plan = p
			continue
		}
		host := &subqueryHost{plan: plan}
		e, err := b.bindBool(c, &exprCtx{sc: sc, sub: host}, "WHERE")
		if err != nil {
			return nil, nil, err
		}
		plan = host.plan
		// A correlation written inside every branch of an OR (TPC-DS q41)
		// is factored out so it can become a join key.
		for _, f := range planner.FactorOr(e) {
			if hasOuter(f) {
				corr = append(corr, f)
			} else {
				filters = append(filters, f)
			}
		}
	}
	if len(filters) > 0 {
		plan = &planner.Filter{Child: plan, Cond: planner.JoinAnd(filters)}
	}
	if len(plan.Schema()) != width {
		plan = projectPrefix(plan, width)
	}
	return plan, corr, nil
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
	sub, corr, err := b.bindCorrelated(query, sc)
	if err != nil {
		return nil, false, err
	}
	lw := len(plan.Schema())
	conds, err := joinSide(corr, lw)
	if err != nil {
		return nil, false, err
	}
	typ := planner.SemiJoin
	if not {
		typ = planner.AntiJoin
	}
	if probe != nil {
		if len(sub.names) != 1 {
			return nil, false, fmt.Errorf("%w: the IN subquery returns %d columns, expected 1", exec.ErrPlan, len(sub.names))
		}
		l, err := b.bindValue(probe, &exprCtx{sc: sc})
		if err != nil {
			return nil, false, err
		}
		r := sub.plan.Schema()[0]
		eq, err := b.call("=", l, expr.NewColumn(lw, r.Type, r.Name))
		if err != nil {
			return nil, false, err
		}
		conds = append([]expr.Expr{eq}, conds...)
		if not {
			// NOT IN is NULL-aware: a NULL on either side makes the
			// predicate unknown, which WHERE treats as false.
			typ = planner.NullAwareAntiJoin
			if len(corr) > 0 {
				return nil, false, fmt.Errorf("%w: correlated NOT IN subquery", exec.ErrNotImplemented)
			}
		}
	}
	return &planner.Join{Type: typ, Left: plan, Right: sub.plan, Cond: planner.JoinAnd(conds)}, true, nil
}

// joinSide rewrites correlated conditions (subquery output columns and
// outer references) into join conditions over outer ++ subquery columns.
func joinSide(corr []expr.Expr, outerWidth int) ([]expr.Expr, error) {
	out := make([]expr.Expr, len(corr))
	for i, c := range corr {
		e, err := expr.Rewrite(c, func(x expr.Expr) (expr.Expr, error) {
			switch y := x.(type) {
			case *outerColumn:
				return expr.NewColumn(y.index, y.typ, y.name), nil
			case *expr.Column:
				return expr.NewColumn(outerWidth+y.Index, y.Type, y.Name), nil
			}
			return x, nil
		})
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}

// bindCorrelated binds a subquery whose WHERE may reference sc. It returns
// the subquery (with the inner columns the correlated conditions need
// appended after its select list) and those conditions over the
// subquery's output columns and outer references.
func (b *Binder) bindCorrelated(q ast.ResultSetNode, sc *scope) (*bound, []expr.Expr, error) {
	saved := b.corrScope
	b.corrScope = sc
	defer func() { b.corrScope = saved }()
	sel, ok := q.(*ast.SelectStmt)
	if !ok {
		r, err := b.bindQuery(q, sc)
		return r, nil, err
	}
	r, err := b.bindSelectCorr(sel, sc)
	if err != nil {
		return nil, nil, err
	}
	return r.bound, r.corr, nil
}

// bindScalarSubquery joins a one-column subquery into the host plan and
// returns a reference to its value.
func (b *Binder) bindScalarSubquery(x *ast.SubqueryExpr, c *exprCtx) (expr.Expr, error) {
	if c.sub == nil {
		return nil, fmt.Errorf("%w: scalar subquery in this clause (supported in WHERE and the select list)", exec.ErrNotImplemented)
	}
	sub, corr, err := b.bindCorrelated(x.Query, c.sc)
	if err != nil {
		return nil, err
	}
	if len(sub.names) != 1 {
		return nil, fmt.Errorf("%w: the scalar subquery returns %d columns, expected 1", exec.ErrPlan, len(sub.names))
	}
	lw := len(c.sub.plan.Schema())
	col := sub.plan.Schema()[0]
	if len(corr) == 0 {
		c.sub.plan = &planner.Join{Type: planner.LeftJoin, Left: c.sub.plan, Right: &planner.MaxOneRow{Child: sub.plan}}
		return expr.NewColumn(lw, col.Type, col.Name), nil
	}
	conds, err := joinSide(corr, lw)
	if err != nil {
		return nil, err
	}
	c.sub.plan = &planner.Join{Type: planner.LeftJoin, Left: c.sub.plan, Right: sub.plan, Cond: planner.JoinAnd(conds)}
	v := expr.Expr(expr.NewColumn(lw, col.Type, col.Name))
	if sub.countOnly {
		// The COUNT bug: an outer row without a matching group must see
		// count = 0, not NULL.
		return b.call("coalesce", v, expr.NewLiteral(int64(0), col.Type))
	}
	return v, nil
}

// bindInSubquery plans `x [NOT] IN (subquery)` nested in an expression as
// a mark join, whose mark column is the IN predicate's three-valued result.
func (b *Binder) bindInSubquery(x *ast.PatternInExpr, c *exprCtx) (expr.Expr, error) {
	if c.sub == nil {
		return nil, fmt.Errorf("%w: IN (subquery) in this clause (supported in WHERE and the select list)", exec.ErrNotImplemented)
	}
	sub, corr, err := b.bindCorrelated(x.Sel.(*ast.SubqueryExpr).Query, c.sc)
	if err != nil {
		return nil, err
	}
	if len(corr) > 0 {
		return nil, fmt.Errorf("%w: correlated IN subquery nested in an expression", exec.ErrNotImplemented)
	}
	if len(sub.names) != 1 {
		return nil, fmt.Errorf("%w: the IN subquery returns %d columns, expected 1", exec.ErrPlan, len(sub.names))
	}
	l, err := b.bindExpr(x.Expr, c)
	if err != nil {
		return nil, err
	}
	lw := len(c.sub.plan.Schema())
	r := sub.plan.Schema()[0]
	eq, err := b.call("=", l, expr.NewColumn(lw, r.Type, r.Name))
	if err != nil {
		return nil, err
	}
	c.sub.plan = &planner.Join{Type: planner.MarkJoin, Left: c.sub.plan, Right: sub.plan, Cond: eq}
	mark := expr.Expr(expr.NewColumn(lw, arrow.FixedWidthTypes.Boolean, "mark"))
	if x.Not {
		return b.call("not", mark)
	}
	return mark, nil
}

// bindExists plans [NOT] EXISTS nested in an expression as a mark join on
// its correlated equalities. EXISTS is never NULL, so a NULL mark (no
// match) reads as false.
func (b *Binder) bindExists(x *ast.ExistsSubqueryExpr, c *exprCtx) (expr.Expr, error) {
	if c.sub == nil {
		return nil, fmt.Errorf("%w: EXISTS in this clause (supported in WHERE and the select list)", exec.ErrNotImplemented)
	}
	sub, corr, err := b.bindCorrelated(x.Sel.(*ast.SubqueryExpr).Query, c.sc)
	if err != nil {
		return nil, err
	}
	if len(corr) == 0 {
		return nil, fmt.Errorf("%w: uncorrelated EXISTS nested in an expression", exec.ErrNotImplemented)
	}
	lw := len(c.sub.plan.Schema())
	conds, err := joinSide(corr, lw)
	if err != nil {
		return nil, err
	}
	c.sub.plan = &planner.Join{Type: planner.MarkJoin, Left: c.sub.plan, Right: sub.plan, Cond: planner.JoinAnd(conds)}
	mark := expr.Expr(expr.NewColumn(lw, arrow.FixedWidthTypes.Boolean, "mark"))
	e, err := b.call("coalesce", mark, expr.NewLiteral(false, arrow.FixedWidthTypes.Boolean))
	if err != nil || !x.Not {
		return e, err
	}
	return b.call("not", e)
}

// splitCorrEquality splits inner = outer into its inner and outer sides.
func splitCorrEquality(e expr.Expr) (inner, outer expr.Expr, ok bool) {
	c, isCall := e.(*expr.Call)
	if !isCall || c.Fn != "=" || len(c.Args) != 2 {
		return nil, nil, false
	}
	l, r := c.Args[0], c.Args[1]
	switch {
	case !hasOuter(l) && onlyOuter(r):
		return l, r, true
	case !hasOuter(r) && onlyOuter(l):
		return r, l, true
	}
	return nil, nil, false
}

func onlyOuter(e expr.Expr) bool {
	return hasOuter(e) && len(expr.Columns(e)) == 0
}

func hasCount(sel *ast.SelectStmt) bool {
	for _, a := range collectAggs(sel) {
		if a.F == "count" {
			return true
		}
	}
	return false
}

// correlatedOutputs appends to a correlated subquery's select list the
// columns its correlated conditions need, and rewrites the conditions over
// the subquery's output (outer references stay as they are).
func (b *Binder) correlatedOutputs(exprs []expr.Expr, names []string, corr, inner, outer []expr.Expr, cur *exprCtx) ([]expr.Expr, []string, []expr.Expr, error) {
	var out []expr.Expr
	if len(inner) > 0 {
		// Aggregated: the inner keys are group columns of the Aggregate.
		for i, in := range inner {
			idx := cur.agg.groupKeys[exprKey(in)]
			pos := len(exprs)
			exprs = append(exprs, cur.sc.column(idx))
			names = append(names, fmt.Sprintf("__corr%d", i))
			eq, err := b.call("=", outer[i], expr.NewColumn(pos, in.DataType(), "__corr"))
			if err != nil {
				return nil, nil, nil, err
			}
			out = append(out, eq)
		}
		return exprs, names, out, nil
	}
	pos := map[int]int{}
	for _, c := range corr {
		e, err := expr.Rewrite(c, func(x expr.Expr) (expr.Expr, error) {
			col, ok := x.(*expr.Column)
			if !ok {
				return x, nil
			}
			p, seen := pos[col.Index]
			if !seen {
				p = len(exprs)
				pos[col.Index] = p
				exprs = append(exprs, cur.sc.column(col.Index))
				names = append(names, "__corr_"+col.Name)
			}
			return expr.NewColumn(p, col.Type, col.Name), nil
		})
		if err != nil {
			return nil, nil, nil, err
		}
		out = append(out, e)
	}
	return exprs, names, out, nil
}
