package planner

import (
	"github.com/fsql-dev/fsql/exec/expr"
)

// filterGroupKeys lets a filtered dimension that joins an aggregate on a
// group key prune the aggregate's input. TPC-DS q2 and q59 aggregate
// sales by week (`group by d_week_seq`, the week read from date_dim
// inside the aggregate) and join the weekly totals with date_dim filtered
// by year or month sequence on d_week_seq; only the weeks of that filter
// survive the join, but every sales partition is read and aggregated,
// since dynamic pruning can follow the join key through the group key
// only to date_dim's d_week_seq, which is no partition column.
//
// The rule adds, below the aggregate, a semi join of its input with the
// dimension's keys: Aggregate(child) joined with D on key = D.x keeps
// what Aggregate(child ⋉ π_x(D)) joined with D keeps, because the semi
// join drops whole groups — exactly those with no partner in D, which
// the join drops anyway (NULL keys included: `=` matches no NULL). D is a
// second copy of the dimension's filtered scan. filter_dimensions then
// moves the semi join onto the input of the aggregate's join that owns
// the key (date_dim there), and that date_dim, now holding only the
// filter's weeks, is the selective side dynamic pruning collects from for
// the sales' date partitions: q2 reads 371 of 1,828 partitions per
// reference instead of all.
//
// It applies to an input of a MultiJoin that is an aggregate without
// ROLLUP (under projections of plain columns), joined by a condition
// `column = column` whose aggregate side is a plain column group key and
// whose other side is a column of another input that is a filtered scan
// keeping at most half its rows (dppMaxBuildFraction), and only when the
// aggregate reads a partitioned table big enough for dynamic pruning
// (dppMinFactRows) and the group key is a column of a dimension inside it
// (keyOfDimension): without partitions the semi join prunes nothing a
// scan would not read anyway, and it costs sharing — the references of a
// CTE then differ and are computed once each (share_filtered cannot merge
// semi joins), which on the flat layout is slower than one shared copy;
// and a key of the fact itself (q1's sr_store_sk against store) is pruned
// by the outer join's own dynamic filter already.
type filterGroupKeys struct{}

func (filterGroupKeys) Name() string { return "filter_group_keys" }

func (r filterGroupKeys) Apply(p Plan, ctx *Context) (Plan, bool, error) {
	return bottomUp(p, ctx, r, func(p Plan) (Plan, bool, error) {
		mj, ok := p.(*MultiJoin)
		if !ok {
			return p, false, nil
		}
		if np := semiJoinGroupKeys(mj); np != nil {
			return np, true, nil
		}
		return p, false, nil
	})
}

// semiJoinGroupKeys returns mj with a semi join added below each
// qualifying aggregate input (one per input), or nil when none qualifies.
func semiJoinGroupKeys(mj *MultiJoin) Plan {
	n := len(mj.Inputs)
	offsets := make([]int, n+1)
	for i, in := range mj.Inputs {
		offsets[i+1] = offsets[i] + width(in)
	}
	owner := func(col int) int {
		for i := 0; i < n; i++ {
			if col < offsets[i+1] {
				return i
			}
		}
		return -1
	}
	inputs := append([]Plan(nil), mj.Inputs...)
	changed := false
	done := make([]bool, n)
	for _, c := range mj.Conds {
		call, ok := c.(*expr.Call)
		if !ok || call.Fn != "=" || len(call.Args) != 2 {
			continue
		}
		a, okA := call.Args[0].(*expr.Column)
		b, okB := call.Args[1].(*expr.Column)
		if !okA || !okB {
			continue
		}
		for _, pair := range [2][2]*expr.Column{{a, b}, {b, a}} {
			ai, di := owner(pair[0].Index), owner(pair[1].Index)
			if ai < 0 || di < 0 || ai == di || done[ai] {
				continue
			}
			dim, ok := mj.Inputs[di].(*Scan)
			if !ok || len(dim.Filters) == 0 {
				continue
			}
			if st := rowsOf(dim); st.Rows/st.Base > dppMaxBuildFraction {
				continue
			}
			agg := withGroupKeySemiJoin(inputs[ai], pair[0].Index-offsets[ai], dim, pair[1].Index-offsets[di])
			if agg == nil {
				continue
			}
			inputs[ai], done[ai], changed = agg, true, true
		}
	}
	if !changed {
		return nil
	}
	return &MultiJoin{Inputs: inputs, Conds: mj.Conds}
}

