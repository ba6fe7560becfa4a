package planner

import (
	"sort"

	"github.com/fsql-dev/fsql/exec/expr"
)

// filterDimensions moves a join that filters one input of a MultiJoin
// onto that input, so join ordering sees the input already filtered.
// Decorrelation leaves a subquery's join above the query's MultiJoin:
// `d_month_seq = (select ...)` (q6) is an inner join of every joined row
// with the one-row subquery, `d_date IN (select ...)` (q58) a semi join;
// run last, they filter the fact table only after it joined every
// dimension row, and dynamic partition pruning, which reads the
// dimension side of the fact's join, sees the whole dimension. Applied to
// the dimension first, the dimension reaches the fact join filtered.
//
// It applies to an inner or semi join whose condition reads, of its left
// side, columns of one MultiJoin input only, that input not being the
// largest (the fact: this is about dimensions), and, for an inner join,
// whose right side is estimated no larger than the input it joins (so it
// filters rather than multiplies it). Inner joins associate and semi
// joins keep or drop rows by the input's columns alone, so the answer is
// the same; a projection restores the column order.
type filterDimensions struct{}

func (filterDimensions) Name() string { return "filter_dimensions" }

func (r filterDimensions) Apply(p Plan, ctx *Context) (Plan, bool, error) {
	return bottomUp(p, ctx, r, func(p Plan) (Plan, bool, error) {
		j, ok := p.(*Join)
		if !ok || (j.Type != InnerJoin && j.Type != SemiJoin) || j.Cond == nil {
			return p, false, nil
		}
		if np := pushOntoInput(j); np != nil {
			return np, true, nil
		}
		if np := pushBelowSemi(j); np != nil {
			return np, true, nil
		}
		return p, false, nil
	})
}

// pushBelowSemi moves j below a semi or anti join on its left side that
// stays above the MultiJoin (its key is the fact's, as q14b's `ss_item_sk
// IN (select ... from cross_items)`), and onto the MultiJoin's input there
// (pushOntoInput); nil when that does not apply. A semi or anti join S
// keeps or drops rows of its left side L by L's columns alone, so
// (L ⋉ S) ⋈ R = (L ⋈ R) ⋉ S and (L ⋉ S) ⋉ R = (L ⋉ R) ⋉ S when j reads
// L's columns only, which are S's output. q14b's `d_week_seq = (select
// ...)` then filters date_dim before it meets store_sales, and dynamic
// pruning reads one week of sales instead of every year.
func pushBelowSemi(j *Join) Plan {
	s, ok := j.Left.(*Join)
	if !ok || (s.Type != SemiJoin && s.Type != AntiJoin) {
		return nil
	}
	below := &Join{Type: j.Type, Left: s.Left, Right: j.Right, Cond: j.Cond}
	moved := pushOntoInput(below)
	if moved == nil {
		// Further semi joins on the way (each keeps its place above).
		if moved = pushBelowSemi(below); moved == nil {
			return nil
		}
	}
	// S's condition reads its left side's columns, then its right side's,
	// which move past the columns j's right side adds.
	lw := width(s.Left)
	grow := width(moved) - lw
	cond := s.Cond
	if cond != nil && grow > 0 {
		cond = remap(cond, func(c int) int {
			if c >= lw {
				return c + grow
			}
			return c
		})
	}
	return &Join{Type: s.Type, Left: moved, Right: s.Right, Cond: cond}
}

// pushOntoInput returns j rewritten with its right side joined onto one
// input of the MultiJoin on its left (directly, or under a projection of
// plain columns), or nil when j does not qualify.
func pushOntoInput(j *Join) Plan {
	var proj *Project
	mj, ok := j.Left.(*MultiJoin)
	if !ok {
		if proj, ok = j.Left.(*Project); !ok {
			return nil
		}
		if mj, ok = proj.Child.(*MultiJoin); !ok {
			return nil
		}
		for _, e := range proj.Exprs {
			if _, isCol := e.(*expr.Column); !isCol {
				return nil
			}
		}
	}
	lw := width(j.Left)
	// toMJ maps a column of j's left side to the MultiJoin's.
	toMJ := func(c int) int {
		if proj != nil {
			return proj.Exprs[c].(*expr.Column).Index
		}
		return c
	}
	n := len(mj.Inputs)
	offsets := make([]int, n+1)
	for i, in := range mj.Inputs {
		offsets[i+1] = offsets[i] + width(in)
	}
	owner := func(col int) int {
		return min(sort.Search(n, func(i int) bool { return col < offsets[i+1] }), n-1)
	}
	k := -1
	for _, c := range expr.Columns(j.Cond) {
		if c >= lw {
			continue
		}
		o := owner(toMJ(c))
		if k >= 0 && o != k {
			return nil
		}
		k = o
	}
	if k < 0 {
		return nil
	}
	input := rowsOf(mj.Inputs[k])
	largest := 0
	for i, in := range mj.Inputs {
		if rowsOf(in).Rows > rowsOf(mj.Inputs[largest]).Rows {
			largest = i
		}
	}
	if largest == k {
		return nil
	}
	if j.Type == InnerJoin && rowsOf(j.Right).Rows > input.Rows {
		return nil
	}
	kw := offsets[k+1] - offsets[k]
	onInput := &Join{Type: j.Type, Left: mj.Inputs[k], Right: j.Right, Cond: remap(j.Cond, func(c int) int {
		if c >= lw {
			return kw + c - lw
		}
		return toMJ(c) - offsets[k]
	})}
	grow := 0 // columns the input gains
	if j.Type == InnerJoin {
		grow = width(j.Right)
	}
	// moved maps a column of the old MultiJoin to the new one's.
	moved := func(c int) int {
		if c >= offsets[k+1] {
			return c + grow
		}
		return c
	}
	inputs := append([]Plan(nil), mj.Inputs...)
	inputs[k] = onInput
	conds := make([]expr.Expr, len(mj.Conds))
	for i, c := range mj.Conds {
		conds[i] = remap(c, moved)
	}
	var out Plan = &MultiJoin{Inputs: inputs, Conds: conds}
	// The columns j output, in its order: its left side's, then (inner)
	// its right side's, now after input k's.
	s := out.Schema()
	keep := &Project{Child: out}
	add := func(at int) {
		keep.Exprs = append(keep.Exprs, expr.NewColumn(at, s[at].Type, s[at].Name))
		keep.Names = append(keep.Names, s[at].Name)
		keep.Tables = append(keep.Tables, s[at].Table)
	}
	for c := 0; c < lw; c++ {
		add(moved(toMJ(c)))
	}
	if j.Type == InnerJoin {
		for c := 0; c < grow; c++ {
			add(offsets[k+1] + c)
		}
	}
	if proj != nil {
		// Keep the names the projection gave.
		for c := 0; c < lw; c++ {
			keep.Names[c] = proj.Names[c]
			if c < len(proj.Tables) {
				keep.Tables[c] = proj.Tables[c]
			} else {
				keep.Tables[c] = ""
			}
		}
	}
	return keep
}
