package planner

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fsql-dev/fsql/exec/expr"
)

// shareFiltered computes once the copies of a subplan that differ only in
// the filters pushed into them, when the estimates say that reads and
// computes less than computing each copy. The binder binds a CTE anew at
// every reference, and pushdown then carries each reference's own WHERE
// conjuncts into its copy: TPC-DS q4 reads year_total six times, for each
// sale type in 2001 and in 2002, and after pushdown each copy scans its
// channel's sales with its own `d_year = ...` on date_dim, so no two
// copies are identical and share_subplans shares nothing.
//
// Copies match when they are equal with every scan's filters and every
// filter node's condition left out (the shape). At each filter position
// the conjuncts all copies hold stay there; the others (a copy's residue)
// become one disjunction, one term per copy (an IN list when every term
// is `column = literal` on one column), or nothing when some copy has no
// residue there. Each copy is then replaced by its residue lifted to the
// output of the shared node, as a filter above it: σ(f_i) over the shared
// node computed under f_1 ∨ ... ∨ f_k is copy i exactly when f_i commutes
// with every operator between its position and the top, which lifting
// checks — through filters and sorts, projections that pass its columns
// through, either input of an inner join and the preserved input of other
// joins, group keys of an aggregate without ROLLUP, partition keys of a
// window, and a UNION ALL when every branch lifts to the same filter;
// never through LIMIT or a scalar subquery's guard. So the answer cannot
// change. Errors must not change either: residues may not fail (only
// comparisons, IN, IS NULL and boolean connectives over columns and
// literals), and no path from the top holds two positions with residues,
// nor a join with residues below both inputs, so every row any operator
// of the shared node sees is a row some copy saw (no copy's filter meets
// another copy's rows except through residues, which cannot fail).
//
// Only copies whose rows come out of an aggregate (under projections and
// filters) are merged: the shared output is kept until its last consumer
// read it, and q11's store sales joined with two years of dates (1.1M
// rows) took about twice as long shared as computed twice. Then the
// decision compares estimated work: per operator its output rows
// (Estimate), per scan also the rows it reads, after static pruning and
// after dynamic pruning on a partition column (a fact scan waiting for a
// dimension keeps that dimension's estimated fraction of its partitions).
// Separate copies cost the sum of their work; the shared node costs its
// own work — at each operator the smaller of its estimate under the
// disjunction and the copies' rows summed, which is what a union of the
// copies' rows can be at most — plus its output rows once per consumer.
// Copies a dynamic filter of a join outside them would prune are never
// shared, as in share_subplans: sharing loses that pruning (one
// computation serves consumers whose filters differ), and in q4, q11 and
// q74, whose references prune each other's customers by customer_id, the
// copies pruned apart ran in about half the time of one shared copy on
// both layouts, which these estimates (the customer scan is small) do
// not see; so those copies stay apart (q4's two web copies, which no
// such filter prunes, are shared). Dynamic filters of joins
// inside the copies stay (under the disjunction's dimension in the shared
// node) and count on both sides.
// On the partitioned layout two copies pruned to 2001 and 2002 each read
// a sixth of the sales' partitions, the shared node a third, and the
// saving is the repeated joins and aggregation (q64's cross_sales, q75's
// all_sales).
//
// It runs in the last phase, before share_subplans, and makes the plan a
// DAG: the shared node has one parent per consumer's filter.
type shareFiltered struct{}

func (shareFiltered) Name() string { return "share_filtered" }

