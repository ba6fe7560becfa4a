package sql

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/planner"
)

// exprCtx is what an expression binds against.
type exprCtx struct {
	sc *scope
	// agg is set after aggregation: plain columns must then be group keys.
	agg *aggCtx
	// windows maps window-function AST nodes to their values (columns
	// of the Window nodes, or expressions over them).
	windows map[*ast.WindowFuncExpr]expr.Expr
	// sub lets scalar and IN subqueries add joins to the plan under the
	// expression; nil where subqueries are not allowed.
	sub *subqueryHost
	// aliases are select-list aliases an ORDER BY or HAVING expression
	// may name, consulted only when no column of the scope has the name
	// or, after grouping, when the column is not a group key.
	aliases map[string]expr.Expr
}

func aliasMap(names []string, exprs []expr.Expr) map[string]expr.Expr {
	m := map[string]expr.Expr{}
	for i, n := range names {
		k := strings.ToLower(n)
		if _, dup := m[k]; dup {
			m[k] = nil // ambiguous: never resolve through it
			continue
		}
		m[k] = exprs[i]
	}
	return m
}

// aggCtx maps the AST of a query with aggregation onto the Aggregate's
// output columns.
type aggCtx struct {
	pre       *exprCtx       // binds against the FROM scope
	groupKeys map[string]int // exprKey of a bound group expression → column
	groupExpr []expr.Expr
	aggs      map[string]int // aggKey → column
	gidCol    int            // grouping id column, -1 without ROLLUP
}

