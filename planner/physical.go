package planner

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fsql-dev/fsql/connectors/hive"
	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/shuffle"
)

// PhysicalConfig holds the knobs physical planning reads.
type PhysicalConfig struct {
	// MaxParallelism is the number of key groups of every hash exchange.
	MaxParallelism int
	// BroadcastThreshold: a join build side estimated smaller than this
	// many bytes is broadcast instead of shuffled.
	BroadcastThreshold int64
	// DynamicFiltering turns dynamic partition pruning on.
	DynamicFiltering bool
}

// Physical turns an optimized logical plan into an executable plan with
// exchanges. The root's output is the query result: when the root is
// split among tasks, the runner gathers it (order does not matter there;
// ordered results are produced by a single task).
func Physical(p Plan, cfg PhysicalConfig) (exec.Node, error) {
	return PhysicalContext(context.Background(), p, cfg)
}

// PhysicalContext is Physical that stops with ctx's error once ctx is
// done (checked at every node).
func PhysicalContext(ctx context.Context, p Plan, cfg PhysicalConfig) (exec.Node, error) {
	b := &physBuilder{cfg: cfg, ctx: ctx, parents: map[Plan]int{}, shared: map[Plan]phys{}}
	walkPlan(p, func(n Plan) {
		for _, c := range n.Children() {
			b.parents[c]++
		}
	})
	if cfg.DynamicFiltering {
		b.dpp = planDynamicFilters(p)
	}
	out, err := b.build(p)
	if err != nil {
		return nil, err
	}
	return out.node, nil
}

type physBuilder struct {
	ctx context.Context
	cfg PhysicalConfig
	dpp *dppPlan // nil when dynamic filtering is off
	// parents counts each logical node's parents: a node with several
	// (share_subplans) is built once, and shared holds its plan.
	parents map[Plan]int
	shared  map[Plan]phys
}

// phys is a physical subplan and whether all its rows come out of one task
// (after a gather), as opposed to being split among the stage's tasks.
type phys struct {
	node   exec.Node
	single bool
}

func names(s Schema) []string {
	out := make([]string, len(s))
	for i, c := range s {
		out[i] = c.Name
	}
	return out
}

func columns(s Schema, from, to int) []expr.Expr {
	out := make([]expr.Expr, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, expr.NewColumn(i, s[i].Type, s[i].Name))
	}
	return out
}

func (b *physBuilder) gather(p phys) exec.Node {
	if p.single {
		return p.node
	}
	return &shuffle.Exchange{Kind: shuffle.Gather, Child: p.node}
}

func (b *physBuilder) hash(p exec.Node, keys []expr.Expr) exec.Node {
	return &shuffle.Exchange{Kind: shuffle.Hash, Child: p, Keys: keys, MaxParallelism: b.cfg.MaxParallelism}
}

func (b *physBuilder) build(p Plan) (phys, error) {
	if err := b.ctx.Err(); err != nil {
		return phys{}, err
	}
	if b.parents[p] < 2 {
		return b.buildNode(p)
	}
	if s, ok := b.shared[p]; ok {
		return s, nil
	}
	c, err := b.buildNode(p)
	if err != nil {
		return c, err
	}
	// One producer stage for every parent: a forward exchange hands each
	// consumer task the output of one producer task, so the consumers
	// keep the producer's distribution (every parent plans the exchange
	// it needs above, as it would over an unshared child) and the
	// runtime keeps the output until the last consumer stage finished.
	s := phys{&shuffle.Exchange{Kind: shuffle.Forward, Child: c.node}, c.single}
	b.shared[p] = s
	return s, nil
}