func (shareFiltered) Apply(p Plan, ctx *Context) (Plan, bool, error) {
	s := &shapeCons{ids: map[Plan]int{}, byKey: map[string]int{}}
	exact := &hashCons{ids: map[Plan]int{}, byKey: map[string]int{}}
	if _, err := s.id(p, ctx); err != nil {
		return nil, false, err
	}
	if _, err := exact.id(p, ctx); err != nil {
		return nil, false, err
	}
	// Copies of each shape in preorder, so the first copy is the same
	// whatever order maps iterate in.
	groups := map[int][]Plan{}
	var order []int
	size := map[Plan]int{}
	walkPlan(p, func(n Plan) {
		id := s.ids[n]
		if _, ok := groups[id]; !ok {
			order = append(order, id)
		}
		groups[id] = append(groups[id], n)
	})
	var cands []int
	for _, id := range order {
		cs := groups[id]
		if len(cs) < 2 || !s.keyable[id] || !s.works[id] {
			continue
		}
		differ := false
		for _, c := range cs[1:] {
			differ = differ || exact.ids[c] != exact.ids[cs[0]]
		}
		if differ {
			cands = append(cands, id)
		}
	}
	if len(cands) == 0 {
		return p, false, nil
	}
	var count func(Plan) int
	count = func(n Plan) int {
		if k, ok := size[n]; ok {
			return k
		}
		k := 1
		for _, c := range n.Children() {
			k += count(c)
		}
		size[n] = k
		return k
	}
	// The largest copies first: sharing a CTE whole beats sharing a part
	// of it, and a part of a shared copy is not looked at again.
	sort.SliceStable(cands, func(i, j int) bool { return count(groups[cands[i]][0]) > count(groups[cands[j]][0]) })
	all := planDynamicFilters(p)
	consumed := map[Plan]bool{}
	replace := map[Plan]Plan{}
	for _, id := range cands {
		if err := ctx.Err(); err != nil {
			return nil, false, err
		}
		cs := groups[id]
		if !aggregated(cs[0]) {
			// The shared output is kept for every consumer: a join's
			// output (q11's store sales for two years, 1.1M rows) cost
			// more to keep and read back than computing it twice did.
			continue
		}
		if len(prunedFromOutside(p, cs)) > 0 {
			// As share_subplans: a dynamic filter from outside a copy
			// (q4's references prune each other's customers by
			// customer_id) saves more than computing the copies once
			// did, measured on both layouts.
			continue
		}
		taken := false
		for _, c := range cs {
			taken = taken || consumed[c]
		}
		if taken {
			continue
		}
		m := &merger{exact: exact}
		shared, lifted, ok := m.merge(cs)
		if !ok || shared == nil || (anyResidue(lifted) && !m.crossed) {
			// A filter that differs above all the work leaves the work
			// below it identical: share_subplans shares that.
			continue
		}
		if sep, sh := m.cost(cs, shared, all); sh >= sep {
			continue
		}
		for i, c := range cs {
			replace[c] = wrapFilter(shared, lifted[i])
			walkPlan(c, func(n Plan) { consumed[n] = true })
		}
	}
	if len(replace) == 0 {
		return p, false, nil
	}
	done := map[Plan]Plan{}
	var rebuild func(Plan) Plan
	rebuild = func(n Plan) Plan {
		if out, ok := done[n]; ok {
			return out
		}
		if r, ok := replace[n]; ok {
			done[n] = r
			return r
		}
		ch := n.Children()
		var nc []Plan
		for i, c := range ch {
			r := rebuild(c)
			if r != c && nc == nil {
				nc = append([]Plan{}, ch...)
			}
			if nc != nil {
				nc[i] = r
			}
		}
		out := n
		if nc != nil {
			out = withChildren(n, nc)
		}
		done[n] = out
		return out
	}
	return rebuild(p), true, nil
}

// shapeCons numbers subtrees by shape: the structure and expressions of
// hashCons with scan filters, the partitions they select and filter
// conditions left out.
type shapeCons struct {
	ids            map[Plan]int
	byKey          map[string]int
	keyable, works []bool
}