// bindSelect binds a query block. Inside a subquery, references to the
// enclosing queries stay in the plan as outerColumns wherever they are
// written; the subquery's decorrelation (subquery.go) removes them.
func (b *Binder) bindSelect(sel *ast.SelectStmt, outer *scope) (*bound, error) {
	if err := b.countRelation(); err != nil {
		return nil, err
	}
	if err := b.pushCTEs(sel.With); err != nil {
		return nil, err
	}
	defer b.popCTEs(sel.With)
	if sel.Kind != ast.SelectStmtKindSelect {
		return nil, errs.New(errs.Unsupported, "the %v statement: write a SELECT", sel.Kind)
	}

	// FROM
	var plan planner.Plan
	if sel.From == nil {
		plan = &planner.Values{Rows: [][]expr.Expr{{}}}
	} else {
		p, err := b.bindFrom(sel.From.TableRefs, outer)
		if err != nil {
			return nil, err
		}
		plan = p
	}
	sc := newScope(plan.Schema(), outer)

	// WHERE
	if sel.Where != nil {
		p, err := b.bindWhere(sel.Where, plan, sc)
		if err != nil {
			return nil, err
		}
		plan = p
	}
	from := &exprCtx{sc: sc}

	// Aggregation
	aggNodes := collectAggs(sel)
	var actx *aggCtx
	if sel.GroupBy != nil || len(aggNodes) > 0 {
		aggNodes = append(aggNodes, collectAnyValues(sel)...)
		p, a, err := b.bindAggregate(sel, plan, from, aggNodes)
		if err != nil {
			return nil, err
		}
		plan, actx = p, a
	} else if sel.Having != nil {
		p, err := b.rowHaving(sel, plan, sc)
		if err != nil {
			return nil, err
		}
		plan = p
	}
	cur := &exprCtx{sc: newScope(plan.Schema(), outer), agg: actx}
	if actx != nil && subqueryAfterGrouping(sel) {
		qualifyGroupColumns(cur.sc, actx, sc)
	}
	if actx != nil && sel.Having != nil {
		// Scalar subqueries in HAVING join into the aggregated plan.
		host := &subqueryHost{plan: plan}
		hctx := *cur
		hctx.sub = host
		hctx.aliases = b.havingAliases(sel, cur)
		cond, err := b.bindBool(sel.Having.Expr, &hctx, "HAVING")
		if err != nil {
			return nil, err
		}
		width := len(plan.Schema())
		plan = &planner.Filter{Child: host.plan, Cond: cond}
		if len(host.plan.Schema()) != width {
			plan = projectPrefix(plan, width)
		}
	}

	// Window functions
	wins := collectWindows(sel)
	if len(wins) > 0 {
		outs := make([]windowOut, len(wins))
		for i, w := range wins {
			p, out, err := b.bindWindow(w, sel.WindowSpecs, plan, cur)
			if err != nil {
				return nil, err
			}
			plan, outs[i] = p, out
		}
		cur.sc = newScope(plan.Schema(), outer)
		cur.windows = map[*ast.WindowFuncExpr]expr.Expr{}
		for i, w := range wins {
			e, err := b.windowValue(outs[i], cur.sc)
			if err != nil {
				return nil, err
			}
			cur.windows[w] = e
		}
	}

	// SELECT list (scalar and IN subqueries join into host.plan)
	host := &subqueryHost{plan: plan}
	cur.sub = host
	var exprs []expr.Expr
	var names []string
	for i, f := range sel.Fields.Fields {
		if i%256 == 255 {
			if err := b.checkCtx(); err != nil {
				return nil, err
			}
		}
		if f.WildCard != nil {
			n := 0
			for i, c := range sc.cols {
				if f.WildCard.Table.O != "" && !strings.EqualFold(f.WildCard.Table.O, c.Table) {
					continue
				}
				if strings.HasPrefix(c.Name, "\x00using:") {
					continue // USING shows the joined column once
				}
				if actx != nil {
					// SELECT * with GROUP BY: every column must be a group key.
					idx, ok := actx.groupKeys[exprKey(sc.column(i))]
					if !ok && len(actx.groupKeys) == 0 {
						return nil, errs.New(errs.ErMixOfGroupFuncAndFields, "SELECT * in a query that aggregates without GROUP BY: column '%s' is not aggregated; list the columns and wrap them in aggregates", qualified(c.Table, c.Name))
					}
					if !ok {
						return nil, errs.New(errs.ErWrongFieldWithGroup, "SELECT * with GROUP BY: column '%s' is neither grouped nor aggregated; add it to GROUP BY or list the columns", qualified(c.Table, c.Name))
					}
					exprs = append(exprs, cur.sc.column(idx))
					names = append(names, c.Name)
					n++
					continue
				}
				exprs = append(exprs, cur.sc.column(i))
				names = append(names, c.Name)
				n++
			}
			if n == 0 {
				return nil, errs.New(errs.ErBadTableError, "unknown table '%s' in '%s.*'", f.WildCard.Table.O, f.WildCard.Table.O)
			}
			continue
		}
		e, err := b.bindValue(f.Expr, cur)
		if err != nil {
			return nil, err
		}
		exprs = append(exprs, e)
		names = append(names, fieldName(f))
	}
	nvis := len(exprs)
	nout := len(exprs)

	// ORDER BY: by alias, position, select-list expression, or a hidden
	// expression computed beside the select list and dropped after sorting.
	var keys []planner.SortKey
	if sel.OrderBy != nil {
		for _, it := range sel.OrderBy.Items {
			idx, err := b.orderTarget(it.Expr, names[:nvis], exprs[:nvis], cur, sel.Distinct)
			if err != nil {
				return nil, err
			}
			if idx < 0 {
				// An expression over select aliases (MySQL allows
				// ORDER BY CASE WHEN alias = 0 ...): aliases resolve to
				// their select expressions where no column has the name.
				octx := *cur
				octx.aliases = aliasMap(names[:nvis], exprs[:nvis])
				e, err := b.bindValue(it.Expr, &octx)
				if err != nil {
					return nil, err
				}
				idx = len(exprs)
				exprs = append(exprs, e)
				names = append(names, fmt.Sprintf("__order%d", idx))
			}
			keys = append(keys, planner.SortKey{Expr: expr.NewColumn(idx, exprs[idx].DataType(), names[idx]), Desc: it.Desc, NullsFirst: !it.Desc})
		}
	}
	plan = &planner.Project{Child: host.plan, Exprs: exprs, Names: names}
	if sel.Distinct {
		plan = distinct(plan)
	}
	if len(keys) > 0 {
		plan = &planner.Sort{Child: plan, Keys: keys}
	}
	if sel.Limit != nil {
		p, err := b.limit(plan, sel.Limit)
		if err != nil {
			return nil, err
		}
		plan = p
	}
	if len(exprs) > nout {
		plan = projectPrefix(plan, nout)
	}
	return &bound{plan: plan, names: names[:nvis]}, nil
}

