package sql

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/pingcap/tidb/pkg/parser/ast"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/fsql-dev/fsql/connectors/hive"
	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/planner"
)

// Binder turns statements into logical plans against one catalog.
type Binder struct {
	// ctx is checked as binding goes (per query block, table and chain
	// term), so a cancelled query stops binding.
	ctx     context.Context
	catalog *hive.Catalog
	alloc   memory.Allocator
	ctes    []map[string]*ast.CommonTableExpression
	// joinSchemas are the schemas of the MultiJoins innerJoin built.
	joinSchemas map[*planner.MultiJoin]planner.Schema
	// relations counts the query blocks and tables bound so far.
	relations int
	// now is the statement's time (NOW(), CURDATE()), fixed at first use.
	now time.Time
	// env is what the statement reads besides the catalog.
	env Env
	// params are the statement's parameter values, typed (env.Params
	// converted), in text order; markerIndex numbers the markers.
	params      []expr.Expr
	markerIndex map[*driver.ParamMarkerExpr]int
}

// Env is what a statement reads besides the catalog.
type Env struct {
	// Source is the text the statement was parsed from; errors give the
	// line and column of a name in it. Empty: no positions.
	Source string
	// Params are the values of the statement's ? markers, in order (see
	// ParamValue for the Go types accepted).
	Params []any
	// Variables are the session's settings, for SHOW VARIABLES.
	Variables []Variable
}

// Variable is one setting: its key and its value as text.
type Variable struct {
	Name, Value string
}

// NewBinder returns a binder over catalog.
func NewBinder(catalog *hive.Catalog) *Binder {
	return &Binder{catalog: catalog, alloc: memory.DefaultAllocator}
}

// Statement is a bound statement: the query plan, its output names, and
// whether it is wrapped in EXPLAIN [ANALYZE]; or, for SET, the settings to
// change (Plan is then nil), which only the caller's session can apply.
type Statement struct {
	Plan    planner.Plan
	Names   []string
	Explain bool
	Analyze bool
	Set     []Assignment
	// Write is set for a statement that writes a table: Plan yields
	// the rows to write.
	Write *WriteTarget
	// Drop is set for DROP TABLE (Plan is then nil).
	Drop *DropTarget
	// CreateMemory is set for CREATE TABLE t (col type, ...), a table
	// held in memory (Plan is then nil).
	CreateMemory *MemoryCreate
	// NoOp is set for a statement accepted that changes nothing (CREATE
	// INDEX on an in-memory table).
	NoOp bool
	// AddKey is set for CREATE UNIQUE INDEX on an in-memory table.
	AddKey *AddKey
}

// Bind binds one parsed statement.
func (b *Binder) Bind(stmt ast.StmtNode) (*Statement, error) {
	return b.BindContext(context.Background(), stmt)
}

// BindContext binds one parsed statement; it stops with ctx's error when
// ctx is done.
func (b *Binder) BindContext(ctx context.Context, stmt ast.StmtNode) (*Statement, error) {
	return b.BindEnv(ctx, stmt, Env{})
}