func (h *shapeCons) id(p Plan, ctx *Context) (int, error) {
	if id, ok := h.ids[p]; ok {
		return id, nil
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	k := &nodeKey{ok: true}
	switch n := p.(type) {
	case *Scan:
		k.sb.WriteString("Scan")
		k.str(fmt.Sprintf("%p", n.Table), n.Columns)
	case *Filter:
		k.sb.WriteString("Filter")
	default:
		k.node(p)
	}
	keyable, works := k.ok, false
	for _, c := range p.Children() {
		id, err := h.id(c, ctx)
		if err != nil {
			return 0, err
		}
		k.sb.WriteString(" #")
		k.sb.WriteString(strconv.Itoa(id))
		keyable = keyable && h.keyable[id]
		works = works || h.works[id]
	}
	switch p.(type) {
	case *Join, *MultiJoin, *Aggregate, *Window:
		works = true
	}
	key := k.sb.String()
	id, ok := h.byKey[key]
	if !ok {
		id = len(h.keyable)
		h.byKey[key] = id
		h.keyable = append(h.keyable, keyable)
		h.works = append(h.works, works)
	}
	h.ids[p] = id
	return id, nil
}

// merger builds the shared node of one group of copies and records, per
// filter position, the copies' nodes and the shared one for the costs.
type merger struct {
	exact *hashCons
	// positions: the copies' nodes and the shared node at each operator
	// (shared nil where a filter dissolved).
	positions []position
	// crossed: a residue was lifted through a join, aggregate or window.
	crossed bool
}

type position struct {
	copies []Plan
	shared Plan
}

// merge returns the shared node for the copies ns (one position of the
// group), each copy's residue lifted to the position's output, and false
// when the copies cannot share (a residue that may fail or does not
// lift, residues on two inputs of a join or twice on one path).
func (m *merger) merge(ns []Plan) (Plan, [][]expr.Expr, bool) {
	lifted := make([][]expr.Expr, len(ns))
	same := true
	for _, n := range ns[1:] {
		same = same && m.exact.ids[n] == m.exact.ids[ns[0]]
	}
	if same {
		// Nothing differs below: the first copy is the shared node.
		m.recordSame(ns)
		return ns[0], lifted, true
	}
	first := ns[0]
	switch n := first.(type) {
	case *Scan:
		conj := make([][]expr.Expr, len(ns))
		for i, c := range ns {
			conj[i] = c.(*Scan).Filters
		}
		keep, res, ok := splitResidues(conj)
		if !ok {
			return nil, nil, false
		}
		c := *n
		c.Filters, c.Partitions, c.Pruned = keep, nil, false
		out, _, err := pruneScan(&c)
		if err != nil {
			return nil, nil, false
		}
		m.record(ns, out)
		return out, res, true
	case *Filter:
		conj := make([][]expr.Expr, len(ns))
		kids := make([]Plan, len(ns))
		for i, c := range ns {
			conj[i] = expr.SplitAnd(c.(*Filter).Cond)
			kids[i] = c.(*Filter).Child
		}
		keep, res, ok := splitResidues(conj)
		if !ok {
			return nil, nil, false
		}
		child, below, ok := m.merge(kids)
		if !ok {
			return nil, nil, false
		}
		if anyResidue(res) && anyResidue(below) {
			return nil, nil, false // two positions on one path
		}
		if !anyResidue(res) {
			res = below
		}
		var out Plan = child
		if len(keep) > 0 {
			out = &Filter{Child: child, Cond: joinAnd(keep)}
			m.record(ns, out)
		} else {
			m.record(ns, nil)
		}
		return out, res, true
	}
	ch := first.Children()
	merged := make([]Plan, len(ch))
	lifts := make([][][]expr.Expr, len(ch)) // per child, its residues lifted (nil: none)
	changed, with := false, 0
	for ci := range ch {
		kids := make([]Plan, len(ns))
		for i, c := range ns {
			kids[i] = c.Children()[ci]
		}
		mc, res, ok := m.merge(kids)
		if !ok {
			return nil, nil, false
		}
		merged[ci] = mc
		changed = changed || mc != ch[ci]
		if !anyResidue(res) {
			continue
		}
		if lifts[ci], ok = liftThrough(first, ci, res); !ok {
			return nil, nil, false
		}
		switch first.(type) {
		case *Join, *MultiJoin, *Aggregate, *Window:
			m.crossed = true
		}
		with++
	}
	switch _, union := first.(*Union); {
	case union && with > 0:
		// Every branch must lift to the same filter: σ(f) over the union
		// is the union of σ(f) over each branch.
		for ci := range ch {
			if lifts[ci] == nil || !sameResidues(lifts[0], lifts[ci]) {
				return nil, nil, false
			}
		}
		lifted = lifts[0]
	case with > 1:
		return nil, nil, false // residues below two inputs of a join
	case with == 1:
		for _, l := range lifts {
			if l != nil {
				lifted = l
			}
		}
	}
	out := first
	if changed {
		out = withChildren(first, merged)
	}
	m.record(ns, out)
	return out, lifted, true
}

func (m *merger) record(ns []Plan, shared Plan) {
	m.positions = append(m.positions, position{copies: ns, shared: shared})
}

// recordSame records the positions of identical copies, every one of
// them, so their scans and joins count in the costs.
func (m *merger) recordSame(ns []Plan) {
	m.record(ns, ns[0])
	for ci := range ns[0].Children() {
		kids := make([]Plan, len(ns))
		for i, c := range ns {
			kids[i] = c.Children()[ci]
		}
		m.recordSame(kids)
	}
}

func anyResidue(res [][]expr.Expr) bool {
	for _, r := range res {
		if len(r) > 0 {
			return true
		}
	}
	return false
}

func sameResidues(a, b [][]expr.Expr) bool {
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
		keys := map[string]bool{}
		for _, e := range a[i] {
			keys[exprKey(e)] = true
		}
		for _, e := range b[i] {
			if !keys[exprKey(e)] {
				return false
			}
		}
	}
	return true
}