// subqueryAfterGrouping reports whether the select list, HAVING or ORDER
// BY holds a subquery (which may reference group columns as t.c).
func subqueryAfterGrouping(sel *ast.SelectStmt) bool {
	for _, f := range sel.Fields.Fields {
		if f.Expr != nil && hasSubquery(f.Expr) {
			return true
		}
	}
	if sel.Having != nil && hasSubquery(sel.Having.Expr) {
		return true
	}
	if sel.OrderBy != nil {
		for _, it := range sel.OrderBy.Items {
			if hasSubquery(it.Expr) {
				return true
			}
		}
	}
	return false
}

// qualifyGroupColumns gives the aggregate's group columns that are plain
// FROM columns their table qualifier, so a subquery of the select list or
// HAVING can reference them as t.c (correlated on a group key).
func qualifyGroupColumns(out *scope, a *aggCtx, from *scope) {
	for i, g := range a.groupExpr {
		if c, ok := g.(*expr.Column); ok && i < len(out.cols) && c.Index < len(from.cols) {
			out.cols[i].Table = from.cols[c.Index].Table
		}
	}
}

// orderTarget finds the select-list column an ORDER BY item names: a
// position, an alias, or an expression equal to a select expression.
func (b *Binder) orderTarget(n ast.ExprNode, names []string, exprs []expr.Expr, cur *exprCtx, dist bool) (int, error) {
	if pos, ok := positionOf(n); ok {
		if pos < 1 || pos > len(names) {
			return 0, errs.New(errs.ErBadFieldError, "ORDER BY position %d is not in the select list (it has %d columns)", pos, len(names))
		}
		return pos - 1, nil
	}
	if c, ok := n.(*ast.ColumnNameExpr); ok && c.Name.Table.O == "" {
		for i, nm := range names {
			if strings.EqualFold(nm, c.Name.Name.O) {
				return i, nil
			}
		}
	}
	octx := *cur
	octx.aliases = aliasMap(names, exprs)
	e, err := b.bindValue(n, &octx)
	if err != nil {
		return 0, err
	}
	k := exprKey(e)
	for i, x := range exprs {
		if exprKey(x) == k {
			return i, nil
		}
	}
	if dist {
		return 0, b.errAt(n, errs.ErFieldInOrderNotSelect, "ORDER BY expression %s is not in the select list of a SELECT DISTINCT", e)
	}
	return -1, nil
}

// havingAliases are the select-list aliases HAVING may name, as in MySQL
// (`count(*) AS c ... HAVING c > 1`), bound over the groups. A name that
// is a GROUP BY column stays the column (MySQL's preference); a field
// with a subquery or a window function is left out (HAVING filters the
// groups before either is computed), and one that does not bind is the
// select list's error to report.
func (b *Binder) havingAliases(sel *ast.SelectStmt, cur *exprCtx) map[string]expr.Expr {
	var names []string
	var exprs []expr.Expr
	for _, f := range sel.Fields.Fields {
		if f.Expr == nil || f.AsName.O == "" || hasSubquery(f.Expr) {
			continue
		}
		v := &winCollector{}
		f.Expr.Accept(v)
		if len(v.wins) > 0 {
			continue
		}
		e, err := b.bindValue(f.Expr, cur)
		if err != nil {
			continue
		}
		names = append(names, f.AsName.O)
		exprs = append(exprs, e)
	}
	if len(names) == 0 {
		return nil
	}
	return aliasMap(names, exprs)
}

