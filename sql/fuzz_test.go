package sql_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/fsql-dev/fsql/connectors/hive"
	"github.com/fsql-dev/fsql/internal/slt"
	"github.com/fsql-dev/fsql/planner"
	"github.com/fsql-dev/fsql/sql"
)

// fuzzTables is the catalog FuzzPlan binds against: every column type,
// NULLs, and a Hive-partitioned table.
const fuzzTables = `
table t (a int, b bigint, c decimal(7,2), d varchar, e date, f double, g boolean)
1	10	1.50	x	2000-01-01	1.5	true
2	20	2.50	y	2000-02-01	2.5	false
NULL	NULL	NULL	NULL	NULL	NULL	NULL

table u (a int, d varchar, n bigint)
1	x	100
3	z	300

partitioned table p (k int, day date, v varchar) by (k, day)
1	2001-01-01	one
2	2001-01-02	two
NULL	2001-01-03	none
`

// fuzzSeeds are representative queries: the fuzzer mutates them.
var fuzzSeeds = []string{
	"select a, b + 1, c * 2, upper(d) from t where e > '2000-01-15' and g",
	"select t.a, u.n, p.v from t join u on t.a = u.a left join p on p.k = t.a where t.f > 1",
	"select d, e, sum(c), count(*), grouping(d) from t group by d, e with rollup having count(*) > 0 order by 1, 2",
	"select a, row_number() over (partition by g order by b desc), sum(f) over (partition by d order by a) from t",
	"select a from t where b = (select max(n) from u) and a in (select a from u where u.n > 1)",
	"select * from t where exists (select 1 from u where u.a = t.a) and not exists (select 1 from p where p.k = t.a)",
	"select a, d from t union all select a, d from u union select k, v from p order by 1 limit 3",
	"with x as (select a, count(*) as n from t group by a), y as (select * from x where n > 0) select y.a, u.n from y join u using (a)",
	"select case when a > 1 then 'big' when a is null then null else 'small' end, coalesce(d, 'none'), cast(b as char), cast(d as date) from t",
	"select count(distinct t.d), avg(c), min(e), max(f), stddev_samp(b) from t cross join u",
	"select k, day, count(*) from p where day between '2001-01-01' and '2001-01-02' group by k, day order by k desc limit 10 offset 1",
	"explain select a, (select count(*) from u where u.a = t.a) from t order by a",
	"select distinct a % 2, d like 'x%', year(e), date_add(e, interval 1 day) from t",
	"select t1.a from t t1, t t2, u where t1.a = t2.a and t2.a = u.a and t1.b > u.n",
	"select rank() over (order by a), dense_rank() over (partition by g order by a), a from t",
}

var (
	fuzzOnce sync.Once
	fuzzCat  *hive.Catalog
	fuzzErr  error
)

// fuzzCatalog writes the fuzz tables once per test binary: every fuzz
// iteration reuses the same catalog, so iterations stay fast.
func fuzzCatalog(f *testing.F) *hive.Catalog {
	f.Helper()
	dir := f.TempDir()
	fuzzOnce.Do(func() {
		var file *slt.File
		file, fuzzErr = slt.Parse("fuzz tables", strings.NewReader(fuzzTables))
		if fuzzErr != nil {
			return
		}
		if fuzzErr = slt.WriteTables(dir, file.Tables()); fuzzErr != nil {
			return
		}
		fuzzCat, fuzzErr = hive.Open(dir)
	})
	if fuzzErr != nil {
		f.Fatal(fuzzErr)
	}
	return fuzzCat
}

// FuzzPlan parses, binds, optimizes and physically plans arbitrary text.
// Errors are fine; a panic is a bug. The planner's helpers are called
// without the Engine's recover on purpose, so panics surface here. `go
// test` runs the seeds; `go test -fuzz FuzzPlan ./sql/` searches further.
func FuzzPlan(f *testing.F) {
	cat := fuzzCatalog(f)
	for _, q := range fuzzSeeds {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, text string) {
		stmts, err := sql.Parse(text)
		if err != nil {
			return
		}
		for _, stmt := range stmts {
			st, err := sql.NewBinder(cat).Bind(stmt)
			if err != nil {
				continue
			}
			p, err := planner.Optimize(st.Plan, &planner.Context{})
			if err != nil {
				continue
			}
			_, _ = planner.Physical(p, planner.PhysicalConfig{MaxParallelism: 128, BroadcastThreshold: 10 << 20})
		}
	})
}

