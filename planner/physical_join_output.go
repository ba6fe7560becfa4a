package planner

import (
	"slices"

	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/exec/expr"
)

// project builds Project(exprs) over child. When child is a hash join that
// can narrow its output (it emits pairs and has no residual), possibly
// under the plain-column projection the join planner adds to restore the
// column order of a swapped join, the join emits only the columns exprs
// read (HashJoin.Output) and the projection reads them at their new
// positions: a join no longer gathers keys and filter columns nobody above
// it reads.
func project(child exec.Node, exprs []expr.Expr, names []string) exec.Node {
	if inner, ok := child.(*exec.Project); ok && plainColumns(inner.Exprs) {
		if hj, ok := inner.Child.(*exec.HashJoin); ok && canNarrow(hj) {
			composed := make([]expr.Expr, len(exprs))
			for i, e := range exprs {
				composed[i] = remap(e, func(j int) int { return inner.Exprs[j].(*expr.Column).Index })
			}
			exprs, child = composed, hj
		} else {
			return &exec.Project{Child: child, Exprs: exprs, Names: names}
		}
	}
	hj, ok := child.(*exec.HashJoin)
	if !ok || !canNarrow(hj) {
		return &exec.Project{Child: child, Exprs: exprs, Names: names}
	}
	width := hj.Schema().NumFields()
	used := make([]bool, width)
	for _, e := range exprs {
		for _, c := range expr.Columns(e) {
			used[c] = true
		}
	}
	var out []int
	pos := make([]int, width)
	for i, u := range used {
		pos[i] = -1
		if u {
			pos[i] = len(out)
			out = append(out, i)
		}
	}
	if len(out) == 0 || len(out) == width {
		// Nothing to drop, or a projection of constants only (the join
		// still emits one row per pair: keep every column, it is rare).
		return &exec.Project{Child: child, Exprs: exprs, Names: names}
	}
	// A copy: the node built for the join may be referenced elsewhere.
	narrowed := *hj
	narrowed.Output = out
	moved := make([]expr.Expr, len(exprs))
	for i, e := range exprs {
		moved[i] = remap(e, func(j int) int { return pos[j] })
	}
	return &exec.Project{Child: &narrowed, Exprs: moved, Names: names}
}

func canNarrow(hj *exec.HashJoin) bool {
	switch hj.Type {
	case exec.InnerJoin, exec.LeftJoin, exec.RightJoin, exec.FullJoin:
		return hj.Residual == nil && hj.Output == nil
	}
	return false
}

func plainColumns(es []expr.Expr) bool {
	return !slices.ContainsFunc(es, func(e expr.Expr) bool {
		_, ok := e.(*expr.Column)
		return !ok
	})
}
