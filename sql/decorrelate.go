package sql

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/planner"
)

// Subquery decorrelation, after "Unnesting Arbitrary Queries" (Neumann and
// Kemper, 2015). A correlated subquery Q references columns C of the plan
// it is joined into (the host). Its value depends on nothing of the host
// row but C, so Q is evaluated once for every distinct value of C: the
// domain D = DISTINCT C(host). The dependent join D ⋈ Q is pushed down
// Q's operators (flatten) until the correlation disappears: every
// operator then works per D value (filters and projections read the D
// columns where Q read the host's; aggregates, windows and LIMIT group or
// partition by D as well; joins carry D from a dependent side, or match
// it between two), and the subtree below the last correlated operator is
// simply crossed with D. The result has Q's columns followed by D's and
// is joined back to the host on C = D, NULL-safely (a NULL in C is a
// value of D like any other).
//
// Where a correlated filter sits directly on an uncorrelated subtree and
// equates every column of C with an inner expression (inner.k = outer.c),
// D is not needed: the inner expression takes D's place (the subtree then
// holds more D values than the host has, NULL among them, which never
// join back). This is how a typical TPC-DS subquery (correlated on a key)
// becomes an aggregate grouped by that key and one hash join.
//
// A reference two or more levels out is a free reference that Q passes
// through: decorrelating Q into its host turns it into a reference one
// level less out, so it is decorrelated when the host itself is.

// correlation lists the host columns a subquery references one level out.
type correlation struct {
	cols  []int       // host column indexes, in order of first reference
	pos   map[int]int // host column → position in cols (and in D)
	types []arrow.DataType
	names []string
}

func (c *correlation) k() int { return len(c.cols) }

func correlationOf(p planner.Plan) *correlation {
	c := &correlation{pos: map[int]int{}}
	walkPlanExprs(p, func(e expr.Expr) {
		expr.Walk(e, func(x expr.Expr) bool {
			if o, ok := x.(*outerColumn); ok && o.depth == 1 {
				if _, seen := c.pos[o.index]; !seen {
					c.pos[o.index] = len(c.cols)
					c.cols = append(c.cols, o.index)
					c.types = append(c.types, o.typ)
					c.names = append(c.names, o.name)
				}
			}
			return true
		})
	})
	return c
}

// flat is a flattened subplan: the original node's width columns, then
// the k domain columns.
type flat struct {
	plan  planner.Plan
	width int
	// nullable tells, per domain column, whether it may hold NULL (taken
	// from the host) or not (an inner expression that replaced D).
	nullable []bool
}

// flattener pushes one subquery's dependent join down its plan.
type flattener struct {
	b    *Binder
	host planner.Plan
	corr *correlation
	deps map[planner.Plan]bool
	free map[planner.Plan]bool
}

func (b *Binder) newFlattener(host planner.Plan, q planner.Plan) *flattener {
	return &flattener{b: b, host: host, corr: correlationOf(q), deps: map[planner.Plan]bool{}, free: map[planner.Plan]bool{}}
}

// dependent reports whether p's subtree references the host.
func (f *flattener) dependent(p planner.Plan) bool {
	if d, ok := f.deps[p]; ok {
		return d
	}
	d := false
	for _, e := range nodeExprs(p) {
		if refsDepth(e, 1) {
			d = true
			break
		}
	}
	for _, c := range p.Children() {
		if d {
			break
		}
		d = f.dependent(c)
	}
	f.deps[p] = d
	return d
}

// refsDepth reports whether e references a column exactly depth levels
// out (depth 0: any outer level).
func refsDepth(e expr.Expr, depth int) bool {
	found := false
	expr.Walk(e, func(x expr.Expr) bool {
		if o, ok := x.(*outerColumn); ok && (depth == 0 || o.depth == depth) {
			found = true
		}
		return !found
	})
	return found
}