// FuzzPlanGrammar builds a query from the fuzzer's bytes with a small
// SQL grammar over the fuzz tables, so nearly every input parses and binds
// and the fuzzer spends its time in the binder and planner rather than in
// the parser's error paths. The same no-panic rule as FuzzPlan applies.
func FuzzPlanGrammar(f *testing.F) {
	cat := fuzzCatalog(f)
	for _, seed := range [][]byte{
		{}, {1, 2, 3, 4, 5, 6, 7, 8}, {9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9},
		{255, 0, 255, 0, 255, 0, 255, 0, 3, 3, 3}, []byte("grammar seed: joins, subqueries"),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		q := (&queryGen{data: data}).query(0)
		stmts, err := sql.Parse(q)
		if err != nil {
			return
		}
		st, err := sql.NewBinder(cat).Bind(stmts[0])
		if err != nil {
			return
		}
		p, err := planner.Optimize(st.Plan, &planner.Context{})
		if err != nil {
			return
		}
		_, _ = planner.Physical(p, planner.PhysicalConfig{MaxParallelism: 128, BroadcastThreshold: 10 << 20})
	})
}

// queryGen turns bytes into SQL text; once the bytes run out every choice
// is the first alternative, so generation always ends.
type queryGen struct {
	data []byte
	pos  int
}

func (g *queryGen) pick(n int) int {
	if g.pos >= len(g.data) || n <= 1 {
		return 0
	}
	b := g.data[g.pos]
	g.pos++
	return int(b) % n
}

func (g *queryGen) one(alts ...string) string { return alts[g.pick(len(alts))] }

// fuzz table columns by alias; every FROM uses aliases x, y, z.
var fuzzCols = map[string][]string{
	"t": {"a", "b", "c", "d", "e", "f", "g"},
	"u": {"a", "d", "n"},
	"p": {"k", "day", "v"},
}

type fromItem struct{ alias, table string }

func (g *queryGen) query(depth int) string {
	var b strings.Builder
	if depth == 0 && g.pick(4) == 0 {
		b.WriteString("with w as (" + g.simple(depth+1) + ") ")
	}
	b.WriteString(g.simple(depth))
	for i := 0; i < 3 && g.pick(5) == 1; i++ {
		b.WriteString(g.one(" union all ", " union ") + g.simple(depth+1))
	}
	if g.pick(2) == 0 {
		b.WriteString(" order by 1" + g.one("", " desc", ", 2"))
	}
	if g.pick(2) == 0 {
		b.WriteString(g.one(" limit 3", " limit 0", " limit 2 offset 1"))
	}
	return b.String()
}

// simple is one SELECT block with one or two output columns (so unions of
// blocks line up often enough).
func (g *queryGen) simple(depth int) string {
	var from []fromItem
	var b strings.Builder
	tables := []string{"t", "u", "p"}
	first := fromItem{"x", tables[g.pick(3)]}
	from = append(from, first)
	fromText := first.table + " x"
	if depth > 0 && g.pick(3) == 0 {
		fromText = "(select * from " + first.table + ") x"
	}
	for i, alias := range []string{"y", "z"} {
		if g.pick(2+i) != 0 {
			break
		}
		it := fromItem{alias, tables[g.pick(3)]}
		from = append(from, it)
		on := g.col(from[:len(from)-1]) + " " + g.one("=", "<", "<=>", "!=") + " " + g.colOf(it)
		fromText += g.one(" join ", " left join ", " right join ", " cross join ") + it.table + " " + alias
		if !strings.HasSuffix(fromText, "cross join "+it.table+" "+alias) {
			fromText += " on " + on
		}
	}
	grouped := g.pick(3) == 0
	var groupCols []string
	if grouped {
		for n := 1 + g.pick(2); n > 0; n-- {
			groupCols = append(groupCols, g.col(from))
		}
	}
	b.WriteString("select ")
	if g.pick(6) == 0 {
		b.WriteString("distinct ")
	}
	for i := 0; i < 1+g.pick(2); i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		if grouped {
			b.WriteString(g.one(groupCols[0], g.agg(from), groupCols[len(groupCols)-1]+" + 1", "grouping("+groupCols[0]+")"))
		} else {
			b.WriteString(g.expr(from, depth))
		}
	}
	b.WriteString(" from " + fromText)
	if g.pick(2) == 0 {
		b.WriteString(" where " + g.pred(from, depth))
	}
	if grouped {
		b.WriteString(" group by " + strings.Join(groupCols, ", "))
		if g.pick(3) == 0 {
			b.WriteString(" with rollup")
		}
		if g.pick(3) == 0 {
			b.WriteString(" having " + g.agg(from) + " > 1")
		}
	}
	return b.String()
}

func (g *queryGen) colOf(it fromItem) string {
	cols := fuzzCols[it.table]
	return it.alias + "." + cols[g.pick(len(cols))]
}

