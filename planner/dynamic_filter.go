package planner

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/pruning"
)

// Dynamic partition pruning (DPP).
//
// Where a selective side of an inner or semi hash join (a filtered
// dimension) joins a fact table's scan on one of the scan's columns, the
// physical plan gets:
//   - a DynamicFilterDataCollector on top of the selective (build) side,
//     right under its exchange, collecting the distinct join keys;
//   - an OrderEnforce directly above the fact scan: a dependency edge with
//     no data, so the collector's stage finishes before the scan's stage
//     starts;
//   - dynamic filter targets on the scan (collector ID and fact column),
//     with which it asks the run's pruning coordinator for the surviving
//     partitions, row groups and rows before it lists any file.
//
// The plan holds only IDs: the coordinator is created by the runtime for
// each run, so a plan runs again with fresh filters.
//
// The selective side may also be the probe side: the preserved side of a
// left join (its optional side is the fact), and the outer side of a semi
// or anti join when it is filtered and far smaller than the subquery side
// (q16, q94 and q95 probe a few hundred orders against a whole sales
// table). The collector then sits on the probe side under its hash
// exchange, and the join shuffles both sides, so the collector's stage
// finishes before the build side's fact scans start; the subquery's key
// is traced through inner joins' equi keys as well, so both sides of a
// self-join on it are pruned.
//
// The fact side is found by tracing the probe join key down through
// projections, filters, joins (the inner sides and the left side of
// semi/anti/left/mark joins) and group keys of aggregates — every operator
// where dropping rows whose key cannot match changes nothing above. It
// also traces into every branch of a UNION ALL (each branch's rows pass
// through unchanged). It never traces through LIMIT, windows or
// MaxOneRow, where dropping rows early would change the answer.

// dppPlan is decided before physical building: which joins collect, and
// which scans wait for which collectors.
type dppPlan struct {
	collectors map[*Join]*dppCollector
	scans      map[*Scan][]dppTarget
	nextID     int
}

type dppCollector struct {
	node    *exec.DynamicFilterDataCollector
	keyIdx  int // which equi key of the join it collects
	factOnL bool
	// onProbe: the selective side is the join's probe side (the preserved
	// side of a left join whose optional side is the fact). The collector
	// then sits on the probe side under its hash exchange, and the join
	// must shuffle both sides rather than broadcast.
	onProbe bool
}

type dppTarget struct {
	collector *exec.DynamicFilterDataCollector
	join      *Join   // the join whose collector it is
	column    int     // index into the scan's table schema
	keeps     float64 // estimated fraction of its rows the collecting side keeps
}

// dppMinFactRows: below this many rows a fact scan is read whole; DPP's
// extra stage edge would cost more than it saves.
const dppMinFactRows = 10000

// dppMaxBuildFraction: the build side must keep at most this fraction of
// its rows (it is filtered) to be worth collecting.
const dppMaxBuildFraction = 0.5

