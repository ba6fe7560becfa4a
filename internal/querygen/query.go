package querygen

import "fmt"

// Query is a generated statement.
type Query interface {
	// SQL renders the statement in dialect d.
	SQL(d Dialect) string
	// Order says whether the statement has a top-level ORDER BY and which
	// output columns (0-based) it sorts on, in order. The keys are total on
	// the output wherever the statement has a LIMIT, so the answer is
	// unambiguous; rows equal on them may come in any order.
	Order() (ordered bool, keys []int)
}

// Item is one output column; it is rendered AS c<i>.
type Item struct{ E Expr }

// JoinKind is how a FROM item joins the ones before it.
type JoinKind uint8

// Join kinds. Comma joins put their condition in the WHERE clause.
const (
	Comma JoinKind = iota
	InnerJoin
	LeftJoin
	RightJoin
	CrossJoin
)

// FromItem is one FROM item: a table, a derived table (Sub) or a derived
// set operation (Set), rendered as a WITH clause when CTE is set.
type FromItem struct {
	Table string
	Sub   *Select
	Set   *SetOp
	CTE   bool
	Alias string
}

func (it FromItem) derived() bool { return it.Sub != nil || it.Set != nil }

func (it FromItem) writeBody(w *writer) {
	if it.Set != nil {
		it.Set.write(w)
		return
	}
	it.Sub.write(w, true)
}

// Join is a FROM item after the first.
type Join struct {
	Kind JoinKind
	Item FromItem
	On   Expr // InnerJoin, LeftJoin, RightJoin
}

// OrderKey sorts on output column Pos (0-based).
type OrderKey struct {
	Pos  int
	Desc bool
}

// Select is one SELECT block.
type Select struct {
	Distinct bool
	Items    []Item
	From     FromItem
	Joins    []Join
	// JoinConds are the conditions of comma joins, rendered in WHERE
	// before Where.
	JoinConds []Expr
	Where     Expr
	GroupBy   []Expr
	Rollup    bool
	Having    Expr
	OrderBy   []OrderKey
	Limit     int // 0: none
	Offset    int // with a Limit only

	// What the metamorphic variants need to know.
	scope *scope
}

// SQL renders the statement, WITH clauses first.
func (s *Select) SQL(d Dialect) string {
	w := &writer{d: d}
	writeWith(w, s)
	s.write(w, false)
	return w.String()
}

// Order implements Query.
func (s *Select) Order() (bool, []int) { return orderOf(s.OrderBy) }

func orderOf(keys []OrderKey) (bool, []int) {
	if len(keys) == 0 {
		return false, nil
	}
	out := make([]int, len(keys))
	for i, k := range keys {
		out[i] = k.Pos
	}
	return true, out
}

// ctes lists the derived tables of s's FROM clause rendered as WITH
// clauses (the generator puts them in a top-level FROM only).
func (s *Select) ctes() []FromItem {
	var out []FromItem
	items := []FromItem{s.From}
	for _, j := range s.Joins {
		items = append(items, j.Item)
	}
	for _, it := range items {
		if it.derived() && it.CTE {
			out = append(out, it)
		}
	}
	return out
}

func writeWith(w *writer, s *Select) {
	ctes := s.ctes()
	if len(ctes) == 0 {
		return
	}
	w.WriteString("with ")
	for i, c := range ctes {
		if i > 0 {
			w.WriteString(", ")
		}
		w.WriteString(c.Alias + " as (")
		c.writeBody(w)
		w.WriteString(")")
	}
	w.WriteString(" ")
}

func (it FromItem) write(w *writer) {
	switch {
	case it.derived() && it.CTE:
		w.WriteString(it.Alias)
	case it.derived():
		w.WriteString("(")
		it.writeBody(w)
		w.WriteString(") as " + it.Alias)
	default:
		w.WriteString(it.Table + " as " + it.Alias)
	}
}