// BindEnv binds one parsed statement with its parameters, source text and
// session variables; it stops with ctx's error when ctx is done.
func (b *Binder) BindEnv(ctx context.Context, stmt ast.StmtNode, env Env) (*Statement, error) {
	b.ctx, b.relations, b.env = ctx, 0, env
	defer func() { b.ctx, b.env, b.params, b.markerIndex = nil, Env{}, nil, nil }()
	into := detachOutfile(stmt)
	markers, err := checkStatement(stmt, env.Source)
	if err != nil {
		return nil, err
	}
	if b.params, err = b.bindParams(markers); err != nil {
		return nil, err
	}
	// The statements that are not queries: one case each.
	switch x := stmt.(type) {
	case *ast.ShowStmt:
		return b.bindShow(x)
	case *ast.SetStmt:
		return b.bindSet(x)
	case *ast.ExplainStmt:
		if sh, ok := x.Stmt.(*ast.ShowStmt); ok {
			return b.bindShow(sh) // DESCRIBE t is parsed as EXPLAIN of SHOW COLUMNS
		}
	}
	st := &Statement{}
	if ex, ok := stmt.(*ast.ExplainStmt); ok {
		st.Explain, st.Analyze = true, ex.Analyze
		stmt = ex.Stmt
	}
	var write *Statement
	switch n := stmt.(type) {
	case *ast.CreateTableStmt:
		write, err = b.bindCreateTable(n)
	case *ast.InsertStmt:
		write, err = b.bindInsert(n)
	case *ast.DropTableStmt:
		if st.Explain {
			return nil, errs.New(errs.Unsupported, "EXPLAIN of DROP TABLE")
		}
		return b.bindDropTable(n)
	case *ast.CreateIndexStmt:
		if st.Explain {
			return nil, errs.New(errs.Unsupported, "EXPLAIN of CREATE INDEX")
		}
		return b.bindCreateIndex(n)
	}
	if err != nil {
		return nil, err
	}
	if write != nil {
		if st.Analyze {
			return nil, errs.New(errs.Unsupported, "EXPLAIN ANALYZE of a write statement (EXPLAIN shows its plan without running it)")
		}
		write.Explain = st.Explain
		return write, nil
	}
	rs, ok := stmt.(ast.ResultSetNode)
	if !ok {
		return nil, errs.New(errs.Unsupported, "%s (fsql runs SELECT, WITH, EXPLAIN [ANALYZE], SHOW TABLES, SHOW COLUMNS, DESCRIBE, SHOW CREATE TABLE, SHOW VARIABLES, SHOW BUILTINS, SET, CREATE TABLE ... AS SELECT, INSERT, REPLACE and DROP TABLE)", statementKind(stmt))
	}
	q, err := b.bindQuery(rs, nil)
	if err != nil {
		return nil, err
	}
	if err := checkDecorrelated(q.plan); err != nil {
		return nil, err
	}
	st.Plan, st.Names = q.plan, q.names
	if into != nil {
		if st.Analyze {
			return nil, errs.New(errs.Unsupported, "EXPLAIN ANALYZE of SELECT ... INTO OUTFILE (EXPLAIN shows its plan without running it)")
		}
		return b.bindOutfile(st, q, into)
	}
	return st, nil
}

// bound is a bound query: its plan and output column names.
type bound struct {
	plan  planner.Plan
	names []string
}

// countRelation counts one more query block or table reference against
// MaxBoundRelations.
func (b *Binder) countRelation() error {
	b.relations++
	if b.relations > MaxBoundRelations {
		return fmt.Errorf("%w: the statement binds more than %d query blocks and tables (fsql's limit); each reference to a CTE binds it anew, so reference big CTEs fewer times", exec.ErrResourcesExhausted, MaxBoundRelations)
	}
	return b.checkCtx()
}

// checkCtx returns the context's error once the query is cancelled.
func (b *Binder) checkCtx() error {
	if b.ctx == nil {
		return nil
	}
	return b.ctx.Err()
}

func (b *Binder) bindQuery(rs ast.ResultSetNode, outer *scope) (*bound, error) {
	if err := b.checkCtx(); err != nil {
		return nil, err
	}
	switch n := rs.(type) {
	case *ast.SelectStmt:
		return b.bindSelect(n, outer)
	case *ast.SetOprStmt:
		return b.bindSetOpr(n, outer)
	case *ast.SubqueryExpr:
		return b.bindQuery(n.Query, outer)
	}
	return nil, errs.New(errs.Unsupported, "the query form %T: write a SELECT, a UNION/INTERSECT/EXCEPT of SELECTs, or a parenthesized one", rs)
}

func (b *Binder) pushCTEs(w *ast.WithClause) error {
	if w == nil {
		return nil
	}
	if w.IsRecursive {
		return b.errAtWords("WITH RECURSIVE", errs.Unsupported, "WITH RECURSIVE: fsql's CTEs cannot refer to themselves; write the levels out as joins or UNION ALL of fixed depth")
	}
	m := map[string]*ast.CommonTableExpression{}
	b.ctes = append(b.ctes, m)
	for _, c := range w.CTEs {
		m[strings.ToLower(c.Name.O)] = c
	}
	return nil
}

func (b *Binder) popCTEs(w *ast.WithClause) {
	if w != nil {
		b.ctes = b.ctes[:len(b.ctes)-1]
	}
}

