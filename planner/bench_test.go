package planner_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fsql-dev/fsql/connectors/hive"
	"github.com/fsql-dev/fsql/planner"
	"github.com/fsql-dev/fsql/runtime"
	"github.com/fsql-dev/fsql/sql"
)

// Planning must stay about linear in the size of the statement on the
// wide and deep shapes machine-written SQL takes. Each benchmark runs the
// whole EXPLAIN path (parse, bind, optimize, physical plan, stages, plan
// text) and reports parse and planning time apart (parse-ms, plan-ms per
// statement). Targets: a 50,000-term OR chain plans in well under 1 s.
//
//	go test -run '^$' -bench Plan ./planner/

// planShapes are the statements, by name.
func planShapes() map[string]string {
	terms := func(n int, f func(i int) string, sep string) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = f(i)
		}
		return strings.Join(parts, sep)
	}
	shapes := map[string]string{}
	for _, n := range []int{1000, 10000, 50000} {
		shapes[fmt.Sprintf("OrEqualities%d", n)] = "select count(*) from l where " +
			terms(n, func(i int) string { return fmt.Sprintf("id = %d", i) }, " or ")
	}
	shapes["OrOfAnds50000"] = "select count(*) from l where " +
		terms(50000, func(i int) string { return fmt.Sprintf("(id = %d and lv > %d)", i, i) }, " or ")
	shapes["OrRanges50000"] = "select count(*) from l where " +
		terms(50000, func(i int) string { return fmt.Sprintf("lv > %d", i) }, " or ")
	shapes["AndChain50000"] = "select count(*) from l where " +
		terms(50000, func(i int) string { return fmt.Sprintf("lv <> %d", i) }, " and ")
	shapes["InList10000"] = "select count(*) from l where id in (" +
		terms(10000, func(i int) string { return fmt.Sprint(i) }, ", ") + ")"
	shapes["UnionAll500"] = terms(500, func(i int) string { return fmt.Sprintf("select id, name from l where lv > %d", i) }, " union all ")
	shapes["Join200"] = "select count(*) from l t0" +
		terms(199, func(i int) string { return fmt.Sprintf(" join l t%d on t%d.id = t%d.id", i+1, i, i+1) }, "")
	shapes["Join1000"] = "select count(*) from l t0" +
		terms(999, func(i int) string { return fmt.Sprintf(" join l t%d on t%d.id = t%d.id", i+1, i, i+1) }, "")
	shapes["NestedCalls990"] = "select " + strings.Repeat("abs(", 990) + "lv" + strings.Repeat(")", 990) + " from l"
	shapes["DerivedTables990"] = strings.Repeat("select * from (", 990) + "select id from l" + strings.Repeat(") x", 990)
	shapes["DerivedTables300"] = strings.Repeat("select * from (", 300) + "select id from l" + strings.Repeat(") x", 300)
	shapes["InSubqueries100"] = "select count(*) from l where " + strings.Repeat("id in (select id from l where ", 100) + "lv > 1" + strings.Repeat(")", 100)
	shapes["SelectList5000"] = "select " + terms(5000, func(i int) string { return fmt.Sprintf("lv + %d", i) }, ", ") + " from l"
	return shapes
}

func BenchmarkPlan(b *testing.B) {
	cat := benchCatalog(b)
	shapes := planShapes()
	for _, name := range []string{
		"OrEqualities1000", "OrEqualities10000", "OrEqualities50000", "OrOfAnds50000", "OrRanges50000",
		"AndChain50000", "InList10000", "UnionAll500", "Join200", "Join1000", "NestedCalls990", "DerivedTables300", "DerivedTables990", "InSubqueries100", "SelectList5000",
	} {
		q := shapes[name]
		b.Run(name, func(b *testing.B) {
			var parse, plan time.Duration
			for i := 0; i < b.N; i++ {
				p, pl := explain(b, cat, q)
				parse, plan = parse+p, plan+pl
			}
			b.ReportMetric(float64(parse.Milliseconds())/float64(b.N), "parse-ms")
			b.ReportMetric(float64(plan.Milliseconds())/float64(b.N), "plan-ms")
		})
	}
}

// explain plans q as EXPLAIN does and returns the parse and planning time.
func explain(tb testing.TB, cat *hive.Catalog, q string) (time.Duration, time.Duration) {
	t0 := time.Now()
	stmts, err := sql.Parse(q)
	if err != nil {
		tb.Fatal(err)
	}
	t1 := time.Now()
	st, err := sql.NewBinder(cat).Bind(stmts[0])
	if err != nil {
		tb.Fatal(err)
	}
	lp, err := planner.Optimize(st.Plan, nil)
	if err != nil {
		tb.Fatal(err)
	}
	root, err := planner.Physical(lp, planner.PhysicalConfig{MaxParallelism: 128, BroadcastThreshold: 10 << 20, DynamicFiltering: true})
	if err != nil {
		tb.Fatal(err)
	}
	g, err := runtime.BuildJobGraph(root)
	if err != nil {
		tb.Fatal(err)
	}
	_ = g.Explain()
	return t1.Sub(t0), time.Since(t1)
}

func benchCatalog(b *testing.B) *hive.Catalog {
	b.Helper()
	return catalog(b)
}