func (b *physBuilder) buildNode(p Plan) (phys, error) {
	switch n := p.(type) {
	case *Scan:
		return b.scan(n)
	case *Filter:
		if w, ok := n.Child.(*Window); ok && b.parents[w] < 2 {
			if lim := rankLimit(n.Cond, w); lim != nil {
				c, err := b.window(w, lim)
				if err != nil {
					return c, err
				}
				return phys{&exec.Filter{Child: c.node, Cond: n.Cond}, c.single}, nil
			}
		}
		c, err := b.build(n.Child)
		if err != nil {
			return c, err
		}
		return phys{&exec.Filter{Child: c.node, Cond: n.Cond}, c.single}, nil
	case *Project:
		c, err := b.build(n.Child)
		if err != nil {
			return c, err
		}
		return phys{project(c.node, n.Exprs, n.Names), c.single}, nil
	case *Join:
		return b.join(n)
	case *Aggregate:
		return b.aggregate(n)
	case *Sort:
		c, err := b.build(n.Child)
		if err != nil {
			return c, err
		}
		return phys{&exec.Sort{Child: b.gather(c), Keys: n.Keys}, true}, nil
	case *Limit:
		return b.limit(n)
	case *Window:
		return b.window(n, nil)
	case *Union:
		var ins []phys
		anySingle := false
		for _, in := range n.Inputs {
			c, err := b.build(in)
			if err != nil {
				return c, err
			}
			ins = append(ins, c)
			anySingle = anySingle || c.single
		}
		u := &exec.UnionAll{}
		var fwd *shuffle.Exchange
		for _, c := range ins {
			switch {
			case anySingle:
				u.Inputs = append(u.Inputs, b.gather(c))
			case !b.oneForward(&fwd, c.node):
				// A stage runs as many tasks as the producer of a forward
				// input; a second producer's task count may differ, so
				// this branch is redistributed by a hash of its row.
				cs := c.node.Schema()
				keys := make([]expr.Expr, cs.NumFields())
				for i, f := range cs.Fields() {
					keys[i] = expr.NewColumn(i, f.Type, f.Name)
				}
				u.Inputs = append(u.Inputs, b.hash(c.node, keys))
			default:
				u.Inputs = append(u.Inputs, c.node)
			}
		}
		return phys{u, anySingle}, nil
	case *Values:
		types := make([]arrow.DataType, len(n.Cols))
		for i, c := range n.Cols {
			types[i] = c.Type
		}
		return phys{&exec.Values{Rows: n.Rows, Names: names(n.Cols), Types: types}, true}, nil
	case *MaxOneRow:
		c, err := b.build(n.Child)
		if err != nil {
			return c, err
		}
		return phys{&exec.MaxOneRow{Child: b.gather(c)}, true}, nil
	case *MultiJoin:
		return phys{}, fmt.Errorf("%w: a MultiJoin survived join ordering", exec.ErrInternal)
	}
	return phys{}, fmt.Errorf("%w: no physical plan for %T", exec.ErrInternal, p)
}

// oneForward reports whether the part of n's stage below n reads no
// forward exchange other than *fwd, which it sets to the one it reads.
func (b *physBuilder) oneForward(fwd **shuffle.Exchange, n exec.Node) bool {
	ok := true
	var walk func(n exec.Node)
	walk = func(n exec.Node) {
		if ex, isEx := n.(*shuffle.Exchange); isEx {
			if ex.Kind == shuffle.Forward {
				if *fwd == nil {
					*fwd = ex
				}
				ok = ok && *fwd == ex
			}
			return
		}
		for _, c := range n.Children() {
			walk(c)
		}
	}
	walk(n)
	return ok
}

func (b *physBuilder) scan(n *Scan) (phys, error) {
	parts := n.Partitions
	if n.Pruned && parts == nil {
		parts = []*hive.Partition{} // every partition pruned
	}
	s := &exec.Scan{Table: n.Table, Columns: n.Columns, Partitions: parts}
	scan := b.dpp.wrapScan(n, s)
	if len(n.Filters) > 0 {
		// The scan skips row groups by them; the Filter drops the rows.
		s.Filters = TableFilters(n)
		return phys{&exec.Filter{Child: scan, Cond: joinAnd(n.Filters)}, false}, nil
	}
	return phys{scan, false}, nil
}

// splitEquiKeys separates equality conjuncts between the two sides of a
// join (left columns [0, lw), right columns after) from the rest. A
// null-safe equality l <=> r is two keys, (l IS NULL, COALESCE(l, zero))
// against the same of r: never NULL, equal exactly when l and r are not
// distinct, so it hashes like = instead of falling to a nested loop.
func splitEquiKeys(cond expr.Expr, lw, rw int) (lk, rk []expr.Expr, residual []expr.Expr) {
	for _, c := range expr.SplitAnd(cond) {
		if c == nil {
			continue
		}
		call, ok := c.(*expr.Call)
		if ok && (call.Fn == "=" || call.Fn == "<=>") && len(call.Args) == 2 {
			a, bb := call.Args[0], call.Args[1]
			an, bn := len(expr.Columns(a)) > 0, len(expr.Columns(bb)) > 0
			var l, r expr.Expr
			switch {
			case an && bn && colRange(a, 0, lw) && colRange(bb, lw, lw+rw):
				l, r = a, shift(bb, -lw)
			case an && bn && colRange(bb, 0, lw) && colRange(a, lw, lw+rw):
				l, r = bb, shift(a, -lw)
			}
			if l != nil && call.Fn == "=" {
				lk, rk = append(lk, l), append(rk, r)
				continue
			}
			if l != nil {
				ln, lv, okL := nullSafeKey(l)
				rn, rv, okR := nullSafeKey(r)
				if okL && okR {
					lk, rk = append(lk, ln, lv), append(rk, rn, rv)
					continue
				}
			}
		}
		residual = append(residual, c)
	}
	return lk, rk, residual
}

