package planner

// WithChildren rebuilds p over new children (same count and order as
// p.Children()); the node's own fields are copied, not shared.
func WithChildren(p Plan, children []Plan) Plan {
	switch n := p.(type) {
	case *Scan:
		c := *n
		return &c
	case *Values:
		c := *n
		return &c
	}
	return withChildren(p, children)
}

// Clone copies a plan tree node by node (expressions, which are
// immutable, are shared). The binder uses it where one subplan is needed
// twice, such as a decorrelated subquery's outer rows, so no node appears
// at two places of a tree.
func Clone(p Plan) Plan {
	ch := p.Children()
	cc := make([]Plan, len(ch))
	for i, c := range ch {
		cc[i] = Clone(c)
	}
	return WithChildren(p, cc)
}
