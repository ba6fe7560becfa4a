package planner

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fsql-dev/fsql/exec/expr"
)

// Stats is a cardinality estimate. Base is the row count before any
// filter, so Rows/Base is the fraction of a relation that survives.
type Stats struct {
	Rows, Base float64
	RowBytes   float64
}

// Bytes is the estimated size of the relation in Arrow bytes.
func (s Stats) Bytes() float64 { return s.Rows * s.RowBytes }

// Estimate guesses the size of p from Parquet footer row counts and fixed
// selectivities: crude, but enough to put the fact table on the probe side
// and decide broadcasts.
func Estimate(p Plan) Stats {
	st := rowsOf(p)
	st.RowBytes = colBytes(p) + 1
	return st
}

// rowsOf is Estimate without the row width, which the recursion never
// reads: computing it at every level would build every subtree's schema.
func rowsOf(p Plan) Stats {
	st := estimate(p)
	if st.Rows < 1 {
		st.Rows = 1
	}
	if st.Base < st.Rows {
		st.Base = st.Rows
	}
	return st
}

func estimate(p Plan) Stats {
	switch n := p.(type) {
	case *Scan:
		var rows float64
		if n.Partitions == nil {
			rows = float64(n.Table.NumRows())
		} else {
			for _, part := range n.Partitions {
				for _, f := range part.Files {
					rows += float64(f.NumRows)
				}
			}
		}
		base := float64(n.Table.NumRows())
		return Stats{Rows: rows * selectivity(n.Filters), Base: base}
	case *Filter:
		c := rowsOf(n.Child)
		return Stats{Rows: c.Rows * selectivity(expr.SplitAnd(n.Cond)), Base: c.Base}
	case *Join:
		l, r := rowsOf(n.Left), rowsOf(n.Right)
		switch n.Type {
		case SemiJoin:
			return Stats{Rows: l.Rows * r.Rows / r.Base, Base: l.Base}
		case AntiJoin, NullAwareAntiJoin:
			return Stats{Rows: l.Rows * 0.5, Base: l.Base}
		case LeftJoin, MarkJoin:
			return l
		}
		if n.Cond == nil {
			return Stats{Rows: l.Rows * r.Rows, Base: l.Base * r.Base}
		}
		// A foreign-key join keeps the big side's rows in the fraction the
		// small side kept.
		big, small := l, r
		if r.Rows > l.Rows {
			big, small = r, l
		}
		rows := big.Rows * small.Rows / small.Base
		// An equality on a key of few distinct values keeps fewer: a
		// dimension joined with a one-row subquery on d_month_seq keeps
		// the rows of one month, not all of them.
		if d := joinDistinct(n, l, r); d > 0 {
			rows = min(rows, l.Rows*r.Rows/d)
		}
		return Stats{Rows: rows, Base: big.Base}
	case *MultiJoin:
		var best Stats
		for _, in := range n.Inputs {
			if s := rowsOf(in); s.Rows > best.Rows {
				best = s
			}
		}
		return best
	case *Aggregate:
		c := rowsOf(n.Child)
		if len(n.GroupBy) == 0 {
			return Stats{Rows: 1, Base: 1}
		}
		rows := c.Rows * 0.1
		if b, ok := groupBound(n); ok {
			rows = min(rows, b)
		}
		return Stats{Rows: rows, Base: rows}
	case *Limit:
		c := rowsOf(n.Child)
		if n.N >= 0 && float64(n.N) < c.Rows {
			return Stats{Rows: float64(n.N), Base: c.Base}
		}
		return c
	case *Union:
		var s Stats
		for _, in := range n.Inputs {
			e := rowsOf(in)
			s.Rows += e.Rows
			s.Base += e.Base
		}
		return s
	case *Values:
		return Stats{Rows: float64(len(n.Rows)), Base: float64(len(n.Rows))}
	case *MaxOneRow:
		return Stats{Rows: 1, Base: 1}
	}
	ch := p.Children()
	if len(ch) == 1 {
		return rowsOf(ch[0])
	}
	return Stats{Rows: 1000, Base: 1000}
}

// selectivity of a conjunction: equality (also the null-safe <=>, which
// keeps at most the NULL rows more) and IN are selective, ranges less.
func selectivity(conds []expr.Expr) float64 {
	s := 1.0
	for _, c := range conds {
		call, ok := c.(*expr.Call)
		switch {
		case !ok:
			s *= 0.5
		case call.Fn == "=" || call.Fn == "<=>":
			s *= 0.1
		case call.Fn == "in":
			s *= 0.2
		case call.Fn == "and": // BETWEEN
			s *= 0.2
		default:
			s *= 0.33
		}
	}
	return s
}

func rowBytes(s Schema) float64 {
	var b float64
	for _, c := range s {
		b += typeBytes(c.Type)
	}
	return b + 1
}