func planDynamicFilters(root Plan) *dppPlan {
	d := &dppPlan{
		collectors: map[*Join]*dppCollector{},
		scans:      map[*Scan][]dppTarget{},
	}
	// A node with several parents (share_subplans) is computed once for
	// all of them, so no join above it may prune a scan inside it: the
	// trace stops there. Each node is visited once, so a join inside a
	// shared node gets one collector.
	parents := map[Plan]int{}
	walkPlan(root, func(p Plan) {
		for _, c := range p.Children() {
			parents[c]++
		}
	})
	shared := func(p Plan) bool { return parents[p] > 1 }
	seen := map[Plan]bool{}
	var lefts []*Join // left joins whose preserved side is not selective by itself
	var walk func(p Plan)
	walk = func(p Plan) {
		if seen[p] {
			return
		}
		seen[p] = true
		for _, c := range p.Children() {
			walk(c)
		}
		j, ok := p.(*Join)
		if !ok {
			return
		}
		switch j.Type {
		case InnerJoin, SemiJoin, LeftJoin, AntiJoin:
		default:
			return
		}
		lw, rw := width(j.Left), width(j.Right)
		lk, rk, _ := splitEquiKeys(j.Cond, lw, rw)
		if len(lk) == 0 {
			return
		}
		if (j.Type == SemiJoin || j.Type == AntiJoin) && outerPrunesSubquery(j) {
			// The outer side is the few rows: its keys prune the
			// subquery's scans, which are then read for those keys only
			// (through the equi keys of inner joins too, so both sides
			// of a self-join shrink).
			ps := Estimate(j.Left)
			if d.collect(j, j.Right, rk, dppHow{onProbe: true, viaKeys: true, widestKey: true, keeps: ps.Rows / ps.Base}, shared) {
				return
			}
		}
		if j.Type == AntiJoin {
			// Pruning the probe side of an anti join would drop the rows
			// it keeps.
			return
		}
		factOnLeft := true
		if (j.Type == InnerJoin && probeIsRight(j)) || j.Type == LeftJoin {
			// A left join can prune only its optional (right) side: a
			// right row no preserved row matches is never output.
			factOnLeft = false
		}
		fact, dim, keys := j.Left, j.Right, lk
		if !factOnLeft {
			fact, dim, keys = j.Right, j.Left, rk
		}
		ds := Estimate(dim)
		if ds.Rows/ds.Base > dppMaxBuildFraction {
			if j.Type == LeftJoin {
				lefts = append(lefts, j)
			}
			return
		}
		d.collect(j, fact, keys, dppHow{factOnLeft: factOnLeft, onProbe: j.Type == LeftJoin, keeps: ds.Rows / ds.Base}, shared)
	}
	walk(root)
	// A preserved side that is not selective by itself may be pruned by
	// a join above (q5: web_returns LEFT JOIN web_sales in a UNION ALL
	// branch that a date range prunes to 355 of 72k returns): those
	// collectors are only known now, as the walk visits joins bottom up.
	for _, j := range lefts {
		d.collectPrunedPreserved(j, shared)
	}
	return d
}

// collectPrunedPreserved gives left join j a collector on its preserved
// (probe) side when a scan there waits for a selective collector of a
// join above j, so the preserved side is small at run time, and the
// optional side is far larger (the preserved side, so pruned, has at most
// outerMaxFraction of its rows): the optional side's scans then read the
// rows of the preserved side's keys only. The collector above has its
// dimension side apart from j's subtree, so its stage runs first and no
// stage waits for itself.
func (d *dppPlan) collectPrunedPreserved(j *Join, shared func(Plan) bool) {
	// Only collectors of joins above j count: the estimate of the
	// preserved side holds the joins inside it already.
	inside := map[*Join]bool{}
	var scans []*Scan
	walkUnshared(j.Left, shared, func(p Plan) {
		switch n := p.(type) {
		case *Join:
			inside[n] = true
		case *Scan:
			scans = append(scans, n)
		}
	})
	keeps := 1.0
	for _, s := range scans {
		for _, t := range d.scans[s] {
			if !inside[t.join] {
				keeps = min(keeps, t.keeps)
			}
		}
	}
	if keeps > dppMaxBuildFraction {
		return
	}
	ls, rs := Estimate(j.Left), Estimate(j.Right)
	if ls.Rows*keeps > rs.Rows*outerMaxFraction {
		return
	}
	_, rk, _ := splitEquiKeys(j.Cond, width(j.Left), width(j.Right))
	d.collect(j, j.Right, rk, dppHow{onProbe: true, widestKey: true, keeps: ls.Rows * keeps / ls.Base}, shared)
}

// walkUnshared visits p's nodes down to, and not into, shared nodes.
func walkUnshared(p Plan, shared func(Plan) bool, visit func(Plan)) {
	if shared(p) {
		return
	}
	visit(p)
	for _, c := range p.Children() {
		walkUnshared(c, shared, visit)
	}
}

// dppHow is how a join collects: whether its fact side is its left input,
// whether the collector sits on its probe side, whether the key is traced
// through inner joins' equi keys too, which key it tries first, and the fraction of its rows the
// collecting side keeps (what its targets expect to read).
type dppHow struct {
	factOnLeft, onProbe, viaKeys bool
	// widestKey tries the keys in order of the fact side's distinct
	// values (most first) instead of the join's order.
	widestKey bool
	keeps     float64
}

