package planner

import (
	"github.com/apache/arrow-go/v18/arrow"
)

// Schema implements Plan.
func (s *Scan) Schema() Schema {
	out := make(Schema, len(s.Columns))
	for i, c := range s.Columns {
		f := s.Table.Schema.Field(c)
		out[i] = Column{Table: s.Alias, Name: f.Name, Type: f.Type}
	}
	return out
}

// Children implements Plan.
func (s *Scan) Children() []Plan { return nil }

// Schema implements Plan.
func (f *Filter) Schema() Schema { return f.Child.Schema() }

// Children implements Plan.
func (f *Filter) Children() []Plan { return []Plan{f.Child} }

// Schema implements Plan.
func (p *Project) Schema() Schema {
	out := make(Schema, len(p.Exprs))
	for i, e := range p.Exprs {
		out[i] = Column{Name: p.Names[i], Type: e.DataType()}
		if i < len(p.Tables) {
			out[i].Table = p.Tables[i]
		}
	}
	return out
}

// Children implements Plan.
func (p *Project) Children() []Plan { return []Plan{p.Child} }

// Schema implements Plan.
func (j *Join) Schema() Schema {
	l := j.Left.Schema()
	if j.Type == SemiJoin || j.Type == AntiJoin || j.Type == NullAwareAntiJoin {
		return l
	}
	if j.Type == MarkJoin {
		return append(append(Schema{}, l...), Column{Name: "mark", Type: arrow.FixedWidthTypes.Boolean})
	}
	return append(append(Schema{}, l...), j.Right.Schema()...)
}

// Children implements Plan.
func (j *Join) Children() []Plan { return []Plan{j.Left, j.Right} }

// Schema implements Plan.
func (m *MultiJoin) Schema() Schema {
	var out Schema
	for _, in := range m.Inputs {
		out = append(out, in.Schema()...)
	}
	return out
}

// Children implements Plan.
func (m *MultiJoin) Children() []Plan { return m.Inputs }

// Schema implements Plan.
func (a *Aggregate) Schema() Schema {
	out := make(Schema, 0, len(a.GroupBy)+len(a.Aggs)+1)
	for i, g := range a.GroupBy {
		out = append(out, Column{Name: a.Names[i], Type: g.DataType()})
	}
	if a.Rollup {
		out = append(out, Column{Name: "grouping_id", Type: arrow.PrimitiveTypes.Int64})
	}
	for _, c := range a.Aggs {
		out = append(out, Column{Name: c.Name, Type: c.Type})
	}
	return out
}

// Children implements Plan.
func (a *Aggregate) Children() []Plan { return []Plan{a.Child} }

// Schema implements Plan.
func (s *Sort) Schema() Schema { return s.Child.Schema() }

// Children implements Plan.
func (s *Sort) Children() []Plan { return []Plan{s.Child} }

// Schema implements Plan.
func (l *Limit) Schema() Schema { return l.Child.Schema() }

// Children implements Plan.
func (l *Limit) Children() []Plan { return []Plan{l.Child} }

// Schema implements Plan.
func (u *Union) Schema() Schema {
	s := u.Inputs[0].Schema()
	out := make(Schema, len(s))
	for i, c := range s {
		out[i] = Column{Name: c.Name, Type: c.Type}
	}
	return out
}

// Children implements Plan.
func (u *Union) Children() []Plan { return u.Inputs }

// Schema implements Plan.
func (w *Window) Schema() Schema {
	out := append(Schema{}, w.Child.Schema()...)
	for _, f := range w.Funcs {
		out = append(out, Column{Name: f.Name, Type: f.Type})
	}
	return out
}

// Children implements Plan.
func (w *Window) Children() []Plan { return []Plan{w.Child} }

// Schema implements Plan.
func (v *Values) Schema() Schema { return v.Cols }

// Children implements Plan.
func (v *Values) Children() []Plan { return nil }

// Schema implements Plan.
func (m *MaxOneRow) Schema() Schema { return m.Child.Schema() }

// Children implements Plan.
func (m *MaxOneRow) Children() []Plan { return []Plan{m.Child} }

// withChildren rebuilds p over new children (same count and order).
func withChildren(p Plan, ch []Plan) Plan {
	switch n := p.(type) {
	case *Scan, *Values:
		return p
	case *Filter:
		c := *n
		c.Child = ch[0]
		return &c
	case *Project:
		c := *n
		c.Child = ch[0]
		return &c
	case *Join:
		c := *n
		c.Left, c.Right = ch[0], ch[1]
		return &c
	case *MultiJoin:
		c := *n
		c.Inputs = ch
		return &c
	case *Aggregate:
		c := *n
		c.Child = ch[0]
		return &c
	case *Sort:
		c := *n
		c.Child = ch[0]
		return &c
	case *Limit:
		c := *n
		c.Child = ch[0]
		return &c
	case *Union:
		c := *n
		c.Inputs = ch
		return &c
	case *Window:
		c := *n
		c.Child = ch[0]
		return &c
	case *MaxOneRow:
		c := *n
		c.Child = ch[0]
		return &c
	}
	panic("planner: unknown plan node")
}

// width is len(p.Schema()) without building the schema: a join's schema
// copies its inputs' schemas, so asking each level of a deep join tree for
// its width would be quadratic in the number of joins.
func width(p Plan) int {
	switch n := p.(type) {
	case *Scan:
		return len(n.Columns)
	case *Project:
		return len(n.Exprs)
	case *Filter:
		return width(n.Child)
	case *Sort:
		return width(n.Child)
	case *Limit:
		return width(n.Child)
	case *MaxOneRow:
		return width(n.Child)
	case *Window:
		return width(n.Child) + len(n.Funcs)
	case *Join:
		switch n.Type {
		case SemiJoin, AntiJoin, NullAwareAntiJoin:
			return width(n.Left)
		case MarkJoin:
			return width(n.Left) + 1
		}
		return width(n.Left) + width(n.Right)
	case *MultiJoin:
		w := 0
		for _, in := range n.Inputs {
			w += width(in)
		}
		return w
	case *Union:
		return width(n.Inputs[0])
	}
	return len(p.Schema())
}
