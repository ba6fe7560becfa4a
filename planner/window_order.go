package planner

import (
	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/exec/expr"
)

// orderWindows merges and orders stacked windows so they share their
// shuffles and sorts. The binder stacks one Window per window function,
// in the order of the SELECT list, and each Window shuffles its input by
// its partition keys and sorts it: q51's two running maxima over the same
// window shuffled and sorted 550k rows twice, and q47's average over
// (category, brand, store, company, year) ran below its rank over
// (category, brand, store, company) ordered by (year, month), so the rank
// shuffled and sorted again what the average had just sorted.
//
// Over a run of stacked windows that read only the columns below the run
// (none reads another's result):
//   - windows with the same partition keys and order keys become one
//     Window computing all their functions, when their frames are equal
//     or one side's functions ignore the frame (ranking, LAG/LEAD);
//   - the merged windows are ordered so that as many as possible find
//     their input in their own order (windowServes): there the physical
//     planner neither shuffles nor sorts (physical_window.go);
//   - a projection on top restores the column order the query was bound
//     with.
//
// Windows above the first one that reads a window result stay as they
// are, over the projection.
// (The file is window_order.go: a name ending in _windows.go would build
// only on Windows.)
type orderWindows struct{}

func (orderWindows) Name() string { return "order_windows" }

// maxWindowOrder bounds the windows of a run whose orders are searched
// (every permutation): larger runs are only merged.
const maxWindowOrder = 6

func (r orderWindows) Apply(p Plan, ctx *Context) (Plan, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	if w, ok := p.(*Window); ok {
		return r.chain(w, ctx)
	}
	return applyToChildren(p, ctx, r)
}

// chain rewrites the stack of windows whose top is top.
func (r orderWindows) chain(top *Window, ctx *Context) (Plan, bool, error) {
	var stack []*Window // top first
	var below Plan = top
	for {
		w, ok := below.(*Window)
		if !ok {
			break
		}
		stack = append(stack, w)
		below = w.Child
	}
	child, changed, err := r.Apply(below, ctx)
	if err != nil {
		return nil, false, err
	}
	cw := width(child)
	// The run: the lowest windows, up to the first that reads a result of
	// another window of the stack.
	n := len(stack)
	run := 0
	for run < n && readsOnlyBelow(stack[n-1-run], cw) {
		run++
	}
	ws := make([]*Window, run) // bottom first
	for i := range ws {
		ws[i] = stack[n-1-i]
	}
	groups := mergeWindows(ws)
	order := windowOrder(groups)
	identity := len(groups) == len(ws)
	for i, g := range order {
		identity = identity && g == i
	}
	var out Plan = child
	if identity {
		for _, w := range ws {
			out = withChildren(w, []Plan{out})
		}
	} else {
		changed = true
		// Where each window function of the run lands after reordering.
		pos := make([][]int, len(ws))
		at := cw
		for _, g := range order {
			w := &Window{Child: out, PartitionBy: groups[g].partitionBy, OrderBy: groups[g].orderBy, Frame: groups[g].frame}
			for _, m := range groups[g].members {
				for range ws[m].Funcs {
					pos[m] = append(pos[m], at)
					at++
				}
				w.Funcs = append(w.Funcs, ws[m].Funcs...)
			}
			out = w
		}
		s := out.Schema()
		proj := &Project{Child: out}
		add := func(c int) {
			proj.Exprs = append(proj.Exprs, expr.NewColumn(c, s[c].Type, s[c].Name))
			proj.Names = append(proj.Names, s[c].Name)
			proj.Tables = append(proj.Tables, s[c].Table)
		}
		for c := 0; c < cw; c++ {
			add(c)
		}
		for m := range ws {
			for _, c := range pos[m] {
				add(c)
			}
		}
		out = proj
	}
	for i := n - 1 - run; i >= 0; i-- {
		out = withChildren(stack[i], []Plan{out})
	}
	return out, changed, nil
}

// readsOnlyBelow reports whether every expression of w reads columns of
// the first cw only (none of the stack's window results).
func readsOnlyBelow(w *Window, cw int) bool {
	es := append([]expr.Expr{}, w.PartitionBy...)
	for _, k := range w.OrderBy {
		es = append(es, k.Expr)
	}
	for _, f := range w.Funcs {
		if f.Arg != nil {
			es = append(es, f.Arg)
		}
	}
	for _, e := range es {
		for _, c := range expr.Columns(e) {
			if c >= cw {
				return false
			}
		}
	}
	return true
}

// windowGroup is windows of one partitioning and order merged into one.
type windowGroup struct {
	partitionBy []expr.Expr
	orderBy     []SortKey
	frame       exec.WindowFrame
	framed      bool  // some function reads the frame
	members     []int // the merged windows, bottom first
}

