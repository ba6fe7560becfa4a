package querygen

import (
	"fmt"
	"strings"
)

// Check is a pair of statements (MySQL dialect) that must return the same
// multiset of rows on any data.
type Check struct {
	Kind string // tlp-where, tlp-group, tlp-agg, tlp-having or norec
	A, B string
}

// partitions are p, NOT p and p IS NULL: every row makes exactly one of
// them true under SQL's three-valued logic.
func partitions(p Expr) []Expr {
	return []Expr{p, &Not{E: p}, &IsNull{E: p}}
}

// TLP returns a ternary logic partitioning check of q (SQLancer's TLP),
// in one of four forms, whichever apply:
//
//   - tlp-where (rows, no window): q = q WHERE p UNION ALL q WHERE NOT p
//     UNION ALL q WHERE p IS NULL (UNION for DISTINCT);
//   - tlp-group (grouped, p over the group keys only): each group falls
//     in one partition whole, so any aggregate is preserved;
//   - tlp-agg (group keys and COUNT/SUM/MIN/MAX only): p over any column,
//     the partitions' aggregates combined by an outer SUM/SUM/MIN/MAX;
//   - tlp-having (grouped): p over keys and aggregates in HAVING.
//
// Window functions see every row of their input, so a query with one has
// no TLP form (false).
func (g *Gen) TLP(q *Select) (Check, bool) {
	for _, it := range q.Items {
		if hasWindow(it.E) {
			return Check{}, false
		}
	}
	grouped := len(q.GroupBy) > 0 || q.aggregated()
	var forms []string
	if !grouped {
		forms = append(forms, "tlp-where")
	} else {
		if len(q.GroupBy) > 0 && !q.Rollup {
			forms = append(forms, "tlp-group")
		}
		if q.decomposable() {
			forms = append(forms, "tlp-agg")
		}
		forms = append(forms, "tlp-having")
	}
	base := *q
	base.OrderBy, base.Limit, base.Offset = nil, 0, 0
	form := forms[g.n(len(forms))]
	c := Check{Kind: form, A: base.SQL(MySQL)}
	w := &writer{d: MySQL}
	writeWith(w, &base)
	switch form {
	case "tlp-where":
		op := " union all "
		if q.Distinct {
			op = " union "
		}
		for i, p := range partitions(g.pred(q.scope, 0, 0)) {
			part := base
			part.Where = and(q.Where, p)
			if i > 0 {
				w.WriteString(op)
			}
			part.write(w, true)
		}
	case "tlp-group":
		for i, p := range partitions(g.pred(g.groupScope(q, false), g.opt.MaxDepth, 0)) {
			part := base
			part.Where = and(q.Where, p)
			if i > 0 {
				w.WriteString(" union all ")
			}
			part.write(w, true)
		}
	case "tlp-agg":
		var outer, keys []string
		for i, it := range q.Items {
			col := fmt.Sprintf("c%d", i)
			if i < len(q.GroupBy) {
				keys = append(keys, col)
				outer = append(outer, col+" as "+col)
				continue
			}
			fn := it.E.(*Agg).Fn
			if fn == "count" {
				fn = "sum" // of the partitions' counts
			}
			outer = append(outer, fmt.Sprintf("%s(%s) as %s", fn, col, col))
		}
		w.WriteString("select " + strings.Join(outer, ", ") + " from (")
		for i, p := range partitions(g.pred(q.scope, 0, 0)) {
			part := base
			part.Where = and(q.Where, p)
			if i > 0 {
				w.WriteString(" union all ")
			}
			part.write(w, true)
		}
		w.WriteString(") as tlp")
		if len(keys) > 0 {
			w.WriteString(" group by " + strings.Join(keys, ", "))
		}
	case "tlp-having":
		for i, p := range partitions(g.pred(g.groupScope(q, true), g.opt.MaxDepth, 0)) {
			part := base
			part.Having = and(q.Having, p)
			if i > 0 {
				w.WriteString(" union all ")
			}
			part.write(w, true)
		}
	}
	c.B = w.String()
	return c, true
}

// aggregated reports an aggregate in the select list.
func (q *Select) aggregated() bool {
	for _, it := range q.Items {
		if hasAgg(it.E) {
			return true
		}
	}
	return false
}

// decomposable: the select list is the group keys, then COUNT, SUM, MIN
// and MAX of plain arguments, and there is no HAVING or ROLLUP, so the
// aggregates of the partitions combine into the whole's.
func (q *Select) decomposable() bool {
	if q.Having != nil || q.Rollup || q.Distinct || len(q.Items) < len(q.GroupBy) {
		return false
	}
	for i, it := range q.Items {
		if i < len(q.GroupBy) {
			if it.E != q.GroupBy[i] {
				return false
			}
			continue
		}
		a, ok := it.E.(*Agg)
		if !ok || a.Distinct {
			return false
		}
		switch a.Fn {
		case "count", "sum", "min", "max":
		default:
			return false
		}
	}
	return true
}

// groupScope is what a predicate over q's groups may use: the group keys,
// and with aggs the exact aggregates of the select list and one more.
func (g *Gen) groupScope(q *Select, aggs bool) *scope {
	sc := &scope{}
	for _, k := range q.GroupBy {
		sc.ops = append(sc.ops, operand{e: k, values: valuesOf(q.scope, k)})
	}
	if aggs {
		for _, it := range q.Items {
			if hasAgg(it.E) && !inexact(it.E) {
				o := operand{e: it.E}
				if a, ok := it.E.(*Agg); ok && a.Arg != nil && (a.Fn == "min" || a.Fn == "max") {
					o.values = valuesOf(q.scope, a.Arg) // constants of the argument's type
				} else if it.E.Type() == Int {
					o.values = []string{"0", "1", "2"}
				}
				sc.ops = append(sc.ops, o)
			}
		}
		sc.ops = append(sc.ops, g.exactAgg(q.scope, g.opt.MaxDepth))
	}
	return sc
}

// NoREC returns a non-optimizing reference check of q's filter (after
// Rigger and Su): the number of rows of q's FROM clause its WHERE keeps,
// counted once by filtering and once by summing CASE WHEN over every row,
// where no optimizer can use the predicate to skip rows. A q without a
// WHERE gets a fresh predicate.
func (g *Gen) NoREC(q *Select) Check {
	where := q.Where
	if where == nil {
		where = g.pred(q.scope, 0, 0)
	}
	a := &Select{From: q.From, Joins: q.Joins, JoinConds: q.JoinConds, Where: where,
		Items: []Item{{&Agg{Fn: "count", T: Int}}}}
	one := &Case{Whens: []Expr{where}, Thens: []Expr{&Lit{Val: "1", T: Int}}, Else: &Lit{Val: "0", T: Int}, T: Int}
	sum := &Func{Name: "coalesce", Args: []Expr{&Agg{Fn: "sum", Arg: one, T: Int}, &Lit{Val: "0", T: Int}}, T: Int}
	b := &Select{From: q.From, Joins: q.Joins, JoinConds: q.JoinConds, Items: []Item{{sum}}}
	return Check{Kind: "norec", A: a.SQL(MySQL), B: b.SQL(MySQL)}
}
