package planner

import (
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fsql-dev/fsql/exec/expr"
)

// mergeScalarAggregates computes in one scan the scalar aggregates (no
// GROUP BY) that read the same table with different filters and are
// crossed into one query: the uncorrelated scalar subqueries of a select
// list, which the binder left-joins one after another onto their host
// without a condition, and the derived tables of a comma join. TPC-DS q9
// scans store_sales fifteen times (five ranges of ss_quantity, three
// aggregates each) and q28 six times; after this rule each scans it once.
// The copies may also be one comma join of scans whose filters differ on
// one scan only (see varyingScan): q88 joins store_sales with time_dim,
// household_demographics and store eight times, once per half hour of
// t_hour and t_minute, and q90 twice; merged, the join runs once under
// the OR of the time_dim filters, and each count reads its own rows.
//
// The merged scan keeps the conjuncts every copy holds and the OR of the
// copies' other conjuncts (their rests); a projection computes each
// distinct rest once as a boolean column, and each aggregate reads its
// argument only where its copy's rest is TRUE: agg(x) becomes
// agg(CASE WHEN rest THEN x END), COUNT(*) becomes
// COUNT(CASE WHEN rest THEN 1 END). The aggregates allowed (COUNT, SUM,
// AVG, MIN, MAX, DISTINCT or not) ignore NULLs, so each sees exactly its
// copy's values; over no rows COUNT is still 0 and the others NULL, as a
// scalar aggregate over an empty input gives, and the merged aggregate
// still yields its one row. Rests must not fail (safeResidue: the merged
// filter and the projection evaluate them over the other copies' rows
// too), nor may the conjuncts the copies share, which meet the rests in
// another order; a CASE evaluates an argument that may fail only for the
// rows its condition takes, so no argument meets a row its copy did not
// see.
//
// A one-row relation joined without a condition, inner or left, is a
// cross product with one row, so the merged copies join once, where the
// first of them joined, and a projection above restores the order of the
// columns (and a comma join's conditions are renumbered).
//
// It runs after the first pushdown (each copy's WHERE is in its scan's
// filters) and before join ordering.
type mergeScalarAggregates struct{}

func (mergeScalarAggregates) Name() string { return "merge_scalar_aggregates" }

func (r mergeScalarAggregates) Apply(p Plan, ctx *Context) (Plan, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	switch n := p.(type) {
	case *Join:
		if _, ok := chainLink(n); ok {
			return r.chain(n, ctx)
		}
	case *MultiJoin:
		return r.multiJoin(n, ctx)
	}
	return applyToChildren(p, ctx, r)
}

// scalarAgg is a scalar aggregate, under projections, over one scan or
// over a comma join of scans (join, its conditions; nil for one scan).
type scalarAgg struct {
	projs []*Project // outermost first
	agg   *Aggregate
	scans []*Scan
	join  *MultiJoin
}

// mergeableAggs are the aggregates that ignore NULL arguments.
var mergeableAggs = map[string]bool{"count": true, "count_star": true, "sum": true, "avg": true, "min": true, "max": true}

func asScalarAgg(p Plan) (scalarAgg, bool) {
	var sa scalarAgg
	for {
		pr, ok := p.(*Project)
		if !ok {
			break
		}
		sa.projs = append(sa.projs, pr)
		p = pr.Child
	}
	agg, ok := p.(*Aggregate)
	if !ok || len(agg.GroupBy) > 0 || agg.Rollup || len(agg.Aggs) == 0 {
		return sa, false
	}
	for _, a := range agg.Aggs {
		if !mergeableAggs[a.Fn] || (a.Fn != "count_star" && a.Arg == nil) {
			return sa, false
		}
	}
	inputs := []Plan{agg.Child}
	if mj, ok := agg.Child.(*MultiJoin); ok {
		inputs, sa.join = mj.Inputs, mj
		// The conditions meet rows of every copy's join, so none may fail.
		for _, c := range mj.Conds {
			if !safeResidue(c) {
				return sa, false
			}
		}
	}
	for _, in := range inputs {
		scan, ok := in.(*Scan)
		if !ok || scan.Partitions != nil || scan.Pruned {
			return sa, false
		}
		sa.scans = append(sa.scans, scan)
	}
	sa.agg = agg
	return sa, true
}

// sameSource reports whether two scalar aggregates read the same columns
// of the same tables, joined under the same conditions, so their filters
// and the aggregates' arguments index alike.
func sameSource(a, b scalarAgg) bool {
	if len(a.scans) != len(b.scans) || (a.join == nil) != (b.join == nil) {
		return false
	}
	for i, s := range a.scans {
		if s.Table != b.scans[i].Table || !slices.Equal(s.Columns, b.scans[i].Columns) {
			return false
		}
	}
	if a.join == nil {
		return true
	}
	return slices.EqualFunc(a.join.Conds, b.join.Conds, func(x, y expr.Expr) bool { return x.String() == y.String() })
}