func (g *queryGen) col(from []fromItem) string { return g.colOf(from[g.pick(len(from))]) }

func (g *queryGen) agg(from []fromItem) string {
	c := g.col(from)
	return g.one("count(*)", "sum("+c+")", "min("+c+")", "max("+c+")", "avg("+c+")", "count(distinct "+c+")", "stddev_samp("+c+")")
}

func (g *queryGen) expr(from []fromItem, depth int) string {
	c := g.col(from)
	switch g.pick(12) {
	case 0, 1, 2:
		return c
	case 3:
		return c + " " + g.one("+", "-", "*", "/", "%", "div") + " " + g.one("1", "2.5", "null", g.col(from))
	case 4:
		return g.one("1", "'s'", "null", "1.25", "date '2000-01-01'", "true")
	case 5:
		return "case when " + g.pred(from, depth) + " then " + c + " else " + g.one("null", c, "0") + " end"
	case 6:
		return "cast(" + c + " as " + g.one("signed", "char", "date", "decimal(10,2)", "double") + ")"
	case 7:
		return g.one("row_number()", "rank()", "dense_rank()", "sum("+c+")", "count(*)") + " over (" +
			g.one("", "partition by "+g.col(from), "order by "+g.col(from), "partition by "+g.col(from)+" order by "+g.col(from)+" desc") + ")"
	case 8:
		if depth < 2 {
			return "(select " + g.one("max", "min", "count") + "(q.a) from u q" + g.one("", " where q.a = "+c) + ")"
		}
		return c
	case 9:
		return g.one("coalesce", "ifnull", "nullif") + "(" + c + ", " + g.col(from) + ")"
	case 10:
		return g.one("upper", "length", "abs", "year", "isnull") + "(" + c + ")"
	default:
		return c + " " + g.one("like 'x%'", "is null", "in (1, 2)", "between 1 and 2")
	}
}

func (g *queryGen) pred(from []fromItem, depth int) string {
	c := g.col(from)
	switch g.pick(8) {
	case 0, 1:
		return c + " " + g.one("=", "<>", ">", "<=", "<=>") + " " + g.one("1", "'x'", "null", g.col(from), "date '2000-01-15'")
	case 2:
		return "(" + g.pred(from, depth) + g.one(" and ", " or ") + g.pred(from, depth) + ")"
	case 3:
		return "not " + g.pred(from, depth)
	case 4:
		if depth < 2 {
			return c + g.one(" in ", " not in ") + "(" + g.subquery(from, depth) + ")"
		}
	case 5:
		if depth < 2 {
			return g.one("exists", "not exists") + " (" + g.subquery(from, depth) + ")"
		}
	case 6:
		if depth < 2 {
			return c + " " + g.one("=", ">") + " (select " + g.one("max", "min", "count") + "(q.a) from t q" + g.one("", " where q.a = "+c, " where q.d = "+g.col(from)) + ")"
		}
	}
	return c + " is not null"
}

// subquery is a one-column subquery, correlated with the outer block or
// not.
func (g *queryGen) subquery(outer []fromItem, depth int) string {
	tbl := []string{"t", "u"}[g.pick(2)]
	q := "select q.a from " + tbl + " q where "
	switch g.pick(3) {
	case 0:
		q += "q.a = " + g.col(outer)
	case 1:
		q += "q.a > 1 and q.d = " + g.col(outer)
	default:
		q += "q.d is not null"
	}
	if depth == 0 && g.pick(3) == 0 {
		q += " and q.a in (" + g.simple(depth+2) + ")"
	}
	return q
}

// TestFuzzSeedsPlan makes sure the seeds reach the planner: a seed that no
// longer binds would silently stop exercising it.
func TestFuzzSeedsPlan(t *testing.T) {
	file, err := slt.Parse("fuzz tables", strings.NewReader(fuzzTables))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := slt.WriteTables(dir, file.Tables()); err != nil {
		t.Fatal(err)
	}
	cat, err := hive.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range fuzzSeeds {
		stmts, err := sql.Parse(q)
		if err != nil {
			t.Errorf("%s: %v", q, err)
			continue
		}
		st, err := sql.NewBinder(cat).Bind(stmts[0])
		if err != nil {
			t.Errorf("%s: %v", q, err)
			continue
		}
		p, err := planner.Optimize(st.Plan, &planner.Context{})
		if err != nil {
			t.Errorf("%s: %v", q, err)
			continue
		}
		if _, err := planner.Physical(p, planner.PhysicalConfig{MaxParallelism: 128, BroadcastThreshold: 10 << 20}); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
}