// splitResidues splits the conjuncts of one filter position of k copies
// into those every copy holds, which stay, plus the disjunction of the
// rest (when every copy has a rest), and each copy's rest. ok is false
// when a rest could fail or reads no column (a constant conjunct commutes
// with nothing).
func splitResidues(conj [][]expr.Expr) (keep []expr.Expr, res [][]expr.Expr, ok bool) {
	count := map[string]int{}
	for _, cs := range conj {
		seen := map[string]bool{}
		for _, c := range cs {
			if k := exprKey(c); !seen[k] {
				seen[k] = true
				count[k]++
			}
		}
	}
	res = make([][]expr.Expr, len(conj))
	seen := map[string]bool{}
	every := true
	for i, cs := range conj {
		mine := map[string]bool{}
		for _, c := range cs {
			k := exprKey(c)
			if count[k] == len(conj) {
				if !seen[k] {
					seen[k] = true
					keep = append(keep, c)
				}
				continue
			}
			if mine[k] {
				continue
			}
			mine[k] = true
			if !safeResidue(c) || len(expr.Columns(c)) == 0 {
				return nil, nil, false
			}
			res[i] = append(res[i], c)
		}
		every = every && len(res[i]) > 0
	}
	if anyResidue(res) && every {
		or, err := disjunction(res)
		if err != nil {
			return nil, nil, false
		}
		if !seen[exprKey(or)] { // q74 also writes both years inside the CTE
			keep = append(keep, or)
		}
	}
	return keep, res, true
}

// safeResidue reports whether e cannot fail for any row: comparisons, IN,
// IS NULL and boolean connectives over columns and literals. A residue
// meets the other copies' rows (in the disjunction and in the filters
// above the shared node), which its own copy never evaluated it on.
func safeResidue(e expr.Expr) bool {
	switch x := e.(type) {
	case *expr.Column, *expr.Literal:
		return true
	case *expr.Call:
		switch x.Fn {
		case "=", "<>", "<", "<=", ">", ">=", "<=>", "and", "or", "not", "isnull", "isnotnull", "in":
		default:
			return false
		}
		for _, a := range x.Args {
			if !safeResidue(a) {
				return false
			}
		}
		return true
	}
	return false
}

// disjunction ORs each copy's rest (a conjunction), once per distinct
// rest; rests that are all `column = literal` on one column of an exact
// type become one IN list, which static pruning and the estimates read
// better.
func disjunction(res [][]expr.Expr) (expr.Expr, error) {
	var terms []expr.Expr
	seen := map[string]bool{}
	for _, r := range res {
		t := joinAnd(r)
		if k := exprKey(t); !seen[k] {
			seen[k] = true
			terms = append(terms, t)
		}
	}
	if len(terms) == 1 {
		return terms[0], nil
	}
	if in := inList(terms); in != nil {
		return in, nil
	}
	return Balanced("or", terms)
}

func inList(terms []expr.Expr) expr.Expr {
	var col *expr.Column
	var lits []expr.Expr
	for _, t := range terms {
		c, l := columnEqualsLit(t)
		if c == nil || (col != nil && (c.Index != col.Index || !arrow.TypeEqual(l.DataType(), lits[0].DataType()))) {
			return nil
		}
		col = c
		lits = append(lits, l)
	}
	switch col.Type.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.DATE32, arrow.STRING:
	default:
		return nil
	}
	if !arrow.TypeEqual(col.Type, lits[0].DataType()) {
		return nil
	}
	in, err := expr.NewCall("in", append([]expr.Expr{col}, lits...)...)
	if err != nil {
		return nil
	}
	return in
}

// columnEqualsLit matches `column = literal` (either order) with a
// non-NULL literal.
func columnEqualsLit(e expr.Expr) (*expr.Column, *expr.Literal) {
	c, ok := e.(*expr.Call)
	if !ok || c.Fn != "=" || len(c.Args) != 2 {
		return nil, nil
	}
	a, b := c.Args[0], c.Args[1]
	if _, isLit := a.(*expr.Literal); isLit {
		a, b = b, a
	}
	col, ok1 := a.(*expr.Column)
	lit, ok2 := b.(*expr.Literal)
	if !ok1 || !ok2 || lit.Value == nil {
		return nil, nil
	}
	return col, lit
}

