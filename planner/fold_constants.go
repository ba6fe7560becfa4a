package planner

import (
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/exec/expr"
)

// foldConstants evaluates constant sub-expressions of filters once, and
// removes filters that are always true. (The binder folds every expression
// as it binds it; this rule folds what other rules produce by
// substitution, e.g. predicates pushed through projections.)
type foldConstants struct{}

func (foldConstants) Name() string { return "fold_constants" }

func (r foldConstants) Apply(p Plan, ctx *Context) (Plan, bool, error) {
	return bottomUp(p, ctx, r, foldFilter)
}

func foldFilter(p Plan) (Plan, bool, error) {
	f, ok := p.(*Filter)
	if !ok {
		return p, false, nil
	}
	cond, err := expr.ConstantFold(f.Cond, memory.DefaultAllocator)
	if err != nil {
		return nil, false, err
	}
	if l, ok := cond.(*expr.Literal); ok && l.Value == true {
		return f.Child, true, nil
	}
	if exprKey(cond) != exprKey(f.Cond) {
		return &Filter{Child: f.Child, Cond: cond}, true, nil
	}
	return p, false, nil
}