func fieldName(f *ast.SelectField) string {
	if f.AsName.O != "" {
		return f.AsName.O
	}
	if c, ok := f.Expr.(*ast.ColumnNameExpr); ok {
		return c.Name.Name.O
	}
	if t := f.Text(); t != "" {
		return t
	}
	return restore(f.Expr)
}

// bindAggregate builds the Aggregate node for a query with GROUP BY or
// aggregate functions.
func (b *Binder) bindAggregate(sel *ast.SelectStmt, plan planner.Plan, from *exprCtx, aggNodes []*ast.AggregateFuncExpr) (planner.Plan, *aggCtx, error) {
	agg := &planner.Aggregate{Child: plan}
	a := &aggCtx{pre: from, groupKeys: map[string]int{}, aggs: map[string]int{}, gidCol: -1}
	if sel.GroupBy != nil {
		agg.Rollup = sel.GroupBy.Rollup
		folded := map[string]bool{}
		for _, it := range sel.GroupBy.Items {
			e, raw, name, err := b.bindGroupItem(it.Expr, sel, from)
			if err != nil {
				return nil, nil, err
			}
			k := exprKey(e)
			if _, dup := folded[k]; dup && !agg.Rollup {
				continue
			}
			folded[k] = true
			a.groupKeys[k] = len(agg.GroupBy)
			// The select list, HAVING and ORDER BY look their expressions
			// up unfolded (bindExpr): a key with a constant part that
			// folds (k - (-1), d + INTERVAL 1 YEAR) must match there too.
			if rk := exprKey(raw); rk != k {
				if _, ok := a.groupKeys[rk]; !ok {
					a.groupKeys[rk] = len(agg.GroupBy)
				}
			}
			agg.GroupBy = append(agg.GroupBy, e)
			agg.Names = append(agg.Names, name)
		}
	}
	a.groupExpr = agg.GroupBy
	base := len(agg.GroupBy)
	if agg.Rollup {
		a.gidCol = base
		base++
	}
	for _, n := range aggNodes {
		call, err := b.bindAggCall(n, from)
		if err != nil {
			return nil, nil, err
		}
		k := aggKey(call)
		if _, ok := a.aggs[k]; ok {
			continue
		}
		a.aggs[k] = base + len(agg.Aggs)
		agg.Aggs = append(agg.Aggs, call)
	}
	return agg, a, nil
}

// bindGroupItem binds a GROUP BY item: a FROM column or expression first
// (standard SQL), then a select alias or position (MySQL).
// e is folded, raw as bound (the select list's copies are looked up
// unfolded).
func (b *Binder) bindGroupItem(n ast.ExprNode, sel *ast.SelectStmt, from *exprCtx) (e, raw expr.Expr, name string, err error) {
	fields := sel.Fields.Fields
	if pos, ok := positionOf(n); ok {
		if pos < 1 || pos > len(fields) || fields[pos-1].Expr == nil {
			return nil, nil, "", errs.New(errs.ErBadFieldError, "GROUP BY position %d is not in the select list (it has %d columns)", pos, len(fields))
		}
		n = fields[pos-1].Expr
	}
	bind := func(n ast.ExprNode) (expr.Expr, expr.Expr, error) {
		raw, err := b.bindExpr(n, from)
		if err != nil {
			return nil, nil, err
		}
		e, err := planner.FoldConstants(raw, b.alloc)
		if err != nil {
			return nil, nil, errs.Wrap(errs.Semantic, "GROUP BY %s: %w", restore(n), err)
		}
		return e, raw, nil
	}
	e, raw, err = bind(n)
	if err == nil {
		return e, raw, groupName(n), nil
	}
	if c, ok := n.(*ast.ColumnNameExpr); ok && c.Name.Table.O == "" {
		for _, f := range fields {
			if f.AsName.O != "" && strings.EqualFold(f.AsName.O, c.Name.Name.O) {
				e2, raw2, err2 := bind(f.Expr)
				if err2 != nil {
					return nil, nil, "", err2
				}
				return e2, raw2, f.AsName.O, nil
			}
		}
	}
	return nil, nil, "", err
}