// liftThrough rewrites the residues of child ci of n (over the child's
// output) over n's output, or reports false where a filter on them does
// not commute with n.
func liftThrough(n Plan, ci int, res [][]expr.Expr) ([][]expr.Expr, bool) {
	var m func(int) int
	switch x := n.(type) {
	case *Sort, *Filter:
		m = func(c int) int { return c }
	case *Project:
		m = func(c int) int {
			for j, e := range x.Exprs {
				if col, ok := e.(*expr.Column); ok && col.Index == c {
					return j
				}
			}
			return -1
		}
	case *Join:
		switch {
		case ci == 0:
			m = func(c int) int { return c }
		case x.Type == InnerJoin:
			lw := width(x.Left)
			m = func(c int) int { return c + lw }
		default:
			return nil, false // a filter on the optional or tested side
		}
	case *MultiJoin:
		off := 0
		for _, in := range x.Inputs[:ci] {
			off += width(in)
		}
		m = func(c int) int { return c + off }
	case *Aggregate:
		if x.Rollup {
			return nil, false
		}
		m = func(c int) int {
			for g, e := range x.GroupBy {
				if col, ok := e.(*expr.Column); ok && col.Index == c {
					return g
				}
			}
			return -1
		}
	case *Window:
		m = func(c int) int {
			for _, e := range x.PartitionBy {
				if col, ok := e.(*expr.Column); ok && col.Index == c {
					return c
				}
			}
			return -1
		}
	case *Union:
		m = func(c int) int { return c }
	default:
		return nil, false // LIMIT, MaxOneRow and kinds not known here
	}
	out := make([][]expr.Expr, len(res))
	for i, r := range res {
		for _, e := range r {
			for _, c := range expr.Columns(e) {
				if m(c) < 0 {
					return nil, false
				}
			}
			out[i] = append(out[i], remap(e, m))
		}
	}
	return out, true
}

// cost estimates the work of computing the copies cs separately and of
// computing shared once for all of them (see the type's comment); all is
// the dynamic pruning planned on the whole plan.
func (m *merger) cost(cs []Plan, shared Plan, all *dppPlan) (separate, sharedCost float64) {
	copyJoins := make([]map[*Join]bool, len(cs))
	for i, c := range cs {
		copyJoins[i] = joinsOf(c)
	}
	// Pruning by joins inside the shared node stays (under the
	// disjunction's dimension); pruning from outside is lost.
	within := planDynamicFilters(shared)
	for _, pos := range m.positions {
		var sepRows, sepRead, sepInside float64
		for ci, n := range pos.copies {
			sepRows += rowsOf(n).Rows
			if s, ok := n.(*Scan); ok {
				in := readRows(s, all.scans[s], copyJoins[ci])
				sepInside += in
				sepRead += in
			}
		}
		separate += sepRows + sepRead
		if pos.shared == nil {
			continue
		}
		sharedCost += min(rowsOf(pos.shared).Rows, sepRows)
		if s, ok := pos.shared.(*Scan); ok {
			sharedCost += min(readRows(s, within.scans[s], nil), sepInside)
		}
	}
	// Each consumer reads the shared output and filters it.
	sharedCost += float64(len(cs)) * rowsOf(shared).Rows
	return separate, sharedCost
}

// readRows is the rows scan s reads: its partitions' rows, times the
// fraction each dynamic filter on a partition column keeps (a filter on
// another column prunes row groups at best), counting only the filters
// of the joins in only when in is not nil.
func readRows(s *Scan, targets []dppTarget, in map[*Join]bool) float64 {
	rows := partitionRows(s)
	for _, t := range targets {
		if t.column < s.Table.NumFileColumns || (in != nil && !in[t.join]) {
			continue
		}
		rows *= t.keeps
	}
	return rows
}

// aggregated reports whether p's rows come out of an aggregate (under
// projections and filters): the shapes whose output is small.
func aggregated(p Plan) bool {
	for {
		switch n := p.(type) {
		case *Aggregate:
			return !n.Local // a pre-aggregation need not shrink
		case *Project:
			p = n.Child
		case *Filter:
			p = n.Child
		default:
			return false
		}
	}
}

func joinsOf(root Plan) map[*Join]bool {
	out := map[*Join]bool{}
	walkPlan(root, func(n Plan) {
		if j, ok := n.(*Join); ok {
			out[j] = true
		}
	})
	return out
}

func partitionRows(s *Scan) float64 {
	if s.Partitions == nil {
		return float64(s.Table.NumRows())
	}
	var rows float64
	for _, part := range s.Partitions {
		for _, f := range part.Files {
			rows += float64(f.NumRows)
		}
	}
	return rows
}