// chainLink reports whether j joins a scalar aggregate onto its left
// input without a condition.
func chainLink(j *Join) (scalarAgg, bool) {
	if j.Cond != nil || (j.Type != InnerJoin && j.Type != LeftJoin) {
		return scalarAgg{}, false
	}
	return asScalarAgg(j.Right)
}

// chain merges the scalar aggregates of the joins down top's left spine.
func (r mergeScalarAggregates) chain(top *Join, ctx *Context) (Plan, bool, error) {
	var links []*Join // top first
	p := Plan(top)
	for {
		j, ok := p.(*Join)
		if !ok {
			break
		}
		if _, ok := chainLink(j); !ok {
			break
		}
		links = append(links, j)
		p = j.Left
	}
	base, changed, err := r.Apply(p, ctx)
	if err != nil {
		return nil, false, err
	}
	slices.Reverse(links) // innermost first
	inputs := make([]Plan, 0, len(links)+1)
	inputs = append(inputs, base)
	for _, j := range links {
		inputs = append(inputs, j.Right)
	}
	groups := mergeGroups(inputs[1:])
	if len(groups) == 0 {
		if !changed {
			return top, false, nil
		}
		out := base
		for _, j := range links {
			c := *j
			c.Left = out
			out = &c
		}
		return out, true, nil
	}
	merged, order, err := mergeInputs(inputs, shiftGroups(groups, 1))
	if err != nil || merged == nil {
		return top, false, err
	}
	out := merged[0]
	for _, in := range merged[1:] {
		out = &Join{Type: LeftJoin, Left: out, Right: in}
	}
	return reorder(out, order, top.Schema()), true, nil
}

// multiJoin merges the scalar aggregates among a comma join's inputs.
func (r mergeScalarAggregates) multiJoin(m *MultiJoin, ctx *Context) (Plan, bool, error) {
	inputs := make([]Plan, len(m.Inputs))
	changed := false
	for i, in := range m.Inputs {
		nc, cc, err := r.Apply(in, ctx)
		if err != nil {
			return nil, false, err
		}
		inputs[i], changed = nc, changed || cc
	}
	groups := mergeGroups(inputs)
	if len(groups) == 0 {
		if !changed {
			return m, false, nil
		}
		return &MultiJoin{Inputs: inputs, Conds: m.Conds}, true, nil
	}
	merged, order, err := mergeInputs(inputs, groups)
	if err != nil || merged == nil {
		return m, false, err
	}
	var conds []expr.Expr
	for _, c := range m.Conds {
		rc, err := expr.Rewrite(c, func(x expr.Expr) (expr.Expr, error) {
			if col, ok := x.(*expr.Column); ok {
				return expr.NewColumn(order[col.Index], col.Type, col.Name), nil
			}
			return x, nil
		})
		if err != nil {
			return nil, false, err
		}
		conds = append(conds, rc)
	}
	var out Plan
	if len(merged) == 1 {
		out = merged[0]
		if len(conds) > 0 {
			out = &Filter{Child: out, Cond: JoinAnd(conds)}
		}
	} else {
		out = &MultiJoin{Inputs: merged, Conds: conds}
	}
	return reorder(out, order, m.Schema()), true, nil
}

// mergeGroups groups the inputs that are scalar aggregates over the same
// source, by input index; only groups of two or more are returned, each
// ascending.
func mergeGroups(inputs []Plan) [][]int {
	var groups [][]int
	var firsts []scalarAgg
	for i, in := range inputs {
		sa, ok := asScalarAgg(in)
		if !ok {
			continue
		}
		found := false
		for g, f := range firsts {
			if sameSource(f, sa) {
				groups[g] = append(groups[g], i)
				found = true
				break
			}
		}
		if !found {
			firsts = append(firsts, sa)
			groups = append(groups, []int{i})
		}
	}
	out := groups[:0]
	for _, g := range groups {
		if len(g) > 1 {
			out = append(out, g)
		}
	}
	return out
}

func shiftGroups(groups [][]int, by int) [][]int {
	out := make([][]int, len(groups))
	for i, g := range groups {
		out[i] = make([]int, len(g))
		for j, x := range g {
			out[i][j] = x + by
		}
	}
	return out
}