// lookupCTE finds a CTE by name, innermost first. It returns the CTE and
// the depth of the WITH that defines it, so its body binds against only
// the CTEs visible where it was written.
func (b *Binder) lookupCTE(name string) (*ast.CommonTableExpression, int) {
	for i := len(b.ctes) - 1; i >= 0; i-- {
		if c, ok := b.ctes[i][strings.ToLower(name)]; ok {
			return c, i
		}
	}
	return nil, -1
}

func (b *Binder) bindSetOpr(n *ast.SetOprStmt, outer *scope) (*bound, error) {
	if err := b.pushCTEs(n.With); err != nil {
		return nil, err
	}
	defer b.popCTEs(n.With)
	if n.SelectList.With != nil {
		if err := b.pushCTEs(n.SelectList.With); err != nil {
			return nil, err
		}
		defer b.popCTEs(n.SelectList.With)
	}
	var inputs []*bound
	var ops []ast.SetOprType
	for i, s := range n.SelectList.Selects {
		var q *bound
		var err error
		var after *ast.SetOprType
		switch sel := s.(type) {
		case *ast.SelectStmt:
			after = sel.AfterSetOperator
			q, err = b.bindSelect(sel, outer)
		case *ast.SetOprSelectList:
			after = sel.AfterSetOperator
			q, err = b.bindSetOpr(&ast.SetOprStmt{SelectList: sel, OrderBy: sel.OrderBy, Limit: sel.Limit, With: sel.With}, outer)
		default:
			err = errs.New(errs.Unsupported, "the operand %T of a set operation: write SELECTs joined by UNION, INTERSECT or EXCEPT", s)
		}
		if err != nil {
			return nil, err
		}
		if i > 0 {
			if after == nil {
				return nil, fmt.Errorf("%w: set operation without an operator", exec.ErrInternal)
			}
			switch *after {
			case ast.Union, ast.UnionAll, ast.Intersect, ast.Except:
			default:
				return nil, b.errAtWords(after.String(), errs.Unsupported, "%s: fsql has UNION [ALL], INTERSECT and EXCEPT (INTERSECT ALL and EXCEPT ALL keep duplicates, which fsql does not; count them with GROUP BY and join the counts)", after.String())
			}
			ops = append(ops, *after)
		}
		if i > 0 && len(q.names) != len(inputs[0].names) {
			return nil, errs.New(errs.ErWrongNumberOfColumnsInSelect, "the SELECTs of a UNION have different numbers of columns (%d and %d)", len(inputs[0].names), len(q.names))
		}
		inputs = append(inputs, q)
	}
	// Union types: the common type of each column across inputs.
	types := make([]arrow.DataType, len(inputs[0].names))
	for i := range types {
		for j, in := range inputs {
			t := in.plan.Schema()[i].Type
			if j == 0 {
				types[i] = t
				continue
			}
			ct, err := expr.CommonType(types[i], t)
			if err != nil {
				return nil, errs.Wrap(errs.Semantic, "UNION column %d: %w", i+1, err)
			}
			types[i] = ct
		}
	}
	for _, in := range inputs {
		p, err := castTo(in.plan, types, inputs[0].names)
		if err != nil {
			return nil, err
		}
		in.plan = p
	}
	// INTERSECT binds tighter than UNION and EXCEPT (MySQL 8.0.31, as in
	// the SQL standard): a UNION b INTERSECT c is a UNION (b INTERSECT c).
	// The parser lists the operands flat, so each run joined by INTERSECT
	// becomes one operand first.
	plans := []planner.Plan{inputs[0].plan}
	var rest []ast.SetOprType
	for i := 1; i < len(inputs); i++ {
		if ops[i-1] == ast.Intersect {
			p, err := b.intersectExcept(plans[len(plans)-1], inputs[i].plan, false)
			if err != nil {
				return nil, err
			}
			plans[len(plans)-1] = p
			continue
		}
		plans = append(plans, inputs[i].plan)
		rest = append(rest, ops[i-1])
	}
	// Then left to right: a UNION (distinct) de-duplicates everything to
	// its left, as MySQL evaluates mixed chains. A UNION over the
	// de-duplicated union just before it de-duplicates that union's
	// inputs once, with its own: q75's three channels, `a UNION b UNION
	// c`, are one aggregate over three inputs, not one over a and b and
	// another over that and c.
	cur := plans[0]
	var under *planner.Union // cur is distinct(under) when set
	for i := 1; i < len(plans); i++ {
		if rest[i-1] == ast.Except {
			p, err := b.intersectExcept(cur, plans[i], true)
			if err != nil {
				return nil, err
			}
			cur, under = p, nil
			continue
		}
		left := cur
		if rest[i-1] == ast.Union && under != nil {
			left = under
		}
		u := &planner.Union{Inputs: []planner.Plan{left, plans[i]}}
		if l, ok := left.(*planner.Union); ok && (rest[i-1] == ast.UnionAll || l == under) {
			u = &planner.Union{Inputs: append(append([]planner.Plan{}, l.Inputs...), plans[i])}
		}
		cur, under = u, nil
		if rest[i-1] == ast.Union {
			cur = distinct(u)
			if cur != planner.Plan(u) {
				under = u
			}
		}
	}
	q := &bound{plan: cur, names: inputs[0].names}
	return b.orderLimitOnOutput(q, n.OrderBy, n.Limit)
}

