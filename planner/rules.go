package planner

import (
	"context"
	"fmt"

	"github.com/fsql-dev/fsql/errs"
)

// Rule is one logical rewrite. Apply returns the rewritten plan and
// whether it changed anything; rules never mutate their input.
type Rule interface {
	Name() string
	Apply(p Plan, ctx *Context) (Plan, bool, error)
}

// Context is what rules may consult.
type Context struct {
	// Disabled names rules to skip (by Name).
	Disabled map[string]bool
	// Ctx, when set, cancels optimization: the driver checks it before
	// every rule and the shared walk at every node.
	Ctx context.Context
}

// Err is the error of the query's context once it is done (nil before,
// and without a context).
func (c *Context) Err() error {
	if c == nil || c.Ctx == nil {
		return nil
	}
	return c.Ctx.Err()
}

// phase is a group of rules run together to a fixed point.
type phase struct {
	rules     []Rule
	maxPasses int
}

// phases is the optimizer's program. Pushdown runs before and after join
// ordering (ordering turns multi-way conditions into join conditions),
// each time with the folding of constants and of empty relations that
// pushdown makes possible (a pushed predicate meeting a constant column);
// pruning columns and partitions runs on the final shape, and sharing
// identical subtrees after everything (no rule rewrites the DAG it makes).
var phases = []phase{
	{rules: []Rule{foldConstants{}, foldEmpty{}, pushDownFilters{}, leftJoinToAnti{}}, maxPasses: 4},
	{rules: []Rule{mergeScalarAggregates{}, filterGroupKeys{}, filterDimensions{}, searchJoins{}, orderJoins{}}, maxPasses: 1},
	{rules: []Rule{pushDownFilters{}, foldConstants{}, foldEmpty{}}, maxPasses: 4},
	{rules: []Rule{pushExpressionsBelowJoin{}, pushDistinctBelowJoin{}, orderWindows{}}, maxPasses: 1},
	{rules: []Rule{pruneColumns{}, mergeProjections{}}, maxPasses: 1},
	{rules: []Rule{prunePartitions{}}, maxPasses: 1},
	{rules: []Rule{shareFiltered{}, shareSubplans{}}, maxPasses: 1},
}

// Optimize runs every enabled rule, phase by phase, each phase until no
// rule changes the plan or its pass bound is reached. The schema of the
// plan's output is checked after every rule.
func Optimize(p Plan, ctx *Context) (Plan, error) {
	if ctx == nil {
		ctx = &Context{}
	}
	for _, ph := range phases {
		for pass := 0; pass < ph.maxPasses; pass++ {
			changed := false
			for _, r := range ph.rules {
				if ctx.Disabled[r.Name()] {
					continue
				}
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				before := p.Schema()
				np, ch, err := r.Apply(p, ctx)
				if err != nil {
					return nil, fmt.Errorf("optimizer rule %s: %w", r.Name(), err)
				}
				if err := sameOutput(before, np.Schema()); err != nil {
					return nil, errs.Wrap(errs.Internal, "optimizer rule %s changed the query's output: %w", r.Name(), err)
				}
				p, changed = np, changed || ch
			}
			if !changed {
				break
			}
		}
	}
	return p, nil
}

func sameOutput(a, b Schema) error {
	if len(a) != len(b) {
		return fmt.Errorf("%d columns became %d", len(a), len(b))
	}
	for i := range a {
		if a[i].Type.ID() != b[i].Type.ID() {
			return fmt.Errorf("column %d (%s) changed type from %s to %s", i, a[i].Name, a[i].Type, b[i].Type)
		}
	}
	return nil
}

// RuleNames lists the optimizer's rules in the order they first run.
func RuleNames() []string {
	seen := map[string]bool{}
	var out []string
	for _, ph := range phases {
		for _, r := range ph.rules {
			if !seen[r.Name()] {
				seen[r.Name()] = true
				out = append(out, r.Name())
			}
		}
	}
	return out
}

// bottomUp applies rule r to p's children first, then at to p itself
// (rebuilt over the new children): the walk the node-local rules share.
func bottomUp(p Plan, ctx *Context, r Rule, at func(Plan) (Plan, bool, error)) (Plan, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	p, changed, err := applyToChildren(p, ctx, r)
	if err != nil {
		return nil, false, err
	}
	np, cc, err := at(p)
	if err != nil {
		return nil, false, err
	}
	return np, changed || cc, nil
}

// applyToChildren applies rule r to each of p's children and returns p,
// rebuilt over the new children when any changed: the recursion step of
// every rule that walks the whole plan.
func applyToChildren(p Plan, ctx *Context, r Rule) (Plan, bool, error) {
	ch := p.Children()
	if len(ch) == 0 {
		return p, false, nil
	}
	changed := false
	newCh := make([]Plan, len(ch))
	for i, c := range ch {
		nc, cc, err := r.Apply(c, ctx)
		if err != nil {
			return nil, false, err
		}
		newCh[i], changed = nc, changed || cc
	}
	if !changed {
		return p, false, nil
	}
	return withChildren(p, newCh), true, nil
}