// nullSafeKey is e's half of a <=> key: e IS NULL and COALESCE(e, zero of
// its type). false when the type has no zero.
func nullSafeKey(e expr.Expr) (isNull, value expr.Expr, ok bool) {
	zero, ok := expr.ZeroOf(e.DataType())
	if !ok {
		return nil, nil, false
	}
	isNull, err := expr.NewCall("isnull", e)
	if err != nil {
		return nil, nil, false
	}
	value, err = expr.NewCall("coalesce", e, zero)
	if err != nil || !arrow.TypeEqual(value.DataType(), e.DataType()) {
		return nil, nil, false
	}
	return isNull, value, true
}

var joinTypes = map[JoinType]exec.JoinType{
	InnerJoin: exec.InnerJoin, LeftJoin: exec.LeftJoin, SemiJoin: exec.SemiJoin,
	AntiJoin: exec.AntiJoin, NullAwareAntiJoin: exec.NullAwareAntiJoin, MarkJoin: exec.MarkJoin,
}

func (b *physBuilder) join(n *Join) (phys, error) {
	lw, rw := width(n.Left), width(n.Right)
	l, err := b.build(n.Left)
	if err != nil {
		return l, err
	}
	r, err := b.build(n.Right)
	if err != nil {
		return r, err
	}
	lk, rk, residual := splitEquiKeys(n.Cond, lw, rw)
	le, re := Estimate(n.Left), Estimate(n.Right)

	if len(lk) == 0 {
		// No equality to hash on: a nested-loop join against the whole
		// right side, which every probe task must see.
		if n.Type == NullAwareAntiJoin || n.Type == MarkJoin {
			return phys{}, fmt.Errorf("%w: IN/EXISTS subquery without an equality between the subquery and the outer query", exec.ErrNotImplemented)
		}
		build := &shuffle.Exchange{Kind: shuffle.Broadcast, Child: r.node}
		return phys{&exec.NestedLoopJoin{Type: joinTypes[n.Type], Build: build, Probe: l.node, Cond: n.Cond}, l.single}, nil
	}

	probe, build := l, r
	pk, bk := lk, rk
	swapped := false
	if n.Type == InnerJoin && buildOnLeft(n, le, re) {
		probe, build, pk, bk, swapped = r, l, rk, lk, true
	}
	var res expr.Expr
	if len(residual) > 0 {
		res = joinAnd(residual)
		if swapped {
			res = remap(res, func(i int) int {
				if i < lw {
					return rw + i
				}
				return i - lw
			})
		}
	}
	buildBytes := re.Bytes()
	if swapped {
		buildBytes = le.Bytes()
	}
	bn, err := b.dpp.wrapBuild(n, build.node, bk, swapped)
	if err != nil {
		return phys{}, err
	}
	build.node = bn
	pn, collectsProbe := b.dpp.wrapProbe(n, probe.node, pk)
	probe.node = pn
	hj := &exec.HashJoin{Type: joinTypes[n.Type], BuildKeys: bk, ProbeKeys: pk, Residual: res}
	single := probe.single
	// NOT IN and mark joins need every build row in every task (one NULL
	// anywhere changes every answer), so they always broadcast.
	if !collectsProbe && (probe.single || n.Type == NullAwareAntiJoin || n.Type == MarkJoin || buildBytes <= float64(b.cfg.BroadcastThreshold)) {
		hj.Build = &shuffle.Exchange{Kind: shuffle.Broadcast, Child: build.node}
		hj.Probe = probe.node
	} else {
		hj.Build = b.hash(build.node, bk)
		hj.Probe = b.hash(probe.node, pk)
		single = false
	}
	var out exec.Node = hj
	if swapped {
		// Restore left-then-right column order.
		js := hj.Schema()
		proj := &exec.Project{Child: hj}
		for i := 0; i < lw; i++ {
			f := js.Field(rw + i)
			proj.Exprs = append(proj.Exprs, expr.NewColumn(rw+i, f.Type, f.Name))
			proj.Names = append(proj.Names, f.Name)
		}
		for i := 0; i < rw; i++ {
			f := js.Field(i)
			proj.Exprs = append(proj.Exprs, expr.NewColumn(i, f.Type, f.Name))
			proj.Names = append(proj.Names, f.Name)
		}
		out = proj
	}
	return phys{out, single}, nil
}

