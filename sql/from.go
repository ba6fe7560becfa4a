package sql

import (
	"errors"
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/planner"
)

// bindFrom binds a FROM clause. Inner and comma joins become one MultiJoin
// so join ordering sees all inputs and conditions at once; outer joins
// become Joins (right joins as left joins with swapped inputs).
func (b *Binder) bindFrom(n ast.ResultSetNode, outer *scope) (planner.Plan, error) {
	if err := b.checkCtx(); err != nil {
		return nil, err
	}
	switch x := n.(type) {
	case *ast.Join:
		if x.Right == nil {
			return b.bindFrom(x.Left, outer)
		}
		if x.NaturalJoin {
			return nil, b.errAtWords("NATURAL", errs.Unsupported, "NATURAL JOIN: write JOIN ... USING (the columns both sides share)")
		}
		left, err := b.bindFrom(x.Left, outer)
		if err != nil {
			return nil, err
		}
		right, err := b.bindFrom(x.Right, outer)
		if err != nil {
			return nil, err
		}
		tp := x.Tp
		if x.StraightJoin && tp == 0 {
			tp = ast.CrossJoin // a STRAIGHT_JOIN b: an inner join whose order is a hint
		}
		switch tp {
		case ast.CrossJoin:
			return b.innerJoin(left, right, x, outer)
		case ast.LeftJoin:
			return b.leftJoin(left, right, x, outer, false)
		case ast.RightJoin:
			return b.leftJoin(right, left, x, outer, true)
		}
		return nil, errs.New(errs.Unsupported, "the join type %v (fsql has [INNER], CROSS, LEFT, RIGHT and FULL [OUTER] JOIN)", x.Tp)
	case *ast.TableSource:
		return b.bindTableSource(x, outer)
	}
	return nil, errs.New(errs.Unsupported, "the FROM item %T (fsql reads tables, paths, subqueries and joins)", n)
}

func (b *Binder) joinCond(x *ast.Join, combined planner.Schema, leftWidth int, outer *scope) (expr.Expr, error) {
	sc := newScope(combined, outer)
	if x.On != nil {
		return b.bindBool(x.On.Expr, &exprCtx{sc: sc}, "ON")
	}
	if len(x.Using) > 0 {
		var conds []expr.Expr
		for _, u := range x.Using {
			li, ri := -1, -1
			for i, c := range combined {
				if strings.EqualFold(c.Name, u.Name.O) || strings.EqualFold(c.Name, "\x00using:"+u.Name.O) {
					if i < leftWidth && li < 0 {
						li = i
					} else if i >= leftWidth && ri < 0 {
						ri = i
					}
				}
			}
			if li < 0 || ri < 0 {
				return nil, errs.New(errs.ErBadFieldError, "unknown column '%s' in USING", u.Name.O)
			}
			eq, err := b.call("=", sc.column(li), sc.column(ri))
			if err != nil {
				return nil, err
			}
			conds = append(conds, eq)
		}
		return planner.JoinAnd(conds), nil
	}
	return nil, nil
}

// hideUsing renames the right side's USING columns so an unqualified name
// resolves to the left side's column, as MySQL's coalesced column does.
func hideUsing(x *ast.Join, p planner.Plan) planner.Plan {
	if len(x.Using) == 0 {
		return p
	}
	s := p.Schema()
	proj := &planner.Project{Child: p}
	for i, c := range s {
		name := c.Name
		for _, u := range x.Using {
			if strings.EqualFold(c.Name, u.Name.O) {
				name = "\x00using:" + c.Name
			}
		}
		proj.Exprs = append(proj.Exprs, expr.NewColumn(i, c.Type, c.Name))
		proj.Names = append(proj.Names, name)
		proj.Tables = append(proj.Tables, c.Table)
	}
	return proj
}

func (b *Binder) innerJoin(left, right planner.Plan, x *ast.Join, outer *scope) (planner.Plan, error) {
	right = hideUsing(x, right)
	// A chain of n joins extends one MultiJoin n times: its inputs and
	// schema grow by appending (each MultiJoin is extended once), not by
	// copying everything joined so far at every step.
	var base planner.Schema
	mj, ok := left.(*planner.MultiJoin)
	if ok {
		base = b.joinSchemas[mj]
		if base == nil {
			base = mj.Schema()
		}
		mj = &planner.MultiJoin{Inputs: append(mj.Inputs, right), Conds: mj.Conds}
	} else {
		base = append(planner.Schema(nil), left.Schema()...) // ours to append to
		mj = &planner.MultiJoin{Inputs: []planner.Plan{left, right}}
	}
	lw := len(base)
	combined := append(base, right.Schema()...)
	if b.joinSchemas == nil {
		b.joinSchemas = map[*planner.MultiJoin]planner.Schema{}
	}
	b.joinSchemas[mj] = combined
	cond, err := b.joinCond(x, combined, lw, outer)
	if err != nil {
		return nil, err
	}
	if cond != nil {
		mj.Conds = append(append([]expr.Expr{}, mj.Conds...), expr.SplitAnd(cond)...)
	}
	return mj, nil
}