// mergeInputs replaces each group of inputs by its merged aggregate, at
// the place of the group's first input, and returns the new inputs and
// where each old output column went (old index -> new index). It returns
// nil inputs when a group cannot merge (a rest that may fail, a CASE
// that would change an argument's type): nothing changes then.
func mergeInputs(inputs []Plan, groups [][]int) ([]Plan, []int, error) {
	mergedAt := map[int]Plan{}
	skip := map[int]bool{}
	for _, g := range groups {
		var members []scalarAgg
		for _, i := range g {
			sa, _ := asScalarAgg(inputs[i])
			members = append(members, sa)
		}
		m, err := mergeGroup(members)
		if err != nil || m == nil {
			return nil, nil, err
		}
		mergedAt[g[0]] = m
		for _, i := range g[1:] {
			skip[i] = true
		}
	}
	// Old column positions, per input, and the inputs each merged one
	// stands for.
	starts := make([]int, len(inputs)+1)
	for i, in := range inputs {
		starts[i+1] = starts[i] + width(in)
	}
	order := make([]int, starts[len(inputs)])
	var out []Plan
	pos := 0
	for i, in := range inputs {
		if skip[i] {
			continue
		}
		if m, ok := mergedAt[i]; ok {
			for _, g := range groups {
				if g[0] != i {
					continue
				}
				for _, k := range g {
					for c := starts[k]; c < starts[k+1]; c++ {
						order[c] = pos
						pos++
					}
				}
			}
			out = append(out, m)
			continue
		}
		for c := starts[i]; c < starts[i+1]; c++ {
			order[c] = pos
			pos++
		}
		out = append(out, in)
	}
	return out, order, nil
}

// reorder puts the columns of p (old column c now at order[c]) back in
// their old order, under their old names.
func reorder(p Plan, order []int, old Schema) Plan {
	identity := true
	for c, to := range order {
		identity = identity && c == to
	}
	if identity {
		return p
	}
	s := p.Schema()
	pr := &Project{Child: p}
	for c, to := range order {
		pr.Exprs = append(pr.Exprs, expr.NewColumn(to, s[to].Type, s[to].Name))
		pr.Names = append(pr.Names, old[c].Name)
		pr.Tables = append(pr.Tables, old[c].Table)
	}
	return pr
}

