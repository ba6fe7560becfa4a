package querygen

import (
	"strings"
	"testing"

	"github.com/fsql-dev/fsql/sql"
)

// TestRenderDialects pins the DuckDB normalisations the package doc
// promises, next to the MySQL text fsql runs.
func TestRenderDialects(t *testing.T) {
	a := &Col{Qual: "t", Name: "a", T: Int}
	c := &Col{Qual: "t", Name: "c", T: Decimal}
	s := &Col{Qual: "t", Name: "s", T: String}
	d := &Col{Qual: "t", Name: "d", T: Date}
	two := &Lit{Val: "2", T: Int}
	for _, tc := range []struct {
		e             Expr
		mysql, duckdb string
	}{
		{&Bin{Op: "/", L: c, R: a, T: Float}, "(t.c / t.a)", "(t.c / nullif(t.a, 0))"},
		{&Bin{Op: "%", L: a, R: two, T: Int}, "(t.a % 2)", "(t.a % nullif(2, 0))"},
		{&Bin{Op: "div", L: a, R: two, T: Int}, "(t.a div 2)", "(t.a // nullif(2, 0))"},
		{&Bin{Op: "*", L: a, R: two, T: Int}, "(t.a * 2)", "(cast(t.a as bigint) * 2)"},
		{&Bin{Op: "+", L: c, R: c, T: Decimal}, "(t.c + t.c)", "(t.c + t.c)"},
		{&Bin{Op: "<=>", L: a, R: two, T: Bool}, "(t.a <=> 2)", "(t.a is not distinct from 2)"},
		{&Func{Name: "concat", Args: []Expr{s, s}, T: String}, "concat(t.s, t.s)", "(t.s || t.s)"},
		{&Func{Name: "if", Args: []Expr{&IsNull{E: a}, a, two}, T: Int}, "if((t.a is null), t.a, 2)", "(case when (t.a is null) then t.a else 2 end)"},
		{&DateAdd{E: d, N: -3, Unit: "month"}, "(t.d + interval -3 month)", "cast(t.d + interval (-3) month as date)"},
		{&Cast{E: c, T: Int}, "cast(t.c as signed)", "cast(t.c as bigint)"},
		{&Cast{E: a, T: String}, "cast(t.a as char)", "cast(t.a as varchar)"},
		{&Cast{E: a, T: Decimal, Prec: 12, Scale: 2}, "cast(t.a as decimal(12,2))", "cast(t.a as decimal(12,2))"},
		{&Lit{Val: `it's a \ b`, T: String}, `'it''s a \\ b'`, `'it''s a \ b'`},
		{&Lit{Val: "2000-02-29", T: Date}, "date '2000-02-29'", "date '2000-02-29'"},
		{&Lit{Val: "-1.5", T: Decimal}, "(-1.5)", "(-1.5)"},
		{&Lit{Null: true, T: Int}, "null", "null"},
		{&Like{E: s, Pattern: "a%", Not: true}, "(t.s not like 'a%')", "(t.s not like 'a%')"},
		{&Window{Fn: "rank", Partition: []Expr{a}, Order: []OrderItem{{E: c, Desc: true}}, T: Int},
			"rank() over (partition by t.a order by t.c desc)", "rank() over (partition by t.a order by t.c desc)"},
		{&Window{Fn: "count", T: Int}, "count(*) over ()", "count(*) over ()"},
		{&Agg{Fn: "group_concat", Arg: a, Order: []OrderItem{{E: s, Desc: true}, {E: a}}, Sep: "", T: String},
			"group_concat(t.a order by t.s desc, t.a separator '')", "string_agg(cast(t.a as varchar), '' order by t.s desc, t.a)"},
		{&Agg{Fn: "group_concat", Distinct: true, Arg: s, Order: []OrderItem{{E: s}}, Sep: ",", T: String},
			"group_concat(distinct t.s order by t.s separator ',')", "string_agg(distinct t.s, ',' order by t.s)"},
		{&Agg{Fn: "group_concat", Distinct: true, Arg: d, Order: []OrderItem{{E: d, Desc: true}}, Sep: ",", T: String},
			"group_concat(distinct t.d order by t.d desc separator ',')", "string_agg(distinct cast(t.d as varchar), ',' order by cast(t.d as varchar) desc)"},
		{&Func{Name: "dayofweek", Args: []Expr{d}, T: Int}, "dayofweek(t.d)", "(dayofweek(t.d) + 1)"},
		{&Func{Name: "weekday", Args: []Expr{d}, T: Int}, "weekday(t.d)", "(isodow(t.d) - 1)"},
		{&Func{Name: "locate", Args: []Expr{&Lit{Val: "b", T: String}, s}, T: Int}, "locate('b', t.s)", "instr(t.s, 'b')"},
		{&Func{Name: "char_length", Args: []Expr{s}, T: Int}, "char_length(t.s)", "length(t.s)"},
		{&Agg{Fn: "count", Distinct: true, Arg: a, More: []Expr{s}, T: Int}, "count(distinct t.a, t.s)",
			"count(distinct case when (t.a is not null) and (t.s is not null) then row(t.a, t.s) end)"},
		{&Truth{E: &Bin{Op: "=", L: a, R: two, T: Bool}, False: true, Not: true}, "((t.a = 2) is not false)", "((t.a = 2) is not false)"},
		{&DateAdd{E: d, N: 2, Unit: "week", Form: "-"}, "(t.d - interval -2 week)", "cast(t.d + interval (2) week as date)"},
		{&DateAdd{E: d, N: 5, Unit: "day", Form: "date_sub"}, "date_sub(t.d, interval -5 day)", "cast(t.d + interval (5) day as date)"},
		{&DateAdd{E: d, N: -1, Unit: "year", Form: "date_add"}, "date_add(t.d, interval -1 year)", "cast(t.d + interval (-1) year as date)"},
		{&Case{Operand: a, Whens: []Expr{two, &Lit{Null: true, T: Int}}, Thens: []Expr{c, &Lit{Null: true, T: Decimal}}, T: Decimal},
			"(case t.a when 2 then t.c when null then null end)", "(case t.a when 2 then t.c when null then null end)"},
		{&Window{Fn: "sum", Arg: c, Order: []OrderItem{{E: d}}, Frame: "range between interval 3 day preceding and current row",
			DuckFrame: "range between interval (3) day preceding and current row", T: Decimal},
			"sum(t.c) over (order by t.d range between interval 3 day preceding and current row)",
			"sum(t.c) over (order by t.d range between interval (3) day preceding and current row)"},
		{&Sub{Kind: In, E: a, Not: true, Set: &SetOp{Op: "union", Left: &Select{Items: []Item{{c}}, From: FromItem{Table: "x", Alias: "t"}},
			Right: &Select{Items: []Item{{c}}, From: FromItem{Table: "y", Alias: "t"}}}, T: Bool},
			"(t.a not in (select t.c as c0 from x as t union select t.c as c0 from y as t))",
			"(t.a not in (select cast(t.c as decimal(38,10)) as c0 from x as t union select cast(t.c as decimal(38,10)) as c0 from y as t))"},
	} {
		if got := Render(tc.e, MySQL); got != tc.mysql {
			t.Errorf("MySQL: got %s, want %s", got, tc.mysql)
		}
		if got := Render(tc.e, DuckDB); got != tc.duckdb {
			t.Errorf("DuckDB: got %s, want %s", got, tc.duckdb)
		}
	}
	q := &Select{Items: []Item{{a}, {&Agg{Fn: "count", T: Int}}}, From: FromItem{Table: "x", Alias: "t"}, GroupBy: []Expr{a}, Rollup: true,
		OrderBy: []OrderKey{{Pos: 0, Desc: true}}, Limit: 3}
	if got, want := q.SQL(MySQL), "select t.a as c0, count(*) as c1 from x as t group by t.a with rollup order by 1 desc limit 3"; got != want {
		t.Errorf("MySQL rollup: got %s, want %s", got, want)
	}
	if got, want := q.SQL(DuckDB), "select t.a as c0, count(*) as c1 from x as t group by rollup(t.a) order by 1 desc limit 3"; got != want {
		t.Errorf("DuckDB rollup: got %s, want %s", got, want)
	}
	// (l op r) op r2 keeps its shape whatever a dialect's precedence of
	// INTERSECT; a derived set operation has no ORDER BY of its own.
	blk := func(tbl string) *Select { return &Select{Items: []Item{{a}}, From: FromItem{Table: tbl, Alias: "t"}} }
	set := &SetOp{Op: "intersect", LeftSet: &SetOp{Op: "union all", Left: blk("x"), Right: blk("y")}, Right: blk("z")}
	outer := &Select{Items: []Item{{&Col{Qual: "d", Name: "c0", T: Int}}}, From: FromItem{Set: set, Alias: "d"}, OrderBy: []OrderKey{{Pos: 0}}, Limit: 2}
	if got, want := outer.SQL(MySQL), "select d.c0 as c0 from ((select t.a as c0 from x as t union all select t.a as c0 from y as t) intersect select t.a as c0 from z as t) as d order by 1 limit 2"; got != want {
		t.Errorf("derived set operation: got %s, want %s", got, want)
	}
}