// hasFreeRefs reports whether p's subtree references any outer query.
func hasFreeRefs(p planner.Plan) bool {
	found := false
	walkPlanExprs(p, func(e expr.Expr) {
		if !found && refsDepth(e, 0) {
			found = true
		}
	})
	return found
}

// rewrite maps an expression of a node whose (flattened) input has its
// domain columns at dbase: host references become domain columns, deeper
// references one level less out.
func (f *flattener) rewrite(e expr.Expr, dbase int) (expr.Expr, error) {
	if e == nil {
		return nil, nil
	}
	return expr.Rewrite(e, func(x expr.Expr) (expr.Expr, error) {
		o, ok := x.(*outerColumn)
		if !ok {
			return x, nil
		}
		if o.depth > 1 {
			return o.up(), nil
		}
		p, ok := f.corr.pos[o.index]
		if !ok {
			return nil, fmt.Errorf("%w: correlated reference %s missing from the domain", exec.ErrInternal, o)
		}
		return expr.NewColumn(dbase+p, o.typ, o.name), nil
	})
}

// toHost maps an expression evaluated over the host: host references
// become host columns, deeper references one level less out.
func toHost(e expr.Expr) (expr.Expr, error) {
	return expr.Rewrite(e, func(x expr.Expr) (expr.Expr, error) {
		o, ok := x.(*outerColumn)
		if !ok {
			return x, nil
		}
		if o.depth > 1 {
			return o.up(), nil
		}
		return expr.NewColumn(o.index, o.typ, o.name), nil
	})
}

// decrement moves an independent subtree's deeper references one level in.
func decrement(p planner.Plan) (planner.Plan, error) {
	if !hasFreeRefs(p) {
		return p, nil
	}
	return mapPlan(p, func(e expr.Expr) (expr.Expr, error) {
		if !refsDepth(e, 0) {
			return e, nil
		}
		return expr.Rewrite(e, func(x expr.Expr) (expr.Expr, error) {
			if o, ok := x.(*outerColumn); ok {
				if o.depth <= 1 {
					return nil, fmt.Errorf("%w: host reference %s in an independent subtree", exec.ErrInternal, o)
				}
				return o.up(), nil
			}
			return x, nil
		})
	})
}

// domain is D: the distinct values of the correlated host columns.
func (f *flattener) domain() planner.Plan {
	proj := &planner.Project{Child: planner.Clone(f.host)}
	agg := &planner.Aggregate{Child: proj}
	for j, h := range f.corr.cols {
		proj.Exprs = append(proj.Exprs, expr.NewColumn(h, f.corr.types[j], f.corr.names[j]))
		name := fmt.Sprintf("__domain%d", j)
		proj.Names = append(proj.Names, name)
		agg.GroupBy = append(agg.GroupBy, expr.NewColumn(j, f.corr.types[j], name))
		agg.Names = append(agg.Names, name)
	}
	return agg
}

func allNullable(k int) []bool {
	out := make([]bool, k)
	for i := range out {
		out[i] = true
	}
	return out
}

// cross is D × p for an independent subtree p.
func (f *flattener) cross(p planner.Plan) (flat, error) {
	p, err := decrement(p)
	if err != nil {
		return flat{}, err
	}
	w := len(p.Schema())
	if f.corr.k() == 0 {
		return flat{plan: p, width: w}, nil
	}
	return flat{plan: &planner.Join{Type: planner.InnerJoin, Left: p, Right: f.domain()}, width: w, nullable: allNullable(f.corr.k())}, nil
}

// domainCols are references to a flat's domain columns.
func (f *flattener) domainCols(base int) []expr.Expr {
	out := make([]expr.Expr, f.corr.k())
	for j := range out {
		out[j] = expr.NewColumn(base+j, f.corr.types[j], fmt.Sprintf("__domain%d", j))
	}
	return out
}

