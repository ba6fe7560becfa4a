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
