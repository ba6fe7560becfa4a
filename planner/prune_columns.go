package planner

import (
	"github.com/fsql-dev/fsql/exec/expr"
)

// pruneColumns drops columns no ancestor reads, so scans read only the
// Parquet columns the query needs and joins and shuffles carry no dead
// weight.
type pruneColumns struct{}

func (pruneColumns) Name() string { return "prune_columns" }

func (pruneColumns) Apply(p Plan, ctx *Context) (Plan, bool, error) {
	req := make([]bool, width(p))
	for i := range req {
		req[i] = true
	}
	pr := &pruner{ctx: ctx}
	np, m := pr.prune(p, req)
	if pr.err != nil {
		return nil, false, pr.err
	}
	// The root keeps every column, in order.
	for i, to := range m {
		if to != i {
			s := np.Schema()
			proj := &Project{Child: np}
			for j := range m {
				proj.Exprs = append(proj.Exprs, expr.NewColumn(m[j], s[m[j]].Type, s[m[j]].Name))
				proj.Names = append(proj.Names, s[m[j]].Name)
			}
			np = proj
			break
		}
	}
	return np, !samePlan(p, np), nil
}

func need(req []bool, es ...expr.Expr) {
	for _, e := range es {
		if e == nil {
			continue
		}
		for _, c := range expr.Columns(e) {
			req[c] = true
		}
	}
}

// narrow drops the output columns of a pruned plan p (m maps each old
// column to its new index, -1 when dropped) that req does not ask for:
// a join's keys, a filter's condition columns. Joins emit and broadcasts
// carry every column of their inputs, so a column read only below a join
// costs a copy per joined row unless a projection drops it there; the
// projection itself copies nothing, and over a hash join it narrows what
// the join gathers (planner/physical_join_output.go).
func narrow(p Plan, m []int) func(req []bool) (Plan, []int) {
	return func(req []bool) (Plan, []int) {
		w := width(p)
		keep := make([]bool, w)
		kept := 0
		for i, to := range m {
			if to >= 0 && i < len(req) && req[i] && !keep[to] {
				keep[to] = true
				kept++
			}
		}
		if kept == w || kept == 0 {
			return p, m
		}
		s := p.Schema()
		proj := &Project{Child: p}
		pos := make([]int, w)
		for j := 0; j < w; j++ {
			pos[j] = -1
			if keep[j] {
				pos[j] = len(proj.Exprs)
				proj.Exprs = append(proj.Exprs, expr.NewColumn(j, s[j].Type, s[j].Name))
				proj.Names = append(proj.Names, s[j].Name)
				proj.Tables = append(proj.Tables, s[j].Table)
			}
		}
		nm := make([]int, len(m))
		for i, to := range m {
			nm[i] = -1
			if to >= 0 && i < len(req) && req[i] {
				nm[i] = pos[to]
			}
		}
		return proj, nm
	}
}

func identity(n int) []int {
	m := make([]int, n)
	for i := range m {
		m[i] = i
	}
	return m
}

// prune rebuilds p keeping at least the required output columns. It
// returns the new plan and, for each old output column, its new index
// (-1 when dropped).
// pruner carries the query's context down the walk; once it is done the
// walk stops rebuilding and Apply returns the context's error.
type pruner struct {
	ctx *Context
	err error
}

