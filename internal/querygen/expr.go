package querygen

import (
	"fmt"
	"strings"
)

// Dialect is the SQL spelling a query is rendered in.
type Dialect uint8

// Dialects.
const (
	MySQL  Dialect = iota // fsql's
	DuckDB                // the differential oracle's
)

// Expr is a node of a generated expression. The set of nodes is closed
// (the unexported methods); Walk visits them.
type Expr interface {
	// Type is the expression's type.
	Type() Type
	write(w *writer)
	// kids are the direct sub-expressions, not those inside a subquery.
	kids() []Expr
}

type writer struct {
	strings.Builder
	d Dialect
	// branch is set while the next SELECT written is an arm of a set
	// operation (it clears it).
	branch bool
}

func (w *writer) expr(e Expr) { e.write(w) }

func (w *writer) list(es []Expr) {
	for i, e := range es {
		if i > 0 {
			w.WriteString(", ")
		}
		e.write(w)
	}
}

// Render writes e in dialect d.
func Render(e Expr, d Dialect) string {
	w := &writer{d: d}
	e.write(w)
	return w.String()
}

// Walk calls f on e and every sub-expression outside subqueries, parents
// first; f returning false stops the descent below that node.
func Walk(e Expr, f func(Expr) bool) {
	if e == nil || !f(e) {
		return
	}
	for _, k := range e.kids() {
		Walk(k, f)
	}
}

// Col is a column reference, qualified by its table alias.
type Col struct {
	Qual, Name string
	T          Type
}

func (c *Col) Type() Type   { return c.T }
func (c *Col) kids() []Expr { return nil }
func (c *Col) write(w *writer) {
	if c.Qual != "" {
		w.WriteString(c.Qual + ".")
	}
	w.WriteString(c.Name)
}

// Lit is a constant. Val is the raw value (Null for NULL).
type Lit struct {
	Val  string
	Null bool
	T    Type
}

func (l *Lit) Type() Type   { return l.T }
func (l *Lit) kids() []Expr { return nil }
func (l *Lit) write(w *writer) {
	switch {
	case l.Null:
		w.WriteString("null")
	case l.T == String:
		w.WriteString(quote(l.Val, w.d))
	case l.T == Date:
		w.WriteString("date " + quote(l.Val, w.d))
	case l.T == Bool:
		w.WriteString(l.Val)
	default:
		if strings.HasPrefix(l.Val, "-") {
			w.WriteString("(" + l.Val + ")")
		} else {
			w.WriteString(l.Val)
		}
	}
}