// project builds a Project over child computing exprs, then child's
// domain columns at dbase.
func (f *flattener) project(child planner.Plan, exprs []expr.Expr, names []string, dbase int) *planner.Project {
	proj := &planner.Project{Child: child, Exprs: append([]expr.Expr(nil), exprs...), Names: append([]string(nil), names...)}
	for j, d := range f.domainCols(dbase) {
		proj.Exprs = append(proj.Exprs, d)
		proj.Names = append(proj.Names, fmt.Sprintf("__domain%d", j))
	}
	return proj
}

// passthrough lists columns [from, from+n) of s.
func passthrough(s planner.Schema, from, n int) ([]expr.Expr, []string) {
	var es []expr.Expr
	var ns []string
	for i := from; i < from+n; i++ {
		es = append(es, expr.NewColumn(i, s[i].Type, s[i].Name))
		ns = append(ns, s[i].Name)
	}
	return es, ns
}

// flatten returns D ⋈ p: p's columns, then the domain columns.
func (f *flattener) flatten(p planner.Plan) (flat, error) {
	if err := f.b.checkCtx(); err != nil {
		return flat{}, err
	}
	if !f.dependent(p) {
		return f.cross(p)
	}
	switch n := p.(type) {
	case *planner.Filter:
		if !f.dependent(n.Child) {
			if fl, ok, err := f.eliminate(n); err != nil || ok {
				return fl, err
			}
		}
		c, err := f.flatten(n.Child)
		if err != nil {
			return flat{}, err
		}
		cond, err := f.rewrite(n.Cond, c.width)
		if err != nil {
			return flat{}, err
		}
		return flat{plan: &planner.Filter{Child: c.plan, Cond: cond}, width: c.width, nullable: c.nullable}, nil
	case *planner.Project:
		c, err := f.flatten(n.Child)
		if err != nil {
			return flat{}, err
		}
		exprs := make([]expr.Expr, len(n.Exprs))
		for i, e := range n.Exprs {
			if exprs[i], err = f.rewrite(e, c.width); err != nil {
				return flat{}, err
			}
		}
		proj := f.project(c.plan, exprs, n.Names, c.width)
		proj.Tables = append([]string(nil), n.Tables...)
		return flat{plan: proj, width: len(n.Exprs), nullable: c.nullable}, nil
	case *planner.Sort:
		c, err := f.flatten(n.Child)
		if err != nil {
			return flat{}, err
		}
		keys, err := f.sortKeys(n.Keys, c.width)
		if err != nil {
			return flat{}, err
		}
		return flat{plan: &planner.Sort{Child: c.plan, Keys: keys}, width: c.width, nullable: c.nullable}, nil
	case *planner.Aggregate:
		return f.aggregate(n)
	case *planner.Limit:
		return f.limit(n)
	case *planner.Window:
		return f.window(n)
	case *planner.Join:
		return f.join(n)
	case *planner.MultiJoin:
		return f.multiJoin(n)
	case *planner.Union:
		return f.union(n)
	}
	return flat{}, errs.New(errs.Unsupported, "a correlated subquery over %s (a reference to the outer query in a constant row or under a subquery guard): move the outer reference into the subquery's WHERE", nodeName(p))
}

func nodeName(p planner.Plan) string {
	return fmt.Sprintf("%T", p)[len("*planner."):]
}

func (f *flattener) sortKeys(ks []planner.SortKey, dbase int) ([]planner.SortKey, error) {
	out := make([]planner.SortKey, len(ks))
	for i, k := range ks {
		e, err := f.rewrite(k.Expr, dbase)
		if err != nil {
			return nil, err
		}
		out[i] = k
		out[i].Expr = e
	}
	return out, nil
}