// leftJoin binds preserved LEFT JOIN other. For a RIGHT JOIN, preserved is
// the right input and swapped restores the written column order.
func (b *Binder) leftJoin(preserved, other planner.Plan, x *ast.Join, outer *scope, swapped bool) (planner.Plan, error) {
	if swapped {
		preserved = hideUsing(x, preserved)
	} else {
		other = hideUsing(x, other)
	}
	j := &planner.Join{Type: planner.LeftJoin, Left: preserved, Right: other}
	pw, ow := len(preserved.Schema()), len(other.Schema())
	if !swapped {
		cond, err := b.joinCond(x, j.Schema(), pw, outer)
		if err != nil {
			return nil, err
		}
		j.Cond = cond
		if j.Cond == nil {
			return nil, errs.New(errs.ErParseError, "LEFT JOIN without ON or USING")
		}
		return j, nil
	}
	// Bind the condition in written order (other, preserved), then remap.
	written := append(append(planner.Schema{}, other.Schema()...), preserved.Schema()...)
	cond, err := b.joinCond(x, written, ow, outer)
	if err != nil {
		return nil, err
	}
	if cond == nil {
		return nil, errs.New(errs.ErParseError, "RIGHT JOIN without ON or USING")
	}
	j.Cond, err = remapColumns(cond, func(i int) int {
		if i < ow {
			return pw + i
		}
		return i - ow
	})
	if err != nil {
		return nil, err
	}
	s := j.Schema()
	proj := &planner.Project{Child: j}
	for i := 0; i < ow; i++ {
		c := s[pw+i]
		proj.Exprs = append(proj.Exprs, expr.NewColumn(pw+i, c.Type, c.Name))
		proj.Names, proj.Tables = append(proj.Names, c.Name), append(proj.Tables, c.Table)
	}
	for i := 0; i < pw; i++ {
		c := s[i]
		proj.Exprs = append(proj.Exprs, expr.NewColumn(i, c.Type, c.Name))
		proj.Names, proj.Tables = append(proj.Names, c.Name), append(proj.Tables, c.Table)
	}
	return proj, nil
}

func remapColumns(e expr.Expr, m func(int) int) (expr.Expr, error) {
	return expr.Rewrite(e, func(x expr.Expr) (expr.Expr, error) {
		if c, ok := x.(*expr.Column); ok {
			return expr.NewColumn(m(c.Index), c.Type, c.Name), nil
		}
		return x, nil
	})
}

func (b *Binder) bindTableSource(ts *ast.TableSource, outer *scope) (planner.Plan, error) {
	if err := b.countRelation(); err != nil {
		return nil, err
	}
	alias := ts.AsName.O
	switch src := ts.Source.(type) {
	case *ast.TableName:
		name := src.Name.O
		if alias == "" {
			alias = name
		}
		if src.Schema.O == "" {
			if cte, depth := b.lookupCTE(name); cte != nil {
				return b.bindCTE(cte, depth, alias)
			}
		}
		t, err := b.table(name)
		if err != nil {
			return nil, err
		}
		cols := make([]int, t.Schema.NumFields())
		for i := range cols {
			cols[i] = i
		}
		return &planner.Scan{Table: t, Alias: alias, Columns: cols}, nil
	case *ast.SelectStmt, *ast.SetOprStmt:
		// MySQL demands an alias here; TPC-DS's texts omit it in places
		// and nothing is ambiguous without one (its columns resolve
		// unqualified), so fsql accepts it like PostgreSQL does.
		// Inside a subquery a derived table may reference the enclosing
		// queries (MySQL 8.0.14 and later); decorrelation handles it as
		// part of the subquery.
		q, err := b.bindQuery(src, outer)
		if err != nil {
			return nil, err
		}
		return requalify(q, alias, ts.ColumnNames)
	}
	return nil, errs.New(errs.Unsupported, "the FROM item %T (fsql reads tables, paths, subqueries and joins)", ts.Source)
}

// bindCTE binds a fresh copy of a CTE's query each time it is referenced;
// its body sees only the CTEs visible where it was defined.
func (b *Binder) bindCTE(cte *ast.CommonTableExpression, depth int, alias string) (planner.Plan, error) {
	key := strings.ToLower(cte.Name.O)
	saved := b.ctes
	// Hide this CTE and later scopes while binding its body: a
	// non-recursive CTE cannot see itself.
	visible := append([]map[string]*ast.CommonTableExpression{}, saved[:depth]...)
	own := map[string]*ast.CommonTableExpression{}
	for k, v := range saved[depth] {
		if k != key {
			own[k] = v
		}
	}
	b.ctes = append(visible, own)
	q, err := b.bindQuery(cte.Query, nil)
	b.ctes = saved
	if err != nil {
		if errors.Is(err, exec.ErrResourcesExhausted) || b.checkCtx() != nil {
			return nil, err // a limit or a cancellation is the statement's, not this CTE's
		}
		return nil, fmt.Errorf("in WITH %s: %w", cte.Name.O, err)
	}
	return requalify(q, alias, cte.ColNameList)
}

// requalify names a subquery's columns alias.name (or the given names).
func requalify(q *bound, alias string, names []ast.CIStr) (planner.Plan, error) {
	s := q.plan.Schema()
	if len(names) > 0 && len(names) != len(s) {
		return nil, errs.New(errs.ErViewWrongList, "%s names %d columns but its query returns %d", alias, len(names), len(s))
	}
	proj := &planner.Project{Child: q.plan}
	for i, c := range s {
		n := q.names[i]
		if len(names) > 0 {
			n = names[i].O
		}
		proj.Exprs = append(proj.Exprs, expr.NewColumn(i, c.Type, n))
		proj.Names = append(proj.Names, n)
		proj.Tables = append(proj.Tables, alias)
	}
	return proj, nil
}
