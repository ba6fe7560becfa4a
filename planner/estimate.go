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
	st := estimate(p)
	st.RowBytes = rowBytes(p.Schema())
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
		c := Estimate(n.Child)
		return Stats{Rows: c.Rows * selectivity(expr.SplitAnd(n.Cond)), Base: c.Base}
	case *Join:
		l, r := Estimate(n.Left), Estimate(n.Right)
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
		return Stats{Rows: big.Rows * small.Rows / small.Base, Base: big.Base}
	case *MultiJoin:
		var best Stats
		for _, in := range n.Inputs {
			if s := Estimate(in); s.Rows > best.Rows {
				best = s
			}
		}
		return best
	case *Aggregate:
		c := Estimate(n.Child)
		if len(n.GroupBy) == 0 {
			return Stats{Rows: 1, Base: 1}
		}
		return Stats{Rows: c.Rows * 0.1, Base: c.Rows * 0.1}
	case *Limit:
		c := Estimate(n.Child)
		if n.N >= 0 && float64(n.N) < c.Rows {
			return Stats{Rows: float64(n.N), Base: c.Base}
		}
		return c
	case *Union:
		var s Stats
		for _, in := range n.Inputs {
			e := Estimate(in)
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
		return Estimate(ch[0])
	}
	return Stats{Rows: 1000, Base: 1000}
}

// selectivity of a conjunction: equality and IN are selective, ranges less.
func selectivity(conds []expr.Expr) float64 {
	s := 1.0
	for _, c := range conds {
		call, ok := c.(*expr.Call)
		switch {
		case !ok:
			s *= 0.5
		case call.Fn == "=":
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
		switch c.Type.ID() {
		case arrow.INT32, arrow.DATE32, arrow.FLOAT32:
			b += 4
		case arrow.DECIMAL128:
			b += 16
		case arrow.STRING, arrow.BINARY:
			b += 24
		case arrow.BOOL:
			b += 1
		default:
			b += 8
		}
	}
	return b + 1
}