// castTo projects p to the given column types and names.
func castTo(p planner.Plan, types []arrow.DataType, names []string) (planner.Plan, error) {
	s := p.Schema()
	same := true
	exprs := make([]expr.Expr, len(s))
	for i, c := range s {
		exprs[i] = expr.NewColumn(i, c.Type, c.Name)
		if !arrow.TypeEqual(c.Type, types[i]) {
			same = false
			e, err := expr.NewCast(exprs[i], types[i])
			if err != nil {
				return nil, errs.Wrap(errs.Semantic, "%w", err)
			}
			exprs[i] = e
		}
	}
	if same {
		return p, nil
	}
	return &planner.Project{Child: p, Exprs: exprs, Names: names}, nil
}

// distinct groups by every column of p.
func distinct(p planner.Plan) planner.Plan {
	if rowsDistinct(p) {
		return p
	}
	s := p.Schema()
	agg := &planner.Aggregate{Child: p}
	for i, c := range s {
		agg.GroupBy = append(agg.GroupBy, expr.NewColumn(i, c.Type, c.Name))
		agg.Names = append(agg.Names, c.Name)
	}
	return agg
}

// rowsDistinct reports whether p's rows are distinct already, as an
// aggregate grouping by all of them would see them (NULLs equal), so
// DISTINCT over it would change nothing: an aggregate's rows (its group
// keys are distinct; a ROLLUP's are not, a rolled-up NULL looks like a
// data NULL), and any subset of such rows (semi and anti joins keep
// left rows, filters and limits some rows, sorts all). EXCEPT of a
// SELECT DISTINCT (q87, q38's chains) grouped its 500k rows twice.
func rowsDistinct(p planner.Plan) bool {
	switch p := p.(type) {
	case *planner.Aggregate:
		return !p.Rollup
	case *planner.Join:
		switch p.Type {
		case planner.SemiJoin, planner.AntiJoin, planner.NullAwareAntiJoin:
			return rowsDistinct(p.Left)
		}
	case *planner.Filter:
		return rowsDistinct(p.Child)
	case *planner.Limit:
		return rowsDistinct(p.Child)
	case *planner.Sort:
		return rowsDistinct(p.Child)
	}
	return false
}

// orderLimitOnOutput applies ORDER BY / LIMIT that can only name output
// columns (by name or position), as after a UNION.
func (b *Binder) orderLimitOnOutput(q *bound, ob *ast.OrderByClause, lim *ast.Limit) (*bound, error) {
	if ob != nil {
		sc := newScope(q.plan.Schema(), nil)
		var keys []planner.SortKey
		for _, it := range ob.Items {
			var e expr.Expr
			if pos, ok := positionOf(it.Expr); ok {
				if pos < 1 || pos > len(sc.cols) {
					return nil, errs.New(errs.ErBadFieldError, "ORDER BY position %d is not in the select list (it has %d columns)", pos, len(sc.cols))
				}
				e = sc.column(pos - 1)
			} else {
				x, err := b.bindScalar(it.Expr, sc)
				if err != nil {
					return nil, err
				}
				e = x
			}
			keys = append(keys, planner.SortKey{Expr: e, Desc: it.Desc, NullsFirst: !it.Desc})
		}
		q.plan = &planner.Sort{Child: q.plan, Keys: keys}
	}
	if lim != nil {
		p, err := b.limit(q.plan, lim)
		if err != nil {
			return nil, err
		}
		q.plan = p
	}
	return q, nil
}

