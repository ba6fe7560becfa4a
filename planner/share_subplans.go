package planner

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/fsql-dev/fsql/exec/expr"
)

// shareSubplans makes identical subtrees one node, so a CTE referenced
// several times (the binder binds its body anew at every reference), or a
// subquery written twice, is planned and computed once. It hash-conses:
// every subtree gets a canonical key built from its node's fields and its
// children's keys, and every copy of a subtree whose key occurs more than
// once is replaced by its first copy. The plan becomes a DAG; the
// physical planner gives a node with several parents one producer stage
// whose output every consumer reads (physical.go, shared).
//
// Only subtrees that do work beyond reading a table are shared (they hold
// a join, an aggregate or a window): re-reading a scan costs about what
// materializing and reading it back does. A subtree is not shared when
// dynamic filters of joins outside it would prune a scan inside every
// copy: each copy gets its own pruning then, which one shared copy could
// not (its consumers' filters differ), and pruning saves more than
// sharing. When a copy is read whole anyway, the others share it
// (worthApart).
//
// It runs last, once, on the final shape, so no rule rewrites a DAG.
type shareSubplans struct{}

func (shareSubplans) Name() string { return "share_subplans" }

func (shareSubplans) Apply(p Plan, ctx *Context) (Plan, bool, error) {
	h := &hashCons{ids: map[Plan]int{}, byKey: map[string]int{}}
	if _, err := h.id(p, ctx); err != nil {
		return nil, false, err
	}
	// Occurrences of each key: distinct nodes (a DAG input counts a node
	// once), in the order first met.
	copies := map[int][]Plan{}
	for n, id := range h.ids {
		copies[id] = append(copies[id], n)
	}
	share := map[int]bool{}
	for id, cs := range copies {
		if len(cs) > 1 && h.keyable[id] && h.works[id] {
			share[id] = true
		}
	}
	if len(share) == 0 {
		return p, false, nil
	}
	if d := planDynamicFilters(p); len(d.scans) > 0 {
		// Subplans no outside filter prunes are computed once whatever
		// is decided for the copies holding them: their work is not
		// the copies' to weigh.
		pruned := map[int]bool{}
		for _, m := range prunedFromOutsideBy(d, allCopies(copies, share)) {
			pruned[h.ids[m]] = true
		}
		once := func(n Plan) bool { id := h.ids[n]; return share[id] && !pruned[id] }
		apart := map[int]bool{}
		for id := range share {
			if pruned[id] && worthApart(d, copies[id], once) {
				apart[id] = true
			}
		}
		for id := range apart {
			delete(share, id)
		}
	}
	if len(share) == 0 {
		return p, false, nil
	}
	r := &rebuild{h: h, share: share, canon: map[int]Plan{}, done: map[Plan]Plan{}}
	out := r.node(p)
	return out, r.changed, nil
}

// hashCons numbers subtrees by structure: equal ids mean equal subtrees.
type hashCons struct {
	ids   map[Plan]int
	byKey map[string]int
	// keyable[id]: every expression of the subtree has a key (columns,
	// literals, calls); works[id]: it holds a join, aggregate or window.
	keyable, works []bool
}

