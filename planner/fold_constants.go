package planner

import (
	"github.com/apache/arrow-go/v18/arrow"
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
	if s, ok := p.(*Scan); ok {
		return foldScanFilters(s)
	}
	f, ok := p.(*Filter)
	if !ok {
		return p, false, nil
	}
	cond, err := FoldConstants(f.Cond, memory.DefaultAllocator)
	if err != nil {
		return nil, false, err
	}
	if l, ok := cond.(*expr.Literal); ok && l.Value == true {
		return f.Child, true, nil
	}
	if rest, ok := dropTrueConjuncts(cond); ok {
		if rest == nil {
			return f.Child, true, nil
		}
		return &Filter{Child: f.Child, Cond: rest}, true, nil
	}
	// FoldConstants returns its input itself when nothing folds.
	if cond != f.Cond {
		return &Filter{Child: f.Child, Cond: cond}, true, nil
	}
	return p, false, nil
}

// dropTrueConjuncts returns cond without its constant TRUE conjuncts
// (nil when none is left) and true, or false when it has none to drop.
// Folding evaluates column-free subtrees but keeps `TRUE AND x` whole
// when x reads a column (q4: a pushed predicate that met a constant
// column of one UNION ALL branch). Only boolean conjuncts are kept alone:
// `TRUE AND n` of a number n is a boolean, n itself is not.
func dropTrueConjuncts(cond expr.Expr) (expr.Expr, bool) {
	if c, ok := cond.(*expr.Call); !ok || c.Fn != "and" {
		return nil, false
	}
	conj := expr.SplitAnd(cond)
	keep := make([]expr.Expr, 0, len(conj))
	for _, c := range conj {
		if l, ok := c.(*expr.Literal); ok && l.Value == true {
			continue
		}
		if c.DataType().ID() != arrow.BOOL {
			return nil, false
		}
		keep = append(keep, c)
	}
	if len(keep) == len(conj) {
		return nil, false
	}
	return joinAnd(keep), true
}

// foldScanFilters folds the conjuncts pushed into a scan: a predicate
// pushed through a projection of constants ('s' = 'r' in a UNION ALL
// branch) becomes constant only there. TRUE conjuncts are dropped; FALSE
// ones stay for fold_empty to act on.
func foldScanFilters(s *Scan) (Plan, bool, error) {
	var out []expr.Expr
	changed := false
	for i, f := range s.Filters {
		g, err := FoldConstants(f, memory.DefaultAllocator)
		if err != nil {
			return nil, false, err
		}
		rest, dropped := dropTrueConjuncts(g)
		if g == f && !dropped && !changed {
			continue
		}
		if !changed {
			out = append(out, s.Filters[:i]...)
			changed = true
		}
		if dropped {
			g = rest
		}
		if l, ok := g.(*expr.Literal); g == nil || ok && l.Value == true {
			continue
		}
		out = append(out, g)
	}
	if !changed {
		return s, false, nil
	}
	c := *s
	c.Filters = out
	return &c, true, nil
}

// FoldConstants is expr.ConstantFold in one pass: it replaces every
// subtree without a column reference by the literal it evaluates to and
// rebuilds the calls above a folded subtree. expr.ConstantFold asks every
// level whether its subtree holds a column, which costs the depth at each
// level; here each node is visited once. It returns e itself when nothing
// folds.
func FoldConstants(e expr.Expr, alloc memory.Allocator) (expr.Expr, error) {
	out, cols, err := fold(e, alloc)
	if err != nil || cols {
		return out, err
	}
	return expr.ConstantFold(e, alloc) // column-free as a whole
}

// fold returns e with its column-free arguments folded, and whether e
// references a column. A column-free e comes back as it is, for the
// caller to evaluate whole (once, at the largest column-free subtree).
func fold(e expr.Expr, alloc memory.Allocator) (expr.Expr, bool, error) {
	switch x := e.(type) {
	case *expr.Column:
		return e, true, nil
	case *expr.Call:
		args := make([]expr.Expr, len(x.Args))
		hasCols := make([]bool, len(x.Args))
		cols := false
		for i, a := range x.Args {
			na, c, err := fold(a, alloc)
			if err != nil {
				return nil, false, err
			}
			args[i], hasCols[i], cols = na, c, cols || c
		}
		if !cols {
			return e, false, nil
		}
		changed := false
		for i, a := range args {
			if !hasCols[i] {
				f, err := expr.ConstantFold(a, alloc)
				if err != nil {
					return nil, false, err
				}
				args[i] = f
			}
			changed = changed || args[i] != x.Args[i]
		}
		if !changed {
			return e, true, nil
		}
		var n expr.Expr
		var err error
		if x.Fn == "cast" {
			n, err = expr.NewCast(args[0], x.Type)
		} else {
			n, err = expr.NewCall(x.Fn, args...)
		}
		return n, true, err
	}
	// Literals, and leaves of other kinds, which ConstantFold treats as
	// column-free too.
	return e, false, nil
}