// collect gives join j a collector on its key keys[i] (the first key
// that traces to big enough fact scans) and makes those scans its
// targets; it reports whether it did.
func (d *dppPlan) collect(j *Join, fact Plan, keys []expr.Expr, how dppHow, shared func(Plan) bool) bool {
	order := make([]int, len(keys))
	for i := range order {
		order[i] = i
	}
	if how.widestKey {
		// The key of most distinct values on the fact side prunes most:
		// q5's returns meet web_sales on item and order number, and 355
		// order numbers keep 1/60 of the rows 339 items keep.
		distinct := make([]int64, len(keys))
		for i, k := range keys {
			if c, ok := k.(*expr.Column); ok {
				distinct[i], _ = columnDistinct(fact, c.Index)
			}
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(distinct[b], distinct[a]) })
	}
	for _, ki := range order {
		k := keys[ki]
		col, isCol := k.(*expr.Column)
		if !isCol {
			continue
		}
		if !pruning.SupportedKeyType(col.Type) {
			continue
		}
		var facts []scanColumn
		for _, sc := range traceScans(fact, col.Index, shared, how.viaKeys, nil) {
			if sc.scan.Table.NumRows() >= dppMinFactRows && !slices.Contains(facts, sc) {
				facts = append(facts, sc)
			}
		}
		if len(facts) == 0 {
			continue
		}
		d.nextID++
		c := &exec.DynamicFilterDataCollector{ID: d.nextID}
		d.collectors[j] = &dppCollector{node: c, keyIdx: ki, factOnL: how.factOnLeft, onProbe: how.onProbe}
		for _, sc := range facts {
			d.scans[sc.scan] = append(d.scans[sc.scan], dppTarget{collector: c, join: j, column: sc.column, keeps: how.keeps})
		}
		return true
	}
	return false
}

// outerMaxFraction is how much of the subquery side's estimated rows the
// outer (probe) side of a semi or anti join may have for its keys to
// prune the subquery side: the outer side must be the few rows. q16, q94
// and q95 probe a few hundred orders against the whole sales table (or a
// self-join of it, 13.3M rows in q95), which the join otherwise builds
// in full.
const outerMaxFraction = 1.0 / 8

// outerPrunesSubquery reports whether semi or anti join j should prune
// its subquery (build) side by the keys of its outer (probe) side: the
// outer side is filtered and far smaller than the subquery side. A build
// row whose key no probe row has matches nothing, so dropping it changes
// neither join's answer (NULL keys never match either). NOT IN and mark
// joins are not semi or anti joins here: their NULL rules read the whole
// build side (whether it is empty, whether it holds a NULL).
func outerPrunesSubquery(j *Join) bool {
	ps, bs := Estimate(j.Left), Estimate(j.Right)
	return ps.Rows/ps.Base <= dppMaxBuildFraction && ps.Rows <= bs.Rows*outerMaxFraction
}

// probeIsRight reports whether the physical planner will probe with the
// right input of inner join j (it builds on the left, buildOnLeft).
func probeIsRight(j *Join) bool {
	return buildOnLeft(j, Estimate(j.Left), Estimate(j.Right))
}

// scanColumn is a column of a scan's table.
type scanColumn struct {
	scan   *Scan
	column int // index into the scan's table schema
}

// traceToScans follows output column col of p down to the scan columns it
// is a copy of, through operators where pruning rows by that column's
// value cannot change what survives above, and appends them to out. A
// UNION ALL passes each branch's rows through unchanged, so its column is
// traced into every branch (q5, q77 and q80 join a date range with a union
// of the three sales channels), and a branch where the trail ends (a
// computed column) is simply read whole. The trail ends at a node shared
// by several parents (shared reports them).
func traceToScans(p Plan, col int, shared func(Plan) bool, out []scanColumn) []scanColumn {
	return traceScans(p, col, shared, false, nil)
}