func groupName(n ast.ExprNode) string {
	if c, ok := n.(*ast.ColumnNameExpr); ok {
		return c.Name.Name.O
	}
	return restore(n)
}

func aggKey(c planner.AggCall) string {
	k := c.Fn
	if c.Distinct {
		k += " distinct"
	}
	if c.Arg != nil {
		k += "(" + exprKey(c.Arg) + ")"
	}
	return k
}

// collectAggs lists the aggregate calls of the select list, HAVING and
// ORDER BY (not those inside subqueries), in order of appearance.
func collectAggs(sel *ast.SelectStmt) []*ast.AggregateFuncExpr {
	v := &aggCollector{}
	for _, f := range sel.Fields.Fields {
		if f.Expr != nil {
			f.Expr.Accept(v)
		}
	}
	if sel.Having != nil {
		sel.Having.Expr.Accept(v)
	}
	if sel.OrderBy != nil {
		for _, it := range sel.OrderBy.Items {
			it.Expr.Accept(v)
		}
	}
	return v.aggs
}

type aggCollector struct{ aggs []*ast.AggregateFuncExpr }

// collectAnyValues lists ANY_VALUE calls outside other aggregates as the
// aggregates they are in a query that aggregates (they do not make a
// query aggregate by themselves, as in MySQL).
func collectAnyValues(sel *ast.SelectStmt) []*ast.AggregateFuncExpr {
	v := &anyValueCollector{}
	for _, f := range sel.Fields.Fields {
		if f.Expr != nil {
			f.Expr.Accept(v)
		}
	}
	if sel.Having != nil {
		sel.Having.Expr.Accept(v)
	}
	if sel.OrderBy != nil {
		for _, it := range sel.OrderBy.Items {
			it.Expr.Accept(v)
		}
	}
	return v.aggs
}

type anyValueCollector struct{ aggs []*ast.AggregateFuncExpr }

func (v *anyValueCollector) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.FuncCallExpr:
		if x.FnName.L == "any_value" && len(x.Args) == 1 {
			v.aggs = append(v.aggs, &ast.AggregateFuncExpr{F: "any_value", Args: x.Args})
			return n, true
		}
	case *ast.AggregateFuncExpr, *ast.SubqueryExpr, *ast.ExistsSubqueryExpr:
		return n, true
	}
	return n, false
}

func (v *anyValueCollector) Leave(n ast.Node) (ast.Node, bool) { return n, true }

func (v *aggCollector) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.AggregateFuncExpr:
		v.aggs = append(v.aggs, x)
		return n, true
	case *ast.SubqueryExpr, *ast.ExistsSubqueryExpr:
		return n, true
	}
	return n, false
}

func (v *aggCollector) Leave(n ast.Node) (ast.Node, bool) { return n, true }

func hasAgg(n ast.ExprNode) bool {
	v := &aggCollector{}
	n.Accept(v)
	return len(v.aggs) > 0
}

// collectWindows lists the window functions of the select list and ORDER BY.
func collectWindows(sel *ast.SelectStmt) []*ast.WindowFuncExpr {
	v := &winCollector{}
	for _, f := range sel.Fields.Fields {
		if f.Expr != nil {
			f.Expr.Accept(v)
		}
	}
	if sel.OrderBy != nil {
		for _, it := range sel.OrderBy.Items {
			it.Expr.Accept(v)
		}
	}
	return v.wins
}

type winCollector struct{ wins []*ast.WindowFuncExpr }

func (v *winCollector) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.WindowFuncExpr:
		v.wins = append(v.wins, x)
		return n, true
	case *ast.SubqueryExpr, *ast.ExistsSubqueryExpr:
		return n, true
	}
	return n, false
}

func (v *winCollector) Leave(n ast.Node) (ast.Node, bool) { return n, true }

func hasAggOrWindow(n ast.ExprNode) bool {
	if hasAgg(n) {
		return true
	}
	v := &winCollector{}
	n.Accept(v)
	return len(v.wins) > 0
}