// write renders the block; nested says it is inside another statement
// (its CTEs, if any, were hoisted by the caller).
func (s *Select) write(w *writer, nested bool) {
	branch := w.branch
	w.branch = false
	w.WriteString("select ")
	if s.Distinct {
		w.WriteString("distinct ")
	}
	for i, it := range s.Items {
		if i > 0 {
			w.WriteString(", ")
		}
		if branch && w.d == DuckDB && it.E.Type() == Decimal {
			// An arm's decimal meets the other arm's in one column type.
			// DuckDB caps that type at 38 digits by dropping scale (SUM
			// is DECIMAL(38,s), so SUM(2 digits) against 3 digits rounds
			// to 2), MySQL keeps the larger scale. The generator's
			// decimals have far fewer than 10 digits of scale.
			w.WriteString("cast(")
			w.expr(it.E)
			w.WriteString(" as decimal(38,10))")
		} else {
			w.expr(it.E)
		}
		fmt.Fprintf(w, " as c%d", i)
	}
	w.WriteString(" from ")
	s.From.write(w)
	for _, j := range s.Joins {
		switch j.Kind {
		case Comma:
			w.WriteString(", ")
		case InnerJoin:
			w.WriteString(" join ")
		case LeftJoin:
			w.WriteString(" left join ")
		case RightJoin:
			w.WriteString(" right join ")
		case CrossJoin:
			w.WriteString(" cross join ")
		}
		j.Item.write(w)
		if j.On != nil {
			w.WriteString(" on ")
			w.expr(j.On)
		}
	}
	if where := and(append(append([]Expr{}, s.JoinConds...), s.Where)...); where != nil {
		w.WriteString(" where ")
		w.expr(where)
	}
	if len(s.GroupBy) > 0 {
		switch {
		case s.Rollup && w.d == DuckDB:
			w.WriteString(" group by rollup(")
			w.list(s.GroupBy)
			w.WriteString(")")
		default:
			w.WriteString(" group by ")
			w.list(s.GroupBy)
			if s.Rollup {
				w.WriteString(" with rollup")
			}
		}
	}
	if s.Having != nil {
		w.WriteString(" having ")
		w.expr(s.Having)
	}
	writeOrder(w, s.OrderBy, s.Limit, s.Offset)
}

func writeOrder(w *writer, keys []OrderKey, limit, offset int) {
	for i, k := range keys {
		if i == 0 {
			w.WriteString(" order by ")
		} else {
			w.WriteString(", ")
		}
		fmt.Fprintf(w, "%d", k.Pos+1)
		if k.Desc {
			w.WriteString(" desc")
		}
	}
	if limit > 0 {
		fmt.Fprintf(w, " limit %d", limit)
		if offset > 0 {
			fmt.Fprintf(w, " offset %d", offset)
		}
	}
}

// SetOp is Left op Right, ordered on every output column when it is the
// statement (a derived or IN operand may have no ORDER BY).
type SetOp struct {
	Op          string // union all, union, intersect, except
	Left, Right *Select
	// LeftSet, when set, replaces Left: (a op b) op Right, or with Flat
	// a op b op Right, which both dialects read with INTERSECT binding
	// tighter than UNION and EXCEPT.
	LeftSet *SetOp
	Flat    bool
	OrderBy []OrderKey
	Limit   int
	Offset  int
}

// SQL implements Query.
func (s *SetOp) SQL(d Dialect) string {
	w := &writer{d: d}
	s.write(w)
	return w.String()
}

// write renders the operation; a Left that is itself a set operation is
// parenthesised unless Flat.
func (s *SetOp) write(w *writer) {
	switch {
	case s.LeftSet != nil && s.Flat:
		s.LeftSet.write(w)
	case s.LeftSet != nil:
		w.WriteString("(")
		s.LeftSet.write(w)
		w.WriteString(")")
	default:
		w.branch = true
		s.Left.write(w, true)
	}
	w.WriteString(" " + s.Op + " ")
	w.branch = true
	s.Right.write(w, true)
	writeOrder(w, s.OrderBy, s.Limit, s.Offset)
}

// Order implements Query.
func (s *SetOp) Order() (bool, []int) { return orderOf(s.OrderBy) }
