package planner

import (
	"github.com/fsql-dev/fsql/exec/expr"
)

// mergeProjections folds a projection into the projection below it: the
// outer expressions are rewritten over the inner one's input. Binding,
// join ordering (which restores the bound column order) and column
// pruning each add projections, so a plan could stack three that only
// reorder or drop columns (q6: Project [ca_state] three times), each a
// node the executor walks per batch. An inner expression the outer one
// reads twice is kept where it is: substituting it would compute it
// twice.
type mergeProjections struct{}

func (mergeProjections) Name() string { return "merge_projections" }

func (r mergeProjections) Apply(p Plan, ctx *Context) (Plan, bool, error) {
	return bottomUp(p, ctx, r, func(p Plan) (Plan, bool, error) {
		outer, ok := p.(*Project)
		if !ok {
			return p, false, nil
		}
		changed := false
		for {
			inner, ok := outer.Child.(*Project)
			if !ok || !mergeable(outer, inner) {
				return outer, changed, nil
			}
			merged := &Project{Child: inner.Child, Names: outer.Names, Tables: outer.Tables}
			for _, e := range outer.Exprs {
				m, err := substitute(e, inner.Exprs)
				if err != nil {
					return nil, false, err
				}
				merged.Exprs = append(merged.Exprs, m)
			}
			outer, changed = merged, true
		}
	})
}

// mergeable: every inner expression other than a column or a literal is
// read at most once by the outer projection.
func mergeable(outer, inner *Project) bool {
	uses := make([]int, len(inner.Exprs))
	for _, e := range outer.Exprs {
		expr.Walk(e, func(x expr.Expr) bool {
			if c, ok := x.(*expr.Column); ok {
				uses[c.Index]++
			}
			return true
		})
	}
	for i, e := range inner.Exprs {
		switch e.(type) {
		case *expr.Column, *expr.Literal:
			continue
		}
		if uses[i] > 1 {
			return false
		}
	}
	return true
}
