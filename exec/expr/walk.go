package expr

import (
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Walk visits e and its descendants in pre-order; when fn returns false
// the children of that node are skipped.
func Walk(e Expr, fn func(Expr) bool) {
	if e == nil || !fn(e) {
		return
	}
	for _, c := range e.Children() {
		Walk(c, fn)
	}
}

// Rewrite rebuilds e bottom-up: every node's children are rewritten
// first, the node is rebuilt from them (Calls through NewCall, so types
// and implicit casts are derived again) and then handed to fn, whose result
// replaces it.
func Rewrite(e Expr, fn func(Expr) (Expr, error)) (Expr, error) {
	return rewrite(e, fn, true)
}

func rewrite(e Expr, fn func(Expr) (Expr, error), root bool) (Expr, error) {
	// An implicit cast below the root is dropped: the parent's NewCall
	// inserts whatever cast the rewritten argument needs.
	if x, ok := isImplicitCast(e); ok && !root {
		return rewrite(x, fn, false)
	}
	if c, ok := e.(*Call); ok {
		args := make([]Expr, len(c.Args))
		changed := false
		for i, a := range c.Args {
			na, err := rewrite(a, fn, false)
			if err != nil {
				return nil, err
			}
			args[i] = na
			changed = changed || na != a
		}
		if changed {
			ne, err := Rebuild(c, args)
			if err != nil {
				return nil, err
			}
			e = ne
		}
	}
	return fn(e)
}

// Rebuild binds c's function again over new arguments (a cast keeps its
// target type).
func Rebuild(c *Call, args []Expr) (Expr, error) {
	if c.Fn == "cast" {
		return NewCast(args[0], c.Type)
	}
	return NewCall(c.Fn, args...)
}

// Columns returns the distinct column indexes e references, in order of
// first appearance.
func Columns(e Expr) []int {
	var out []int
	Walk(e, func(x Expr) bool {
		if c, ok := x.(*Column); ok && !slices.Contains(out, c.Index) {
			out = append(out, c.Index)
		}
		return true
	})
	return out
}

// SplitAnd flattens a conjunction into its terms (nil for nil).
func SplitAnd(e Expr) []Expr {
	if e == nil {
		return nil
	}
	if c, ok := e.(*Call); ok && c.Fn == "and" {
		var out []Expr
		for _, a := range c.Args {
			out = append(out, SplitAnd(a)...)
		}
		return out
	}
	return []Expr{e}
}

// JoinAnd is the conjunction of es: nil for none, the term itself for one.
func JoinAnd(es []Expr) Expr {
	if len(es) == 0 {
		return nil
	}
	out := es[0]
	for _, e := range es[1:] {
		c, err := NewCall("and", out, e)
		if err != nil {
			// Only non-Boolean terms fail; keep them joined structurally so
			// the error surfaces when the planner type-checks the filter.
			c = &Call{Fn: "and", Args: []Expr{out, e}, Type: tBool}
		}
		out = c
	}
	return out
}

// ConstantFold replaces every subtree without a column reference by the
// literal it evaluates to; the other Calls are rebuilt over their folded
// children. Folding is lazy: a subtree whose evaluation fails (CAST('abc'
// AS SIGNED), an overflow) is left as it is, so the error is raised at run
// time for the rows that reach it and a CASE branch no row takes never
// fails the query.
func ConstantFold(e Expr, alloc memory.Allocator) (Expr, error) {
	c, ok := e.(*Call)
	if !ok {
		return e, nil
	}
	if len(Columns(c)) == 0 {
		if lit, err := evalConstant(c, alloc); err == nil {
			return lit, nil
		}
	}
	args := make([]Expr, len(c.Args))
	changed := false
	for i, a := range c.Args {
		na, err := ConstantFold(a, alloc)
		if err != nil {
			return nil, err
		}
		args[i] = na
		changed = changed || na != a
	}
	if !changed {
		return e, nil
	}
	return Rebuild(c, args)
}

func evalConstant(c *Call, alloc memory.Allocator) (Expr, error) {
	if alloc == nil {
		alloc = memory.DefaultAllocator
	}
	batch := array.NewRecordBatch(arrow.NewSchema(nil, nil), nil, 1)
	defer batch.Release()
	a, err := c.Eval(&Context{Alloc: alloc}, batch)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	return NewLiteral(ScalarFromArray(a, 0), c.Type), nil
}

// constValue evaluates a column-free expression at bind time (nil for
// NULL); false when e has columns or its evaluation fails.
func constValue(e Expr) (any, bool) {
	if l, ok := e.(*Literal); ok {
		return l.Value, true
	}
	if len(Columns(e)) > 0 {
		return nil, false
	}
	batch := array.NewRecordBatch(arrow.NewSchema(nil, nil), nil, 1)
	defer batch.Release()
	a, err := e.Eval(&Context{Alloc: memory.DefaultAllocator}, batch)
	if err != nil {
		return nil, false
	}
	defer a.Release()
	return ScalarFromArray(a, 0), true
}