func parses(t *testing.T, what, text string) {
	t.Helper()
	stmts, err := sql.Parse(text)
	if err != nil || len(stmts) != 1 {
		t.Fatalf("%s does not parse as one statement (%v):\n%s", what, err, text)
	}
}

// TestGenerate: the same seed gives the same statements; every statement
// and every metamorphic variant parses; the features all show up.
func TestGenerate(t *testing.T) {
	ds := Small(1)
	if err := ds.Schema.Check(); err != nil {
		t.Fatal(err)
	}
	g1 := New(ds.Schema, NewRand(7), Options{})
	g2 := New(ds.Schema, NewRand(7), Options{})
	seen := map[string]int{}
	features := []string{" join ", " left join ", " right join ", " cross join ", " group by ", " with rollup", " having ",
		" over (", "exists (", " in (select", "(select", " union ", " intersect ", " except ", "with t", " limit ", "distinct ",
		" <=> ", "group_concat(", " separator ", "lpad(", "replace(", "concat_ws(", "dayofweek(", "then ((select", "1000000000000",
		"grouping(", "(case t", " - interval ", "date_sub(", "locate(",
		") as t", ") intersect ", "union select", "exists (select count(*)", "order by 1 limit 1)", "then null", "count(distinct t", " is not true", " is false", ")) over (", "cast(null as "}
	for i := 0; i < 1000; i++ {
		q1, q2 := g1.Query(), g2.Query()
		text := q1.SQL(MySQL)
		if text != q2.SQL(MySQL) {
			t.Fatalf("query %d differs between two generators of one seed", i)
		}
		parses(t, "a generated statement", text)
		for _, f := range features {
			if strings.Contains(text, f) {
				seen[f]++
			}
		}
		sel, ok := q1.(*Select)
		if !ok {
			continue
		}
		if c, ok := g1.TLP(sel); ok {
			seen[c.Kind]++
			parses(t, c.Kind+" A", c.A)
			parses(t, c.Kind+" B", c.B)
			g2.TLP(q2.(*Select)) // keep the two generators in step
		}
		c := g1.NoREC(sel)
		g2.NoREC(q2.(*Select))
		parses(t, "norec A", c.A)
		parses(t, "norec B", c.B)
	}
	for _, f := range append(features, "tlp-where", "tlp-group", "tlp-agg", "tlp-having") {
		if seen[f] == 0 {
			t.Errorf("1000 statements without %q", f)
		}
	}
}