func typeBytes(t arrow.DataType) float64 {
	switch t.ID() {
	case arrow.INT32, arrow.DATE32, arrow.FLOAT32:
		return 4
	case arrow.DECIMAL128:
		return 16
	case arrow.STRING, arrow.BINARY:
		return 24
	case arrow.BOOL:
		return 1
	}
	return 8
}

// colBytes is rowBytes(p.Schema()) - 1 without building the schemas of
// a deep join tree level by level.
func colBytes(p Plan) float64 {
	switch n := p.(type) {
	case *Filter:
		return colBytes(n.Child)
	case *Sort:
		return colBytes(n.Child)
	case *Limit:
		return colBytes(n.Child)
	case *MaxOneRow:
		return colBytes(n.Child)
	case *Join:
		l := colBytes(n.Left)
		switch n.Type {
		case SemiJoin, AntiJoin, NullAwareAntiJoin:
			return l
		case MarkJoin:
			return l + typeBytes(arrow.FixedWidthTypes.Boolean)
		}
		return l + colBytes(n.Right)
	case *MultiJoin:
		var b float64
		for _, in := range n.Inputs {
			b += colBytes(in)
		}
		return b
	}
	return rowBytes(p.Schema()) - 1
}

// joinDistinct is the distinct-value count that divides an equi-join's
// cross product (the larger of the two keys' counts, the standard
// containment assumption), over its most selective key; 0 when no key's
// count is known from statistics. A side whose count is unknown does not
// count: guessing its rows as distinct values would make every join with
// a string key look selective.
func joinDistinct(j *Join, l, r Stats) float64 {
	lw := width(j.Left)
	lk, rk, _ := splitEquiKeys(j.Cond, lw, width(j.Right))
	var best float64
	for i := range lk {
		dl, okL := distinctOf(j.Left, lk[i], l.Rows)
		dr, okR := distinctOf(j.Right, rk[i], r.Rows)
		if !okL && !okR {
			continue
		}
		best = max(best, dl, dr)
	}
	return best
}

// distinctOf bounds the distinct values of e over p's rows (at most
// rows): a column traced down to a scan whose statistics bound it
// (hive.Table.DistinctBound). ok is false when nothing bounds it but the
// row count.
func distinctOf(p Plan, e expr.Expr, rows float64) (float64, bool) {
	c, isCol := e.(*expr.Column)
	if !isCol {
		return rows, false
	}
	n, ok := columnDistinct(p, c.Index)
	if !ok {
		return rows, false
	}
	return min(float64(n), rows), true
}

// columnDistinct follows column col of p down to a scan through plain
// column projections, filters, joins and group keys, and returns the
// scan's bound for it.
func columnDistinct(p Plan, col int) (int64, bool) {
	for {
		switch n := p.(type) {
		case *Scan:
			if col < 0 || col >= len(n.Columns) {
				return 0, false
			}
			return n.Table.DistinctBound(n.Columns[col])
		case *Filter:
			p = n.Child
		case *Sort:
			p = n.Child
		case *Limit:
			p = n.Child
		case *Project:
			c, ok := n.Exprs[col].(*expr.Column)
			if !ok {
				return 0, false
			}
			p, col = n.Child, c.Index
		case *Join:
			lw := width(n.Left)
			switch {
			case col < lw:
				p = n.Left
			case n.Type == InnerJoin || n.Type == LeftJoin:
				p, col = n.Right, col-lw
			default:
				return 0, false // a mark
			}
		case *MultiJoin:
			found := false
			for _, in := range n.Inputs {
				w := width(in)
				if col < w {
					p, found = in, true
					break
				}
				col -= w
			}
			if !found {
				return 0, false
			}
		case *Aggregate:
			if col >= len(n.GroupBy) || n.Rollup {
				return 0, false
			}
			c, ok := n.GroupBy[col].(*expr.Column)
			if !ok {
				return 0, false
			}
			p, col = n.Child, c.Index
		default:
			return 0, false
		}
	}
}

// groupBound bounds an aggregate's groups by the product of its keys'
// distinct counts (each plus one for NULL) when every key is a column the
// statistics bound. Without it a per-store average over a fact table (q65)
// is guessed at a tenth of the fact's rows, thousands of groups where
// there are a dozen, and the join search puts the wide item join before
// the join with it that removes most rows. ROLLUP adds subtotal rows the
// product does not count, so it is left to the fixed fraction.
func groupBound(a *Aggregate) (float64, bool) {
	if a.Rollup {
		return 0, false
	}
	bound := 1.0
	for _, g := range a.GroupBy {
		c, ok := g.(*expr.Column)
		if !ok {
			return 0, false
		}
		n, ok := columnDistinct(a.Child, c.Index)
		if !ok {
			return 0, false
		}
		bound *= float64(n) + 1
	}
	return bound, true
}
