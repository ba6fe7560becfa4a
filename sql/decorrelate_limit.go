package sql

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/planner"
)

// limit flattens LIMIT (over an optional ORDER BY): per D value, keep the
// rows numbered (offset, offset+n] by row_number() over (PARTITION BY D
// ORDER BY the sort keys).
func (f *flattener) limit(n *planner.Limit) (flat, error) {
	child := n.Child
	var keys []planner.SortKey
	if s, ok := child.(*planner.Sort); ok {
		child, keys = s.Child, s.Keys
	}
	c, err := f.flatten(child)
	if err != nil {
		return flat{}, err
	}
	order, err := f.sortKeys(keys, c.width)
	if err != nil {
		return flat{}, err
	}
	k := f.corr.k()
	win := &planner.Window{
		Child:       c.plan,
		PartitionBy: f.domainCols(c.width),
		OrderBy:     order,
		Funcs:       []planner.WindowCall{{Fn: "row_number", Type: arrow.PrimitiveTypes.Int64, Name: "__row_number"}},
		Frame:       exec.FrameDefault,
	}
	rn := expr.NewColumn(c.width+k, arrow.PrimitiveTypes.Int64, "__row_number")
	var conds []expr.Expr
	if n.Offset > 0 {
		gt, err := f.b.call(">", rn, expr.NewLiteral(n.Offset, arrow.PrimitiveTypes.Int64))
		if err != nil {
			return flat{}, err
		}
		conds = append(conds, gt)
	}
	if n.N >= 0 {
		le, err := f.b.call("<=", rn, expr.NewLiteral(n.Offset+n.N, arrow.PrimitiveTypes.Int64))
		if err != nil {
			return flat{}, err
		}
		conds = append(conds, le)
	}
	var p planner.Plan = win
	if len(conds) > 0 {
		p = &planner.Filter{Child: win, Cond: planner.JoinAnd(conds)}
	}
	s := win.Schema()
	exprs, names := passthrough(s, 0, c.width+k)
	return flat{plan: &planner.Project{Child: p, Exprs: exprs, Names: names}, width: c.width, nullable: c.nullable}, nil
}

// window flattens a window: partitions are split by D as well.
func (f *flattener) window(n *planner.Window) (flat, error) {
	c, err := f.flatten(n.Child)
	if err != nil {
		return flat{}, err
	}
	k := f.corr.k()
	w := &planner.Window{Child: c.plan, Frame: n.Frame}
	for _, e := range n.PartitionBy {
		r, err := f.rewrite(e, c.width)
		if err != nil {
			return flat{}, err
		}
		w.PartitionBy = append(w.PartitionBy, r)
	}
	w.PartitionBy = append(w.PartitionBy, f.domainCols(c.width)...)
	if w.OrderBy, err = f.sortKeys(n.OrderBy, c.width); err != nil {
		return flat{}, err
	}
	for _, fn := range n.Funcs {
		if fn.Arg, err = f.rewrite(fn.Arg, c.width); err != nil {
			return flat{}, err
		}
		w.Funcs = append(w.Funcs, fn)
	}
	// Output: child, D, functions; restore child, functions, D.
	s := w.Schema()
	exprs, names := passthrough(s, 0, c.width)
	e2, n2 := passthrough(s, c.width+k, len(n.Funcs))
	return flat{plan: f.project(w, append(exprs, e2...), append(names, n2...), c.width), width: c.width + len(n.Funcs), nullable: c.nullable}, nil
}