// mergeWindows groups the windows ws (bottom first) by their partition
// and order keys, in the order each group's first window comes.
func mergeWindows(ws []*Window) []windowGroup {
	var groups []windowGroup
	for i, w := range ws {
		framed := false
		for _, f := range w.Funcs {
			framed = framed || exec.WindowFuncReadsFrame(f.Fn)
		}
		joined := false
		for g := range groups {
			gr := &groups[g]
			if !sameExprs(gr.partitionBy, w.PartitionBy) || !sameSortKeys(gr.orderBy, w.OrderBy) {
				continue
			}
			switch {
			case !framed:
			case !gr.framed:
				gr.frame, gr.framed = w.Frame, true
			case !sameFrame(gr.frame, w.Frame):
				continue
			}
			gr.members = append(gr.members, i)
			joined = true
			break
		}
		if !joined {
			groups = append(groups, windowGroup{partitionBy: w.PartitionBy, orderBy: w.OrderBy, frame: w.Frame, framed: framed, members: []int{i}})
		}
	}
	return groups
}

func sameSortKeys(a, b []SortKey) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Desc != b[i].Desc || a[i].NullsFirst != b[i].NullsFirst || !sameExpr(a[i].Expr, b[i].Expr) {
			return false
		}
	}
	return true
}

// sameFrame compares frames, bound expressions by their keys.
func sameFrame(a, b exec.WindowFrame) bool {
	bound := func(x, y exec.FrameBound) bool {
		if x.Kind != y.Kind || x.Rows != y.Rows || (x.Value == nil) != (y.Value == nil) {
			return false
		}
		return x.Value == nil || sameExpr(x.Value, y.Value)
	}
	if a == (exec.WindowFrame{}) {
		a = exec.FrameDefault
	}
	if b == (exec.WindowFrame{}) {
		b = exec.FrameDefault
	}
	return a.Unit == b.Unit && bound(a.Start, b.Start) && bound(a.End, b.End)
}

// windowOrder returns the order (bottom first) in which the groups are
// stacked: the one, among every permutation, in which the most groups
// find their input in their order, the earliest such in the written
// order. Runs past maxWindowOrder keep the written order.
func windowOrder(groups []windowGroup) []int {
	n := len(groups)
	best := make([]int, n)
	for i := range best {
		best[i] = i
	}
	if n < 2 || n > maxWindowOrder {
		return best
	}
	score := func(order []int) int {
		s := 0
		for i := 1; i < len(order); i++ {
			a, b := groups[order[i-1]], groups[order[i]]
			if windowServes(a.partitionBy, a.orderBy, b.partitionBy, b.orderBy) {
				s++
			}
		}
		return s
	}
	bestScore := score(best)
	perm := append([]int{}, best...)
	used := make([]bool, n)
	cur := perm[:0]
	var walk func()
	walk = func() {
		if len(cur) == n {
			if s := score(cur); s > bestScore {
				bestScore = s
				copy(best, cur)
			}
			return
		}
		for i := 0; i < n; i++ {
			if !used[i] {
				used[i] = true
				cur = append(cur, i)
				walk()
				cur = cur[:len(cur)-1]
				used[i] = false
			}
		}
	}
	walk()
	return best
}

// windowServes reports whether the output of a window partitioned by pa
// and ordered by oa is already in the order a window partitioned by pb
// and ordered by ob needs, and distributed as it needs. A window's output
// (sorted by it, or presorted below it) is grouped by the set pa and
// ordered by oa within a group, spread over tasks by a hash of pa, or in
// one task when pa is empty. So b is served when pb is pa plus the first
// t keys of oa (as sets), and ob is oa's next keys: rows equal on pb are
// then adjacent, ordered by ob, and in one task (pa is part of pb).
func windowServes(pa []expr.Expr, oa []SortKey, pb []expr.Expr, ob []SortKey) bool {
	keysA := map[string]bool{}
	for _, e := range pa {
		keysA[exprKey(e)] = true
	}
	keysB := map[string]bool{}
	for _, e := range pb {
		keysB[exprKey(e)] = true
	}
	for k := range keysA {
		if !keysB[k] {
			return false // a partition of b spans groups of a, maybe tasks
		}
	}
	got := copyKeys(keysA)
	for t := 0; ; t++ {
		if len(got) == len(keysB) {
			// pb covered by pa and oa[:t]: ob must follow in oa.
			if len(oa) < t+len(ob) {
				return false
			}
			return sameSortKeys(oa[t:t+len(ob)], ob)
		}
		if t >= len(oa) {
			return false
		}
		k := exprKey(oa[t].Expr)
		if !keysB[k] {
			return false
		}
		got[k] = true
	}
}

func copyKeys(m map[string]bool) map[string]bool {
	out := make(map[string]bool, len(m)+1)
	for k := range m {
		out[k] = true
	}
	return out
}