// withGroupKeySemiJoin returns in (projections of plain columns over an
// aggregate) with its aggregate's input semi-joined with column dcol of
// dim on the group key that in's column col is, or nil.
func withGroupKeySemiJoin(in Plan, col int, dim *Scan, dcol int) Plan {
	switch n := in.(type) {
	case *Project:
		c, ok := n.Exprs[col].(*expr.Column)
		if !ok {
			return nil
		}
		child := withGroupKeySemiJoin(n.Child, c.Index, dim, dcol)
		if child == nil {
			return nil
		}
		out := *n
		out.Child = child
		return &out
	case *Aggregate:
		if n.Rollup || col >= len(n.GroupBy) {
			return nil
		}
		key, ok := n.GroupBy[col].(*expr.Column)
		if !ok || !readsPrunableFact(n.Child) || !keyOfDimension(n.Child, key.Index) {
			return nil
		}
		d := Clone(dim)
		dt := d.Schema()[dcol].Type
		keys := &Project{Child: d, Exprs: []expr.Expr{expr.NewColumn(dcol, dt, d.Schema()[dcol].Name)},
			Names: []string{d.Schema()[dcol].Name}, Tables: []string{d.Schema()[dcol].Table}}
		cw := width(n.Child)
		cond, err := expr.NewCall("=", key, expr.NewColumn(cw, dt, keys.Names[0]))
		if err != nil {
			return nil
		}
		out := *n
		out.Child = &Join{Type: SemiJoin, Left: n.Child, Right: keys, Cond: cond}
		return &out
	}
	return nil
}

// readsPrunableFact reports whether p scans a partitioned table that
// dynamic pruning would consider a fact.
func readsPrunableFact(p Plan) bool {
	found := false
	walkPlan(p, func(n Plan) {
		if s, ok := n.(*Scan); ok && len(s.Table.PartitionColumns) > 0 && s.Table.NumRows() >= dppMinFactRows {
			found = true
		}
	})
	return found
}

// keyOfDimension reports whether column col of p is a copy of a column of
// a table that is no prunable fact (a dimension inside the aggregate's
// joins, such as q2's date_dim.d_week_seq), followed through projections
// of plain columns, filters, the inputs of inner joins and the left side
// of the others. The semi join then lands on that dimension, whose join
// with the fact dynamic pruning collects; a key of the fact itself (q1's
// sr_store_sk) is pruned by the outer join's own dynamic filter already,
// and a semi join on it would only add a probe of every fact row.
func keyOfDimension(p Plan, col int) bool {
	switch n := p.(type) {
	case *Scan:
		t := n.Table
		return !(len(t.PartitionColumns) > 0 && t.NumRows() >= dppMinFactRows)
	case *Filter:
		return keyOfDimension(n.Child, col)
	case *Project:
		if c, ok := n.Exprs[col].(*expr.Column); ok {
			return keyOfDimension(n.Child, c.Index)
		}
	case *MultiJoin:
		off := 0
		for _, in := range n.Inputs {
			w := width(in)
			if col < off+w {
				return keyOfDimension(in, col-off)
			}
			off += w
		}
	case *Join:
		lw := width(n.Left)
		if col < lw {
			return keyOfDimension(n.Left, col)
		}
		if n.Type == InnerJoin {
			return keyOfDimension(n.Right, col-lw)
		}
	}
	return false
}