// quote writes a string literal. MySQL treats a backslash as an escape,
// DuckDB does not, so it is doubled for MySQL only.
func quote(s string, d Dialect) string {
	s = strings.ReplaceAll(s, "'", "''")
	if d == MySQL {
		s = strings.ReplaceAll(s, `\`, `\\`)
	}
	return "'" + s + "'"
}

// Bin is a binary operator: arithmetic (+ - * / % div), comparison
// (= <> < <= > >= <=>) or logic (and, or).
type Bin struct {
	Op   string
	L, R Expr
	T    Type
}

func (b *Bin) Type() Type   { return b.T }
func (b *Bin) kids() []Expr { return []Expr{b.L, b.R} }
func (b *Bin) write(w *writer) {
	w.WriteString("(")
	switch {
	case w.d == DuckDB && (b.Op == "/" || b.Op == "%"):
		// MySQL: x/0 and x%0 are NULL; DuckDB: x/0 is infinity.
		w.expr(b.L)
		w.WriteString(" " + b.Op + " nullif(")
		w.expr(b.R)
		w.WriteString(", 0)")
	case w.d == DuckDB && b.Op == "div":
		w.expr(b.L)
		w.WriteString(" // nullif(")
		w.expr(b.R)
		w.WriteString(", 0)")
	case w.d == DuckDB && b.Op == "<=>":
		w.expr(b.L)
		w.WriteString(" is not distinct from ")
		w.expr(b.R)
	case w.d == DuckDB && b.T == Int && (b.Op == "+" || b.Op == "-" || b.Op == "*"):
		// MySQL computes integers in BIGINT; DuckDB keeps INTEGER and
		// overflows.
		w.WriteString("cast(")
		w.expr(b.L)
		w.WriteString(" as bigint) " + b.Op + " ")
		w.expr(b.R)
	default:
		w.expr(b.L)
		w.WriteString(" " + b.Op + " ")
		w.expr(b.R)
	}
	w.WriteString(")")
}

// Not is logical negation.
type Not struct{ E Expr }

func (n *Not) Type() Type   { return Bool }
func (n *Not) kids() []Expr { return []Expr{n.E} }
func (n *Not) write(w *writer) {
	w.WriteString("(not ")
	w.expr(n.E)
	w.WriteString(")")
}

// IsNull is E IS [NOT] NULL.
type IsNull struct {
	E   Expr
	Not bool
}

func (n *IsNull) Type() Type   { return Bool }
func (n *IsNull) kids() []Expr { return []Expr{n.E} }
func (n *IsNull) write(w *writer) {
	w.WriteString("(")
	w.expr(n.E)
	if n.Not {
		w.WriteString(" is not null)")
	} else {
		w.WriteString(" is null)")
	}
}

// Truth is E IS [NOT] TRUE|FALSE: never NULL, so a filter of it keeps
// (IS NOT TRUE) or drops rows where E is NULL.
type Truth struct {
	E     Expr
	False bool
	Not   bool
}

func (n *Truth) Type() Type   { return Bool }
func (n *Truth) kids() []Expr { return []Expr{n.E} }
func (n *Truth) write(w *writer) {
	w.WriteString("(")
	w.expr(n.E)
	w.WriteString(" is ")
	if n.Not {
		w.WriteString("not ")
	}
	if n.False {
		w.WriteString("false)")
	} else {
		w.WriteString("true)")
	}
}

// InList is E [NOT] IN (List...).
type InList struct {
	E    Expr
	List []Expr
	Not  bool
}

func (n *InList) Type() Type   { return Bool }
func (n *InList) kids() []Expr { return append([]Expr{n.E}, n.List...) }
func (n *InList) write(w *writer) {
	w.WriteString("(")
	w.expr(n.E)
	if n.Not {
		w.WriteString(" not")
	}
	w.WriteString(" in (")
	w.list(n.List)
	w.WriteString("))")
}

// Between is E [NOT] BETWEEN Lo AND Hi.
type Between struct {
	E, Lo, Hi Expr
	Not       bool
}

func (n *Between) Type() Type   { return Bool }
func (n *Between) kids() []Expr { return []Expr{n.E, n.Lo, n.Hi} }
func (n *Between) write(w *writer) {
	w.WriteString("(")
	w.expr(n.E)
	if n.Not {
		w.WriteString(" not")
	}
	w.WriteString(" between ")
	w.expr(n.Lo)
	w.WriteString(" and ")
	w.expr(n.Hi)
	w.WriteString(")")
}

// Like is E [NOT] LIKE Pattern; patterns hold no backslash, so the two
// dialects' escape defaults do not matter.
type Like struct {
	E       Expr
	Pattern string
	Not     bool
}

func (n *Like) Type() Type   { return Bool }
func (n *Like) kids() []Expr { return []Expr{n.E} }
func (n *Like) write(w *writer) {
	w.WriteString("(")
	w.expr(n.E)
	if n.Not {
		w.WriteString(" not")
	}
	w.WriteString(" like " + quote(n.Pattern, w.d) + ")")
}

// Collate is E COLLATE utf8mb4_general_ci, case-insensitive: DuckDB's
// NOCASE. They agree on equality of ASCII text, but general_ci ignores
// trailing spaces (PAD SPACE; a few TPC-DS streets end in one) and NOCASE
// does not, so DuckDB's side is rtrim(E) and the constants compared with
// it have no trailing space. They disagree on order (general_ci weighs
// letters as upper case, NOCASE as lower, so '_' sorts apart): the
// generator compares collated values with = and <> and IN only.
type Collate struct{ E Expr }

func (c *Collate) Type() Type   { return String }
func (c *Collate) kids() []Expr { return []Expr{c.E} }
func (c *Collate) write(w *writer) {
	w.WriteString("(")
	if w.d == DuckDB {
		w.WriteString("rtrim(")
		w.expr(c.E)
		w.WriteString(") collate nocase)")
		return
	}
	w.expr(c.E)
	w.WriteString(" collate utf8mb4_general_ci)")
}

// Func is a scalar function call.
type Func struct {
	Name string
	Args []Expr
	T    Type
}

func (f *Func) Type() Type   { return f.T }
func (f *Func) kids() []Expr { return f.Args }
func (f *Func) write(w *writer) {
	switch {
	case w.d == DuckDB && f.Name == "concat":
		// DuckDB's concat skips NULLs; MySQL's (and ||) returns NULL.
		w.WriteString("(")
		for i, a := range f.Args {
			if i > 0 {
				w.WriteString(" || ")
			}
			w.expr(a)
		}
		w.WriteString(")")
		return
	case w.d == DuckDB && f.Name == "datediff":
		// MySQL's datediff(a, b) is a - b in days.
		w.WriteString("date_diff('day', ")
		w.expr(f.Args[1])
		w.WriteString(", ")
		w.expr(f.Args[0])
		w.WriteString(")")
		return
	case w.d == DuckDB && (f.Name == "dayofweek" || f.Name == "weekday"):
		// MySQL: DAYOFWEEK 1 (Sunday) to 7, WEEKDAY 0 (Monday) to 6;
		// DuckDB: dayofweek 0 (Sunday) to 6, isodow 1 (Monday) to 7.
		fn, delta := "dayofweek", " + 1)"
		if f.Name == "weekday" {
			fn, delta = "isodow", " - 1)"
		}
		w.WriteString("(" + fn + "(")
		w.expr(f.Args[0])
		w.WriteString(")" + delta)
		return
	case w.d == DuckDB && f.Name == "locate":
		// MySQL's LOCATE(piece, s) is INSTR(s, piece).
		w.WriteString("instr(")
		w.expr(f.Args[1])
		w.WriteString(", ")
		w.expr(f.Args[0])
		w.WriteString(")")
		return
	case w.d == DuckDB && f.Name == "char_length":
		w.WriteString("length(")
		w.expr(f.Args[0])
		w.WriteString(")")
		return
	case w.d == DuckDB && f.Name == "if":
		w.WriteString("(case when ")
		w.expr(f.Args[0])
		w.WriteString(" then ")
		w.expr(f.Args[1])
		w.WriteString(" else ")
		w.expr(f.Args[2])
		w.WriteString(" end)")
		return
	}
	w.WriteString(f.Name + "(")
	w.list(f.Args)
	w.WriteString(")")
}

// Case is CASE WHEN Whens[i] THEN Thens[i] ... ELSE Else END, or with an
// Operand the simple form CASE Operand WHEN Whens[i] THEN ..., whose WHENs
// are values compared with = (a NULL WHEN never matches).
type Case struct {
	Operand      Expr // nil: the searched form
	Whens, Thens []Expr
	Else         Expr // nil: NULL
	T            Type
}

func (c *Case) Type() Type { return c.T }
func (c *Case) kids() []Expr {
	var k []Expr
	if c.Operand != nil {
		k = append(k, c.Operand)
	}
	k = append(append(k, c.Whens...), c.Thens...)
	if c.Else != nil {
		k = append(k, c.Else)
	}
	return k
}
func (c *Case) write(w *writer) {
	w.WriteString("(case")
	if c.Operand != nil {
		w.WriteString(" ")
		w.expr(c.Operand)
	}
	for i := range c.Whens {
		w.WriteString(" when ")
		w.expr(c.Whens[i])
		w.WriteString(" then ")
		w.expr(c.Thens[i])
	}
	if c.Else != nil {
		w.WriteString(" else ")
		w.expr(c.Else)
	}
	w.WriteString(" end)")
}

// Cast converts E to T (Decimal: decimal(Prec, Scale)).
type Cast struct {
	E           Expr
	T           Type
	Prec, Scale int
}

func (c *Cast) Type() Type   { return c.T }
func (c *Cast) kids() []Expr { return []Expr{c.E} }
func (c *Cast) write(w *writer) {
	w.WriteString("cast(")
	w.expr(c.E)
	w.WriteString(" as ")
	switch {
	case c.T == Int && w.d == MySQL:
		w.WriteString("signed")
	case c.T == Int:
		w.WriteString("bigint")
	case c.T == String && w.d == MySQL:
		w.WriteString("char")
	case c.T == String:
		w.WriteString("varchar")
	case c.T == Decimal:
		fmt.Fprintf(w, "decimal(%d,%d)", c.Prec, c.Scale)
	case c.T == Date:
		w.WriteString("date")
	case c.T == Float:
		w.WriteString("double")
	}
	w.WriteString(")")
}

// DateAdd is E + INTERVAL N Unit (day, week, month, quarter, year), in
// MySQL written as E + INTERVAL, E - INTERVAL (Form "-", N negated),
// DATE_ADD or DATE_SUB (Form "date_add", "date_sub"; the latter negates).
type DateAdd struct {
	E    Expr
	N    int
	Unit string
	Form string // "", "-", "date_add" or "date_sub"
}

func (d *DateAdd) Type() Type   { return Date }
func (d *DateAdd) kids() []Expr { return []Expr{d.E} }
func (d *DateAdd) write(w *writer) {
	n := d.N
	if d.Form == "-" || d.Form == "date_sub" {
		n = -n // the value is always E + N units; the form only spells it
	}
	if w.d == DuckDB {
		// DuckDB's date + interval is a timestamp.
		w.WriteString("cast(")
		w.expr(d.E)
		fmt.Fprintf(w, " + interval (%d) %s as date)", d.N, d.Unit)
		return
	}
	switch d.Form {
	case "date_add", "date_sub":
		w.WriteString(d.Form + "(")
		w.expr(d.E)
		fmt.Fprintf(w, ", interval %d %s)", n, d.Unit)
	case "-":
		w.WriteString("(")
		w.expr(d.E)
		fmt.Fprintf(w, " - interval %d %s)", n, d.Unit)
	default:
		w.WriteString("(")
		w.expr(d.E)
		fmt.Fprintf(w, " + interval %d %s)", n, d.Unit)
	}
}

// Agg is an aggregate call; Arg nil is count(*). group_concat takes Order
// and Sep: GROUP_CONCAT(x ORDER BY ... SEPARATOR s) in MySQL,
// string_agg(CAST(x AS VARCHAR), s ORDER BY ...) in DuckDB.
type Agg struct {
	Fn       string
	Distinct bool
	Arg      Expr
	// More are COUNT(DISTINCT Arg, More...)'s further arguments: the
	// distinct combinations without a NULL. DuckDB counts rows of them.
	More  []Expr
	Order []OrderItem
	Sep   string
	T     Type
}

func (a *Agg) Type() Type { return a.T }
func (a *Agg) kids() []Expr {
	if a.Arg == nil {
		return nil
	}
	k := append([]Expr{a.Arg}, a.More...)
	for _, o := range a.Order {
		k = append(k, o.E)
	}
	return k
}
func (a *Agg) write(w *writer) {
	if a.Fn == "group_concat" {
		a.writeConcat(w)
		return
	}
	w.WriteString(a.Fn + "(")
	switch {
	case a.Arg == nil:
		w.WriteString("*")
	case len(a.More) > 0 && w.d == DuckDB:
		all := append([]Expr{a.Arg}, a.More...)
		w.WriteString("distinct case when ")
		for i, e := range all {
			if i > 0 {
				w.WriteString(" and ")
			}
			w.expr(&IsNull{E: e, Not: true})
		}
		w.WriteString(" then row(")
		w.list(all)
		w.WriteString(") end")
	case len(a.More) > 0:
		w.WriteString("distinct ")
		w.list(append([]Expr{a.Arg}, a.More...))
	case a.Distinct:
		w.WriteString("distinct ")
		w.expr(a.Arg)
	default:
		w.expr(a.Arg)
	}
	w.WriteString(")")
}

func (a *Agg) writeConcat(w *writer) {
	order := func() {
		if len(a.Order) == 0 {
			return
		}
		w.WriteString(" order by ")
		for i, o := range a.Order {
			if i > 0 {
				w.WriteString(", ")
			}
			if w.d == DuckDB && a.Distinct && o.E.Type() != String {
				// DuckDB orders a DISTINCT aggregate only by its argument,
				// the text: a date's text sorts as the date.
				w.expr(&Cast{E: o.E, T: String})
			} else {
				w.expr(o.E)
			}
			if o.Desc {
				w.WriteString(" desc")
			}
		}
	}
	distinct := ""
	if a.Distinct {
		distinct = "distinct "
	}
	if w.d == DuckDB {
		w.WriteString("string_agg(" + distinct)
		if a.Arg.Type() == String {
			w.expr(a.Arg)
		} else {
			w.expr(&Cast{E: a.Arg, T: String})
		}
		w.WriteString(", " + quote(a.Sep, w.d))
		order()
		w.WriteString(")")
		return
	}
	w.WriteString("group_concat(" + distinct)
	w.expr(a.Arg)
	order()
	w.WriteString(" separator " + quote(a.Sep, w.d) + ")")
}

// OrderItem is one ORDER BY key of a window.
type OrderItem struct {
	E    Expr
	Desc bool
}

// Window is a window function, with SQL's default frame unless Frame is
// set.
type Window struct {
	Fn        string // rank, dense_rank, row_number, ntile, lag, lead, first_value, last_value, or an aggregate
	Arg       Expr   // nil for the ranking functions and count(*)
	More      []Expr // arguments after Arg: lag/lead's offset and default, ntile's count
	Partition []Expr
	Order     []OrderItem
	// Frame is the frame clause as written in both dialects ("rows
	// between 2 preceding and current row"); empty: the default.
	// DuckFrame, when set, is DuckDB's spelling of it.
	Frame, DuckFrame string
	T                Type
}

func (x *Window) Type() Type { return x.T }
func (x *Window) kids() []Expr {
	var k []Expr
	if x.Arg != nil {
		k = append(k, x.Arg)
	}
	k = append(k, x.More...)
	k = append(k, x.Partition...)
	for _, o := range x.Order {
		k = append(k, o.E)
	}
	return k
}
func (x *Window) write(w *writer) {
	w.WriteString(x.Fn + "(")
	switch {
	case x.Arg != nil:
		w.expr(x.Arg)
		for _, m := range x.More {
			w.WriteString(", ")
			w.expr(m)
		}
	case x.Fn == "count":
		w.WriteString("*")
	default:
		w.list(x.More)
	}
	w.WriteString(") over (")
	if len(x.Partition) > 0 {
		w.WriteString("partition by ")
		w.list(x.Partition)
	}
	if len(x.Order) > 0 {
		if len(x.Partition) > 0 {
			w.WriteString(" ")
		}
		w.WriteString("order by ")
		for i, o := range x.Order {
			if i > 0 {
				w.WriteString(", ")
			}
			w.expr(o.E)
			if o.Desc {
				w.WriteString(" desc")
			}
		}
	}
	switch {
	case w.d == DuckDB && x.DuckFrame != "":
		w.WriteString(" " + x.DuckFrame)
	case x.Frame != "":
		w.WriteString(" " + x.Frame)
	}
	w.WriteString(")")
}

// SubKind is the form of a subquery expression.
type SubKind uint8

// Subquery forms.
const (
	Scalar SubKind = iota // (select one value)
	Exists                // [not] exists (select ...)
	In                    // E [not] in (select ...)
)

// Sub is a subquery used as an expression.
type Sub struct {
	Kind SubKind
	E    Expr // In: the left operand
	Not  bool
	Q    *Select
	// Set replaces Q with a set operation of one-column blocks (In only).
	Set *SetOp
	T   Type
}

func (s *Sub) Type() Type { return s.T }
func (s *Sub) kids() []Expr {
	if s.E != nil {
		return []Expr{s.E}
	}
	return nil
}
func (s *Sub) write(w *writer) {
	w.WriteString("(")
	switch s.Kind {
	case Exists:
		if s.Not {
			w.WriteString("not ")
		}
		w.WriteString("exists (")
	case In:
		w.expr(s.E)
		if s.Not {
			w.WriteString(" not")
		}
		w.WriteString(" in (")
	default:
		w.WriteString("(")
	}
	if s.Set != nil {
		s.Set.write(w)
	} else {
		s.Q.write(w, true)
	}
	w.WriteString("))")
}

// and joins conjuncts, skipping nils.
func and(es ...Expr) Expr {
	var out Expr
	for _, e := range es {
		switch {
		case e == nil:
		case out == nil:
			out = e
		default:
			out = &Bin{Op: "and", L: out, R: e, T: Bool}
		}
	}
	return out
}

// inexact reports whether e's value may differ between MySQL and DuckDB
// beyond the comparator's tolerance if anything were computed from it: a
// division, AVG, STDDEV_SAMP or VAR_SAMP, or a SUM of doubles (its value
// depends on the order of addition). A double made from an exact value
// (CAST(decimal AS DOUBLE), times -1) is the same nearest double in both.
func inexact(e Expr) bool {
	found := false
	Walk(e, func(x Expr) bool {
		switch n := x.(type) {
		case *Bin:
			found = found || n.Op == "/"
		case *Agg:
			found = found || n.Fn == "avg" || n.Fn == "stddev_samp" || n.Fn == "var_samp" ||
				(n.Fn == "sum" && n.Arg != nil && n.Arg.Type() == Float)
		}
		return !found
	})
	return found
}

// hasAgg reports an aggregate outside subqueries and window functions.
func hasAgg(e Expr) bool {
	found := false
	Walk(e, func(x Expr) bool {
		switch x.(type) {
		case *Agg:
			found = true
		case *Window:
			return false
		}
		return !found
	})
	return found
}

// hasWindow reports a window function outside subqueries.
func hasWindow(e Expr) bool {
	found := false
	Walk(e, func(x Expr) bool {
		if _, ok := x.(*Window); ok {
			found = true
		}
		return !found
	})
	return found
}

// refsColumn reports a column reference outside subqueries.
func refsColumn(e Expr) bool {
	found := false
	Walk(e, func(x Expr) bool {
		if _, ok := x.(*Col); ok {
			found = true
		}
		return !found
	})
	return found
}