// eliminate replaces D by inner expressions when the filter n (over an
// independent subtree) equates every correlated column with one: each
// host reference then reads its inner expression, and the domain columns
// are those expressions. Rows where one is NULL, whose equality could not
// hold, are kept as a domain value of their own: it is marked not
// nullable, so every later domain equality is a plain = that a NULL never
// satisfies, and those rows never join back to an outer row.
func (f *flattener) eliminate(n *planner.Filter) (flat, bool, error) {
	k := f.corr.k()
	inner := make([]expr.Expr, k)
	conjs := expr.SplitAnd(n.Cond)
	used := make([]bool, len(conjs))
	for i, c := range conjs {
		call, ok := c.(*expr.Call)
		if !ok || call.Fn != "=" || len(call.Args) != 2 {
			continue
		}
		for s := 0; s < 2; s++ {
			o, ok := call.Args[s].(*outerColumn)
			in := call.Args[1-s]
			if !ok || o.depth != 1 || refsDepth(in, 0) || len(expr.Columns(in)) == 0 {
				continue
			}
			// The inner expression stands in for the outer column
			// everywhere, so it must be the same type (no collation,
			// under which equal strings may differ).
			if !arrow.TypeEqual(in.DataType(), o.typ) || expr.CollationOf(o.typ) != nil {
				continue
			}
			p := f.corr.pos[o.index]
			if inner[p] == nil {
				inner[p], used[i] = in, true
			}
			break
		}
	}
	for _, e := range inner {
		if e == nil {
			return flat{}, false, nil
		}
	}
	child, err := decrement(n.Child)
	if err != nil {
		return flat{}, false, err
	}
	subst := func(e expr.Expr) (expr.Expr, error) {
		return expr.Rewrite(e, func(x expr.Expr) (expr.Expr, error) {
			o, ok := x.(*outerColumn)
			if !ok {
				return x, nil
			}
			if o.depth > 1 {
				return o.up(), nil
			}
			return inner[f.corr.pos[o.index]], nil
		})
	}
	var rest []expr.Expr
	for i, c := range conjs {
		if used[i] {
			continue
		}
		r, err := subst(c)
		if err != nil {
			return flat{}, false, err
		}
		rest = append(rest, r)
	}
	s := child.Schema()
	exprs, names := passthrough(s, 0, len(s))
	for j, e := range inner {
		exprs = append(exprs, e)
		names = append(names, fmt.Sprintf("__domain%d", j))
	}
	var filtered planner.Plan = child
	if len(rest) > 0 {
		// Every conjunct may have become a domain column: no filter is
		// left (a Filter with no condition fails in the executor).
		filtered = &planner.Filter{Child: child, Cond: planner.JoinAnd(rest)}
	}
	proj := &planner.Project{Child: filtered, Exprs: exprs, Names: names}
	for _, c := range s {
		proj.Tables = append(proj.Tables, c.Table)
	}
	return flat{plan: proj, width: len(s), nullable: make([]bool, k)}, true, nil
}

// domainEq is the condition l = r between two domain columns (or a host
// column and a domain column): NULL-safe when both may be NULL, written
// so a hash join can use it as keys.
func (b *Binder) domainEq(l, r expr.Expr, bothNullable bool) ([]expr.Expr, error) {
	if !bothNullable {
		eq, err := b.call("=", l, r)
		return []expr.Expr{eq}, err
	}
	ln, err := b.call("isnull", l)
	if err != nil {
		return nil, err
	}
	rn, err := b.call("isnull", r)
	if err != nil {
		return nil, err
	}
	nullEq, err := b.call("=", ln, rn)
	if err != nil {
		return nil, err
	}
	zero, err := zeroOf(l.DataType())
	if err != nil {
		// No stand-in value for this type: a residual <=> (no hash key).
		ns, err := b.call("<=>", l, r)
		return []expr.Expr{ns}, err
	}
	lc, err := b.call("coalesce", l, zero)
	if err != nil {
		return nil, err
	}
	rc, err := b.call("coalesce", r, zero)
	if err != nil {
		return nil, err
	}
	valEq, err := b.call("=", lc, rc)
	if err != nil {
		return nil, err
	}
	return []expr.Expr{nullEq, valEq}, nil
}