// TestBytesSource: any bytes make a statement, and running out of bytes
// ends generation with the simplest choices.
func TestBytesSource(t *testing.T) {
	ds := Small(2)
	if got := New(ds.Schema, &BytesSource{}, Options{}).Query().SQL(MySQL); !strings.HasPrefix(got, "select ") {
		t.Errorf("no bytes: %s", got)
	}
	r := NewRand(3)
	for i := 0; i < 200; i++ {
		data := make([]byte, r.Intn(200))
		for j := range data {
			data[j] = byte(r.Intn(256))
		}
		parses(t, "a statement from bytes", New(ds.Schema, &BytesSource{Data: data}, Options{}).Query().SQL(MySQL))
	}
}

// TestInexactOnlyOnTop: values the two engines compute differently
// (division, AVG) never reach a filter, an ORDER BY, a window or another
// aggregate, where they would change which rows come back.
func TestInexactOnlyOnTop(t *testing.T) {
	ds := Small(3)
	g := New(ds.Schema, NewRand(11), Options{})
	for i := 0; i < 500; i++ {
		q, ok := g.Query().(*Select)
		if !ok {
			continue
		}
		var where []Expr
		where = append(where, q.Where, q.Having)
		where = append(where, q.GroupBy...)
		where = append(where, q.JoinConds...)
		for _, j := range q.Joins {
			where = append(where, j.On)
		}
		for _, e := range where {
			if e != nil && inexact(e) {
				t.Fatalf("inexact value under a filter or group key: %s", q.SQL(MySQL))
			}
		}
		for _, k := range q.OrderBy {
			if inexact(q.Items[k.Pos].E) {
				t.Fatalf("ORDER BY an inexact column: %s", q.SQL(MySQL))
			}
		}
		for _, it := range q.Items {
			Walk(it.E, func(x Expr) bool {
				switch n := x.(type) {
				case *Agg:
					if n.Arg != nil && inexact(n.Arg) {
						t.Fatalf("aggregate of an inexact value: %s", q.SQL(MySQL))
					}
				case *Window:
					for _, k := range n.kids() {
						if inexact(k) {
							t.Fatalf("window over an inexact value: %s", q.SQL(MySQL))
						}
					}
				}
				return true
			})
		}
	}
}

func TestSchemaCheck(t *testing.T) {
	s := Small(1).Schema
	s.Links = append(s.Links, Link{From: "f", FromCol: "nope", To: "d1", ToCol: "k1"})
	if err := s.Check(); err == nil {
		t.Error("a link to a missing column passed")
	}
	s = Small(1).Schema
	s.Links = append(s.Links, Link{From: "f", FromCol: "s", To: "d1", ToCol: "k1"})
	if err := s.Check(); err == nil {
		t.Error("a link between a string and an int passed")
	}
}
