package sql

import (
	"errors"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/planner"
)

// rowHaving binds the HAVING of a query that neither groups nor
// aggregates, which MySQL runs as a filter on the rows after WHERE and
// before window functions, DISTINCT and ORDER BY (`select k + 1 as j from
// t having j > 2`). Its names are MySQL's (as MariaDB resolves them): a
// select alias, which wins over a column of that name, or a column the
// select list names as an item (`select k, v as w ... having v > 1`, or
// through *). A column the select list only uses inside an expression,
// and the alias of a window function, are unknown there, as in MySQL.
func (b *Binder) rowHaving(sel *ast.SelectStmt, plan planner.Plan, sc *scope) (planner.Plan, error) {
	visible := make([]bool, len(sc.cols))
	for _, f := range sel.Fields.Fields {
		if f.WildCard != nil {
			for i, c := range sc.cols {
				if f.WildCard.Table.O == "" || strings.EqualFold(f.WildCard.Table.O, c.Table) {
					visible[i] = true
				}
			}
			continue
		}
		if cn, ok := f.Expr.(*ast.ColumnNameExpr); ok {
			if i, err := sc.resolve(cn.Name.Table.O, cn.Name.Name.O); err == nil && i >= 0 {
				visible[i] = true
			}
		}
	}
	host := &subqueryHost{plan: plan}
	from := &exprCtx{sc: sc, sub: host}
	named := havingNames(sel.Having.Expr)
	var names []string
	var exprs []expr.Expr
	for _, f := range sel.Fields.Fields {
		if f.Expr == nil || f.AsName.O == "" || !named[strings.ToLower(f.AsName.O)] {
			continue
		}
		v := &winCollector{}
		f.Expr.Accept(v)
		if len(v.wins) > 0 {
			continue
		}
		e, err := b.bindValue(f.Expr, from)
		if err != nil {
			return nil, err
		}
		names = append(names, f.AsName.O)
		exprs = append(exprs, e)
	}
	aliases := aliasMap(names, exprs)
	cols := make(planner.Schema, len(sc.cols))
	copy(cols, sc.cols)
	for i := range cols {
		if _, isAlias := aliases[strings.ToLower(cols[i].Name)]; !visible[i] || isAlias {
			cols[i].Name = "__\x00hidden" // resolves to nothing: the alias, or unknown
		}
	}
	hctx := &exprCtx{sc: &scope{cols: cols, outer: sc.outer}, sub: host, aliases: aliases}
	cond, err := b.bindBool(sel.Having.Expr, hctx, "HAVING")
	var unknown unknownColumnError
	if errors.As(err, &unknown) {
		return nil, errs.Wrap(errs.UnknownName, "%w; HAVING without GROUP BY sees only the select list's aliases and the columns it names as items: add the column to the select list, or filter in WHERE", unknown.err)
	}
	if err != nil {
		return nil, err
	}
	width := len(plan.Schema())
	plan = &planner.Filter{Child: host.plan, Cond: cond}
	if len(host.plan.Schema()) != width {
		plan = projectPrefix(plan, width)
	}
	return plan, nil
}

// havingNames are the unqualified column names written in e, lower-cased.
func havingNames(e ast.ExprNode) map[string]bool {
	v := &nameCollector{names: map[string]bool{}}
	e.Accept(v)
	return v.names
}

type nameCollector struct{ names map[string]bool }

func (v *nameCollector) Enter(n ast.Node) (ast.Node, bool) {
	if c, ok := n.(*ast.ColumnNameExpr); ok && c.Name.Table.O == "" {
		v.names[strings.ToLower(c.Name.Name.O)] = true
	}
	return n, false
}

func (v *nameCollector) Leave(n ast.Node) (ast.Node, bool) { return n, true }