// traceScans is traceToScans that, with viaKeys, also follows a column
// that is an equi key of an inner join to the other side's key: the
// join's rows have equal values in both, so pruning either side by the
// value keeps the same joined rows, and pruning both reads less.
func traceScans(p Plan, col int, shared func(Plan) bool, viaKeys bool, out []scanColumn) []scanColumn {
	if shared(p) {
		return out
	}
	switch n := p.(type) {
	case *Scan:
		return append(out, scanColumn{n, n.Columns[col]})
	case *Filter:
		return traceScans(n.Child, col, shared, viaKeys, out)
	case *Project:
		if c, ok := n.Exprs[col].(*expr.Column); ok {
			return traceScans(n.Child, c.Index, shared, viaKeys, out)
		}
	case *Join:
		lw := width(n.Left)
		if n.Type == InnerJoin && viaKeys {
			if other, ok := joinKeyPartner(n, col, lw); ok {
				if other < lw {
					out = traceScans(n.Left, other, shared, viaKeys, out)
				} else {
					out = traceScans(n.Right, other-lw, shared, viaKeys, out)
				}
			}
		}
		if col < lw {
			return traceScans(n.Left, col, shared, viaKeys, out)
		}
		if n.Type == InnerJoin {
			return traceScans(n.Right, col-lw, shared, viaKeys, out)
		}
	case *Aggregate:
		if !n.Rollup && col < len(n.GroupBy) {
			if c, ok := n.GroupBy[col].(*expr.Column); ok {
				return traceScans(n.Child, c.Index, shared, viaKeys, out)
			}
		}
	case *Union:
		for _, in := range n.Inputs {
			out = traceScans(in, col, shared, viaKeys, out)
		}
	}
	return out
}

// joinKeyPartner is the column (of the join's input row: left columns,
// then right) that inner join j equates with its column col by a plain
// = of two columns of one type; ok is false when col is no such key.
func joinKeyPartner(j *Join, col, lw int) (int, bool) {
	for _, c := range expr.SplitAnd(j.Cond) {
		call, ok := c.(*expr.Call)
		if !ok || call.Fn != "=" || len(call.Args) != 2 {
			continue
		}
		a, aok := call.Args[0].(*expr.Column)
		b, bok := call.Args[1].(*expr.Column)
		if !aok || !bok || !arrow.TypeEqual(a.Type, b.Type) || (a.Index < lw) == (b.Index < lw) {
			continue
		}
		switch col {
		case a.Index:
			return b.Index, true
		case b.Index:
			return a.Index, true
		}
	}
	return 0, false
}

// wrapScan wraps a physical scan for DPP when the plan chose it as a
// fact scan: the scan gets its targets and an OrderEnforce above it.
func (d *dppPlan) wrapScan(n *Scan, s *exec.Scan) exec.Node {
	if d == nil {
		return s
	}
	ts := d.scans[n]
	if len(ts) == 0 {
		return s
	}
	var targets []pruning.Target
	oe := &exec.OrderEnforce{Child: s}
	for _, t := range ts {
		targets = append(targets, pruning.Target{CollectorID: t.collector.ID, Column: t.column, Name: n.Table.Schema.Field(t.column).Name})
		oe.After = append(oe.After, t.collector.ID)
	}
	s.DynamicFilters = targets
	return oe
}

// wrapBuild puts the join's collector on top of its build side.
func (d *dppPlan) wrapBuild(j *Join, build exec.Node, buildKeys []expr.Expr, swapped bool) (exec.Node, error) {
	if d == nil {
		return build, nil
	}
	c, ok := d.collectors[j]
	if !ok || c.onProbe {
		return build, nil
	}
	// The fact side must be the probe side: the left input unless the
	// physical planner swapped the inputs.
	if c.factOnL == swapped {
		return nil, fmt.Errorf("%w: dynamic filter %d planned on the probe side of a join whose fact side became the build side", exec.ErrInternal, c.node.ID)
	}
	c.node.Child = build
	c.node.Keys = []expr.Expr{buildKeys[c.keyIdx]}
	return c.node, nil
}

// wrapProbe puts the join's collector on top of its probe side when the
// selective side is the probe side; it reports whether it did, in which
// case the join must hash-exchange both sides (the probe side's stage has
// to finish before the fact scan's stage, which a broadcast join would
// turn into a cycle).
func (d *dppPlan) wrapProbe(j *Join, probe exec.Node, probeKeys []expr.Expr) (exec.Node, bool) {
	if d == nil {
		return probe, false
	}
	c, ok := d.collectors[j]
	if !ok || !c.onProbe {
		return probe, false
	}
	c.node.Child = probe
	c.node.Keys = []expr.Expr{probeKeys[c.keyIdx]}
	return c.node, true
}