func (b *physBuilder) aggregate(n *Aggregate) (phys, error) {
	c, err := b.build(n.Child)
	if err != nil {
		return c, err
	}
	in := c.node
	if n.Local {
		// Each task pre-aggregates its own rows; the partial mode stops
		// grouping when the rows barely share groups.
		return phys{&exec.HashAggregate{Child: in, Mode: exec.AggPartial, GroupBy: n.GroupBy, GroupNames: n.Names}, c.single}, nil
	}
	group := n.GroupBy
	gnames := append([]string{}, n.Names...)
	var seed []*expr.Literal
	aggs := make([]exec.AggFunc, len(n.Aggs))
	for i, a := range n.Aggs {
		aggs[i] = exec.AggFunc{Fn: a.Fn, Arg: a.Arg, Distinct: a.Distinct, Type: a.Type, Name: a.Name}
	}
	distinct := false
	for _, a := range aggs {
		distinct = distinct || a.Distinct
	}
	if n.Rollup && !distinct {
		return b.rollup(n, c, aggs), nil
	}
	if n.Rollup {
		// DISTINCT aggregates cannot merge partial states: expand each
		// row once per grouping set (longest prefix first);
		// the grouping id becomes one more group key, so rows rolled up
		// differ from rows whose key is a real NULL.
		k := len(n.GroupBy)
		cs := n.Child.Schema()
		ex := &exec.Expand{Child: in, Exprs: n.GroupBy, Names: n.Names, Pass: columns(cs, 0, len(cs)), PassNames: names(cs)}
		for l := k; l >= 0; l-- {
			set := make([]int, l)
			for i := range set {
				set[i] = i
			}
			ex.Sets = append(ex.Sets, set)
		}
		in = ex
		es := ex.Schema()
		group = nil
		for i := 0; i <= k; i++ {
			f := es.Field(i)
			group = append(group, expr.NewColumn(i, f.Type, f.Name))
		}
		gnames = append(gnames, "grouping_id")
		// The empty grouping set is one group even over no rows: its
		// key (every column rolled up) is seeded.
		for _, g := range n.GroupBy {
			seed = append(seed, expr.Null(g.DataType()))
		}
		seed = append(seed, expr.NewLiteral(int64(1)<<k-1, arrow.PrimitiveTypes.Int64))
		for i := range aggs {
			if aggs[i].Arg != nil {
				aggs[i].Arg = shift(aggs[i].Arg, k+1)
			}
		}
	}
	if distinct || c.single {
		// DISTINCT aggregates cannot be merged from partial states: move
		// raw rows by group key and aggregate once.
		// A seeded group must come from one task: ROLLUP with DISTINCT
		// aggregates runs on one.
		single := c.single
		if !single {
			if len(group) == 0 || seed != nil {
				in, single = &shuffle.Exchange{Kind: shuffle.Gather, Child: in}, true
			} else {
				in = b.hash(in, group)
			}
		}
		return phys{&exec.HashAggregate{Child: in, Mode: exec.AggSingle, GroupBy: group, GroupNames: gnames, Aggs: aggs, Seed: seed}, single}, nil
	}
	partial := &exec.HashAggregate{Child: in, Mode: exec.AggPartial, GroupBy: group, GroupNames: gnames, Aggs: aggs, Seed: seed}
	ps := partial.PartialSchema()
	keys := make([]expr.Expr, len(group))
	for i := range group {
		f := ps.Field(i)
		keys[i] = expr.NewColumn(i, f.Type, f.Name)
	}
	var ex exec.Node
	single := false
	if len(group) == 0 {
		ex, single = &shuffle.Exchange{Kind: shuffle.Gather, Child: partial}, true
	} else {
		ex = b.hash(partial, keys)
	}
	return phys{&exec.HashAggregate{Child: ex, Mode: exec.AggFinal, GroupBy: keys, GroupNames: gnames, Aggs: aggs}, single}, nil
}

func (b *physBuilder) limit(n *Limit) (phys, error) {
	if s, ok := n.Child.(*Sort); ok {
		c, err := b.build(s.Child)
		if err != nil {
			return c, err
		}
		in := c.node
		if !c.single {
			// Each task keeps its best N+Offset rows; one task merges.
			local := &exec.TopN{Child: c.node, Keys: s.Keys, N: n.N + n.Offset}
			in = &shuffle.Exchange{Kind: shuffle.Gather, Child: local}
		}
		return phys{&exec.TopN{Child: in, Keys: s.Keys, N: n.N, Offset: n.Offset}, true}, nil
	}
	c, err := b.build(n.Child)
	if err != nil {
		return c, err
	}
	in := c.node
	if !c.single {
		local := &exec.Limit{Child: c.node, N: n.N + n.Offset}
		in = &shuffle.Exchange{Kind: shuffle.Gather, Child: local}
	}
	return phys{&exec.Limit{Child: in, N: n.N, Offset: n.Offset}, true}, nil
}