func (h *hashCons) id(p Plan, ctx *Context) (int, error) {
	if id, ok := h.ids[p]; ok {
		return id, nil
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	ch := p.Children()
	kids := make([]int, len(ch))
	keyable, works := true, false
	for i, c := range ch {
		id, err := h.id(c, ctx)
		if err != nil {
			return 0, err
		}
		kids[i] = id
		keyable = keyable && h.keyable[id]
		works = works || h.works[id]
	}
	k := &nodeKey{ok: true}
	k.node(p)
	for _, id := range kids {
		k.sb.WriteString(" #")
		k.sb.WriteString(strconv.Itoa(id))
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
		h.keyable = append(h.keyable, keyable && k.ok)
		h.works = append(h.works, works)
	}
	h.ids[p] = id
	return id, nil
}

// nodeKey writes one node's own fields (not its children). Qualifiers
// (Scan.Alias, Project.Tables) are left out: they only name columns for
// the binder, which is done, so `v1` and `v1 AS v1_lag` share.
type nodeKey struct {
	sb strings.Builder
	ok bool // false once an expression without a key was met
}

func (k *nodeKey) expr(e expr.Expr) {
	switch e.(type) {
	case nil:
		k.sb.WriteString("<nil>")
		return
	case *expr.Column, *expr.Literal, *expr.Call:
	default:
		k.ok = false
	}
	k.sb.WriteByte('{')
	writeKey(&k.sb, e)
	k.sb.WriteByte('}')
}

func (k *nodeKey) exprs(es []expr.Expr) {
	k.sb.WriteByte('[')
	for _, e := range es {
		k.expr(e)
	}
	k.sb.WriteByte(']')
}

func (k *nodeKey) str(s ...any) {
	for _, v := range s {
		k.sb.WriteString(strconv.Quote(fmt.Sprint(v)))
	}
}

func (k *nodeKey) node(p Plan) {
	switch n := p.(type) {
	case *Scan:
		k.sb.WriteString("Scan")
		k.str(fmt.Sprintf("%p", n.Table), n.Columns, n.Pruned, len(n.Partitions))
		for _, part := range n.Partitions {
			k.str(fmt.Sprintf("%p", part))
		}
		k.exprs(n.Filters)
	case *Filter:
		k.sb.WriteString("Filter")
		k.expr(n.Cond)
	case *Project:
		k.sb.WriteString("Project")
		k.exprs(n.Exprs)
		k.str(n.Names)
	case *Join:
		k.sb.WriteString("Join")
		k.str(n.Type)
		k.expr(n.Cond)
	case *MultiJoin:
		k.sb.WriteString("MultiJoin")
		k.exprs(n.Conds)
	case *Aggregate:
		k.sb.WriteString("Aggregate")
		k.exprs(n.GroupBy)
		k.str(n.Names, n.Rollup, n.Local)
		for _, a := range n.Aggs {
			k.str(a.Fn, a.Distinct, a.Type, a.Name)
			k.expr(a.Arg)
		}
	case *Sort:
		k.sb.WriteString("Sort")
		k.sortKeys(n.Keys)
	case *Limit:
		k.sb.WriteString("Limit")
		k.str(n.N, n.Offset)
	case *Union:
		k.sb.WriteString("Union")
	case *Window:
		k.sb.WriteString("Window")
		k.exprs(n.PartitionBy)
		k.sortKeys(n.OrderBy)
		for _, f := range n.Funcs {
			k.str(f.Fn, f.Type, f.Name, f.N)
			k.expr(f.Arg)
			if f.Default != nil {
				k.expr(f.Default)
			} else {
				k.expr(nil)
			}
		}
		k.str(n.Frame.Unit, n.Frame.Start.Kind, n.Frame.Start.Rows, n.Frame.End.Kind, n.Frame.End.Rows)
		k.expr(n.Frame.Start.Value)
		k.expr(n.Frame.End.Value)
	case *Values:
		k.sb.WriteString("Values")
		for _, c := range n.Cols {
			k.str(c.Name, c.Type)
		}
		for _, row := range n.Rows {
			k.exprs(row)
		}
	case *MaxOneRow:
		k.sb.WriteString("MaxOneRow")
	default:
		// A node kind this key does not know is never shared.
		k.ok = false
		k.str(fmt.Sprintf("%T %p", p, p))
	}
}

func (k *nodeKey) sortKeys(keys []SortKey) {
	for _, s := range keys {
		k.expr(s.Expr)
		k.str(s.Desc, s.NullsFirst)
	}
}

// rebuild replaces every copy of a shared key by the first copy rebuilt.
type rebuild struct {
	h       *hashCons
	share   map[int]bool
	canon   map[int]Plan
	done    map[Plan]Plan
	changed bool
}

func (r *rebuild) node(p Plan) Plan {
	if out, ok := r.done[p]; ok {
		return out
	}
	id := r.h.ids[p]
	if r.share[id] {
		if c, ok := r.canon[id]; ok {
			r.changed = true
			r.done[p] = c
			return c
		}
	}
	ch := p.Children()
	var nc []Plan
	for i, c := range ch {
		n := r.node(c)
		if n != c && nc == nil {
			nc = append([]Plan{}, ch...)
		}
		if nc != nil {
			nc[i] = n
		}
	}
	out := p
	if nc != nil {
		out = withChildren(p, nc)
	}
	if r.share[id] {
		r.canon[id] = out
	}
	r.done[p] = out
	return out
}

// prunedFromOutside returns the members whose scans a dynamic filter of
// a join outside the member would prune (as planDynamicFilters would plan
// it on p).
func prunedFromOutside(p Plan, members []Plan) []Plan {
	return prunedFromOutsideBy(planDynamicFilters(p), members)
}

// prunedFromOutsideBy is prunedFromOutside with the dynamic pruning d
// planned on p already.
func prunedFromOutsideBy(d *dppPlan, members []Plan) []Plan {
	if len(d.scans) == 0 {
		return nil
	}
	var out []Plan
	for _, m := range members {
		scans, joins := map[*Scan]bool{}, map[*Join]bool{}
		walkPlan(m, func(n Plan) {
			switch x := n.(type) {
			case *Scan:
				scans[x] = true
			case *Join:
				joins[x] = true
			}
		})
	targets:
		for s := range scans {
			for _, t := range d.scans[s] {
				if !joins[t.join] {
					out = append(out, m)
					break targets
				}
			}
		}
	}
	return out
}

// walkPlan visits every node of p once (a shared node once).
func walkPlan(p Plan, visit func(Plan)) {
	seen := map[Plan]bool{}
	var walk func(Plan)
	walk = func(n Plan) {
		if seen[n] {
			return
		}
		seen[n] = true
		visit(n)
		for _, c := range n.Children() {
			walk(c)
		}
	}
	walk(p)
}

// allCopies lists the copies of the shared keys.
func allCopies(copies map[int][]Plan, share map[int]bool) []Plan {
	var out []Plan
	for id := range share {
		out = append(out, copies[id]...)
	}
	return out
}