func (b *Binder) limit(p planner.Plan, lim *ast.Limit) (planner.Plan, error) {
	n, err := b.constInt(lim.Count, "LIMIT")
	if err != nil {
		return nil, err
	}
	var off int64
	if lim.Offset != nil {
		if off, err = b.constInt(lim.Offset, "OFFSET"); err != nil {
			return nil, err
		}
	}
	return &planner.Limit{Child: p, N: n, Offset: off}, nil
}

// intersectExcept plans left INTERSECT right as the distinct rows of left
// that have a match in right (a semi join), and EXCEPT as those that have
// none (an anti join). Set operations compare NULLs as equal, so each
// column pair is matched on (c IS NULL, COALESCE(c, zero)): never NULL,
// and equal exactly when the values are not distinct.
//
// The right side is made distinct too: a semi or anti join's answer does
// not depend on how often a right row occurs, and the join builds its
// hash table from the right rows, which the two-phase DISTINCT shrinks
// before they are shuffled or broadcast (TPC-DS q14's cross_items
// intersects 860,000 catalog and 430,000 web sales rows of 1,700 distinct
// brand, class and category triples). distinct leaves rows that are
// distinct already as they are.
func (b *Binder) intersectExcept(left, right planner.Plan, except bool) (planner.Plan, error) {
	left, right = distinct(left), distinct(right)
	ls, rs := left.Schema(), right.Schema()
	var conds []expr.Expr
	for i := range ls {
		l := expr.Expr(expr.NewColumn(i, ls[i].Type, ls[i].Name))
		r := expr.Expr(expr.NewColumn(len(ls)+i, rs[i].Type, rs[i].Name))
		zero, err := zeroOf(ls[i].Type)
		if err != nil {
			return nil, err
		}
		for _, fn := range []string{"isnull", "coalesce"} {
			args := func(c expr.Expr) []expr.Expr {
				if fn == "coalesce" {
					return []expr.Expr{c, zero}
				}
				return []expr.Expr{c}
			}
			lk, err := b.call(fn, args(l)...)
			if err != nil {
				return nil, err
			}
			rk, err := b.call(fn, args(r)...)
			if err != nil {
				return nil, err
			}
			eq, err := b.call("=", lk, rk)
			if err != nil {
				return nil, err
			}
			conds = append(conds, eq)
		}
	}
	typ := planner.SemiJoin
	if except {
		typ = planner.AntiJoin
	}
	return &planner.Join{Type: typ, Left: left, Right: right, Cond: planner.JoinAnd(conds)}, nil
}

// zeroOf is a non-NULL constant of type t (expr.ZeroOf; BIGINT 0 for
// the NULL type).
func zeroOf(t arrow.DataType) (expr.Expr, error) {
	if t.ID() == arrow.NULL {
		return expr.NewLiteral(int64(0), arrow.PrimitiveTypes.Int64), nil
	}
	if z, ok := expr.ZeroOf(t); ok {
		return z, nil
	}
	return nil, errs.New(errs.Unsupported, "INTERSECT/EXCEPT over a %s column: CAST it to a string or number in each SELECT", hive.SQLTypeName(t))
}

// statementKind names a statement the binder does not run, for its
// error: "*ast.CreateTableStmt" is "CREATE TABLE".
func statementKind(stmt ast.StmtNode) string {
	name := strings.TrimSuffix(strings.TrimPrefix(fmt.Sprintf("%T", stmt), "*ast."), "Stmt")
	var words []string
	start := 0
	for i := 1; i < len(name); i++ {
		if name[i] >= 'A' && name[i] <= 'Z' && name[i-1] >= 'a' && name[i-1] <= 'z' {
			words = append(words, name[start:i])
			start = i
		}
	}
	words = append(words, name[start:])
	return strings.ToUpper(strings.Join(words, " ")) + " statements"
}