func (pr *pruner) prune(p Plan, req []bool) (Plan, []int) {
	if pr.err == nil {
		pr.err = pr.ctx.Err()
	}
	if pr.err != nil {
		return p, identity(len(req))
	}
	switch n := p.(type) {
	case *Scan:
		r := append([]bool{}, req...)
		need(r, n.Filters...)
		m := make([]int, len(n.Columns))
		var cols []int
		for i, c := range n.Columns {
			m[i] = -1
			if r[i] {
				m[i] = len(cols)
				cols = append(cols, c)
			}
		}
		if len(cols) == 0 && len(n.Columns) > 0 {
			// count(*): read the cheapest column for the row count.
			best := 0
			for i := range n.Columns {
				if rowBytes(Schema{n.Schema()[i]}) < rowBytes(Schema{n.Schema()[best]}) {
					best = i
				}
			}
			m[best] = 0
			cols = []int{n.Columns[best]}
		}
		c := *n
		c.Columns = cols
		c.Filters = nil
		for _, f := range n.Filters {
			c.Filters = append(c.Filters, remap(f, func(i int) int { return m[i] }))
		}
		return &c, m
	case *Filter:
		r := append([]bool{}, req...)
		need(r, n.Cond)
		child, m := pr.prune(n.Child, r)
		return &Filter{Child: child, Cond: remap(n.Cond, func(i int) int { return m[i] })}, m
	case *Project:
		r := make([]bool, width(n.Child))
		m := make([]int, len(n.Exprs))
		out := &Project{}
		for i, e := range n.Exprs {
			m[i] = -1
			if req[i] {
				m[i] = len(out.Exprs)
				out.Exprs = append(out.Exprs, e)
				out.Names = append(out.Names, n.Names[i])
				if i < len(n.Tables) {
					out.Tables = append(out.Tables, n.Tables[i])
				}
				need(r, e)
			}
		}
		if len(out.Exprs) == 0 && len(n.Exprs) > 0 {
			// Keep one column so the row count survives.
			m[0] = 0
			out.Exprs, out.Names = n.Exprs[:1], n.Names[:1]
			need(r, n.Exprs[0])
		}
		child, cm := pr.prune(n.Child, r)
		for i, e := range out.Exprs {
			out.Exprs[i] = remap(e, func(j int) int { return cm[j] })
		}
		out.Child = child
		return out, m
	case *Join:
		lw := width(n.Left)
		rw := width(n.Right)
		all := make([]bool, lw+rw)
		copy(all, req[:min(len(req), lw)])
		if n.Type == InnerJoin || n.Type == LeftJoin {
			copy(all, req)
		}
		need(all, n.Cond)
		l, lm := narrow(pr.prune(n.Left, all[:lw]))(all[:lw])
		r, rm := narrow(pr.prune(n.Right, all[lw:]))(all[lw:])
		nlw := width(l)
		jm := func(i int) int {
			if i < lw {
				return lm[i]
			}
			if rm[i-lw] < 0 {
				return -1
			}
			return nlw + rm[i-lw]
		}
		out := &Join{Type: n.Type, Left: l, Right: r}
		if n.Cond != nil {
			out.Cond = remap(n.Cond, jm)
		}
		m := make([]int, len(req))
		for i := range m {
			m[i] = jm(i)
		}
		if n.Type == MarkJoin {
			m[lw] = nlw
		}
		if n.Type == MarkJoin {
			return out, m
		}
		return narrow(out, m)(req)
	case *Aggregate:
		r := make([]bool, width(n.Child))
		need(r, n.GroupBy...)
		for _, a := range n.Aggs {
			need(r, a.Arg)
		}
		child, cm := pr.prune(n.Child, r)
		out := &Aggregate{Child: child, Names: n.Names, Rollup: n.Rollup, Local: n.Local}
		f := func(j int) int { return cm[j] }
		for _, g := range n.GroupBy {
			out.GroupBy = append(out.GroupBy, remap(g, f))
		}
		for _, a := range n.Aggs {
			if a.Arg != nil {
				a.Arg = remap(a.Arg, f)
			}
			out.Aggs = append(out.Aggs, a)
		}
		return out, identity(len(req))
	case *Sort:
		r := append([]bool{}, req...)
		for _, k := range n.Keys {
			need(r, k.Expr)
		}
		child, m := pr.prune(n.Child, r)
		out := &Sort{Child: child}
		for _, k := range n.Keys {
			k.Expr = remap(k.Expr, func(j int) int { return m[j] })
			out.Keys = append(out.Keys, k)
		}
		return out, m
	case *Limit:
		child, m := pr.prune(n.Child, req)
		return &Limit{Child: child, N: n.N, Offset: n.Offset}, m
	case *MaxOneRow:
		child, m := pr.prune(n.Child, req)
		return &MaxOneRow{Child: child}, m
	case *Window:
		cw := width(n.Child)
		r := append([]bool{}, req[:cw]...)
		need(r, n.PartitionBy...)
		for _, k := range n.OrderBy {
			need(r, k.Expr)
		}
		for _, f := range n.Funcs {
			need(r, f.Arg)
		}
		child, cm := pr.prune(n.Child, r)
		f := func(j int) int { return cm[j] }
		out := &Window{Child: child, Frame: n.Frame}
		for _, e := range n.PartitionBy {
			out.PartitionBy = append(out.PartitionBy, remap(e, f))
		}
		for _, k := range n.OrderBy {
			k.Expr = remap(k.Expr, f)
			out.OrderBy = append(out.OrderBy, k)
		}
		for _, fn := range n.Funcs {
			if fn.Arg != nil {
				fn.Arg = remap(fn.Arg, f)
			}
			out.Funcs = append(out.Funcs, fn)
		}
		ncw := width(child)
		m := make([]int, len(req))
		copy(m, cm)
		for i := cw; i < len(req); i++ {
			m[i] = ncw + i - cw
		}
		return out, m
	case *Union:
		// Every branch must keep the same columns in the same order.
		out := &Union{}
		keep := []int{}
		for i, r := range req {
			if r {
				keep = append(keep, i)
			}
		}
		if len(keep) == 0 {
			keep = []int{0}
		}
		for _, in := range n.Inputs {
			r := make([]bool, len(req))
			for _, k := range keep {
				r[k] = true
			}
			ni, im := pr.prune(in, r)
			s := ni.Schema()
			proj := &Project{Child: ni}
			for _, k := range keep {
				proj.Exprs = append(proj.Exprs, expr.NewColumn(im[k], s[im[k]].Type, s[im[k]].Name))
				proj.Names = append(proj.Names, s[im[k]].Name)
			}
			out.Inputs = append(out.Inputs, proj)
		}
		m := make([]int, len(req))
		for i := range m {
			m[i] = -1
		}
		for j, k := range keep {
			m[k] = j
		}
		return out, m
	case *MultiJoin:
		// Ordered away before pruning runs; keep everything.
		return n, identity(len(req))
	}
	return p, identity(len(req))
}