// mergeGroup is one aggregate computing every member's aggregates, under
// a projection with each member's output columns in order; nil when the
// members cannot merge.
func mergeGroup(members []scalarAgg) (Plan, error) {
	v, ok := varyingScan(members)
	if !ok {
		return nil, nil
	}
	scan := members[0].scans[v]
	conj := make([][]expr.Expr, len(members))
	for i, m := range members {
		for _, f := range m.scans[v].Filters {
			conj[i] = append(conj[i], expr.SplitAnd(f)...)
		}
		// Every conjunct meets other rows, in another order, than in its
		// own copy's filter, so none may fail.
		for _, c := range conj[i] {
			if !safeResidue(c) {
				return nil, nil
			}
		}
	}
	// Conjuncts every member holds stay in the scan.
	var common []expr.Expr
	for _, c := range conj[0] {
		k := c.String()
		inAll := true
		for _, cs := range conj[1:] {
			inAll = inAll && slices.ContainsFunc(cs, func(x expr.Expr) bool { return x.String() == k })
		}
		if inAll && !slices.ContainsFunc(common, func(x expr.Expr) bool { return x.String() == k }) {
			common = append(common, c)
		}
	}
	isCommon := func(c expr.Expr) bool {
		return slices.ContainsFunc(common, func(x expr.Expr) bool { return x.String() == c.String() })
	}
	// The distinct rests and which one each member has (-1: none).
	var rests []expr.Expr
	restOf := make([]int, len(members))
	anyEmpty := false
	for i, cs := range conj {
		var rest []expr.Expr
		for _, c := range cs {
			if !isCommon(c) {
				rest = append(rest, c)
			}
		}
		restOf[i] = -1
		if len(rest) == 0 {
			anyEmpty = true
			continue
		}
		r := JoinAnd(rest)
		restOf[i] = slices.IndexFunc(rests, func(x expr.Expr) bool { return x.String() == r.String() })
		if restOf[i] < 0 {
			restOf[i] = len(rests)
			rests = append(rests, r)
		}
	}
	filters := append([]expr.Expr{}, common...)
	if !anyEmpty {
		if len(rests) == 1 {
			filters = append(filters, expr.SplitAnd(rests[0])...)
		} else {
			or, err := expr.NewCall("or", rests...)
			if err != nil {
				return nil, err
			}
			filters = append(filters, or)
		}
	}
	one := *scan
	one.Filters = filters
	var source Plan = &one
	at := 0 // where scan v's columns start in the source's output
	if j := members[0].join; j != nil {
		inputs := slices.Clone(j.Inputs)
		inputs[v] = &one
		for _, in := range inputs[:v] {
			at += width(in)
		}
		source = &MultiJoin{Inputs: inputs, Conds: j.Conds}
	}
	child := source
	needCase := len(rests) > 1 || (len(rests) == 1 && anyEmpty)
	w := width(source)
	if needCase {
		s := source.Schema()
		pr := &Project{Child: source}
		for c := range w {
			pr.Exprs = append(pr.Exprs, expr.NewColumn(c, s[c].Type, s[c].Name))
			pr.Names = append(pr.Names, s[c].Name)
			pr.Tables = append(pr.Tables, s[c].Table)
		}
		for i, r := range rests {
			pr.Exprs = append(pr.Exprs, shift(r, at))
			pr.Names = append(pr.Names, fmt.Sprintf("__rest%d", i))
			pr.Tables = append(pr.Tables, "")
		}
		child = pr
	}
	agg := &Aggregate{Child: child}
	offsets := make([]int, len(members))
	for i, m := range members {
		offsets[i] = len(agg.Aggs)
		for _, a := range m.agg.Aggs {
			if needCase && restOf[i] >= 0 {
				var err error
				if a, err = guarded(a, expr.NewColumn(w+restOf[i], arrow.FixedWidthTypes.Boolean, fmt.Sprintf("__rest%d", restOf[i]))); err != nil || a.Fn == "" {
					return nil, err
				}
			}
			agg.Aggs = append(agg.Aggs, a)
		}
	}
	hasProjs := false
	for _, m := range members {
		hasProjs = hasProjs || len(m.projs) > 0
	}
	if !hasProjs {
		return agg, nil
	}
	as := agg.Schema()
	top := &Project{Child: agg}
	for i, m := range members {
		vals := make([]expr.Expr, len(m.agg.Aggs))
		for j := range vals {
			vals[j] = expr.NewColumn(offsets[i]+j, as[offsets[i]+j].Type, as[offsets[i]+j].Name)
		}
		for k := len(m.projs) - 1; k >= 0; k-- {
			next := make([]expr.Expr, len(m.projs[k].Exprs))
			for j, e := range m.projs[k].Exprs {
				s, err := substitute(e, vals)
				if err != nil {
					return nil, err
				}
				next[j] = s
			}
			vals = next
		}
		ms := members[i].schema()
		for j, v := range vals {
			top.Exprs = append(top.Exprs, v)
			top.Names = append(top.Names, ms[j].Name)
			top.Tables = append(top.Tables, ms[j].Table)
		}
	}
	return top, nil
}

// varyingScan is the one scan position whose filters differ among the
// members (0 when none do); false when filters differ at two positions.
// Merging copies that differ at one scan gives exactly the union of their
// joins' rows, since an inner join of the other, identical inputs with
// the OR of that scan's filters is the union of the joins with each
// filter; filters differing at two scans would join one copy's rows of
// the first with another copy's rows of the second, which no copy wants.
func varyingScan(members []scalarAgg) (int, bool) {
	key := func(s *Scan) []string {
		var ks []string
		for _, f := range s.Filters {
			for _, c := range expr.SplitAnd(f) {
				ks = append(ks, c.String())
			}
		}
		slices.Sort(ks)
		return slices.Compact(ks)
	}
	v := -1
	for k, s := range members[0].scans {
		first := key(s)
		for _, m := range members[1:] {
			if !slices.Equal(first, key(m.scans[k])) {
				if v >= 0 && v != k {
					return 0, false
				}
				v = k
			}
		}
	}
	return max(v, 0), true
}

// schema is the member's output: its outermost projection's, or the
// aggregate's.
func (sa scalarAgg) schema() Schema {
	if len(sa.projs) > 0 {
		return sa.projs[0].Schema()
	}
	return sa.agg.Schema()
}

// guarded is a reading only where rest is TRUE: agg(CASE WHEN rest THEN
// arg END), COUNT(*) as COUNT(CASE WHEN rest THEN 1 END). A zero AggCall
// says the CASE would change the argument's type.
func guarded(a AggCall, rest expr.Expr) (AggCall, error) {
	arg := a.Arg
	if a.Fn == "count_star" {
		a.Fn = "count"
		arg = expr.NewLiteral(int64(1), arrow.PrimitiveTypes.Int64)
	}
	c, err := expr.NewCall("case", rest, arg, expr.Null(arg.DataType()))
	if err != nil {
		return AggCall{}, err
	}
	if !arrow.TypeEqual(c.DataType(), arg.DataType()) {
		return AggCall{}, nil
	}
	a.Arg = c
	return a, nil
}
