package fsql_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsql-dev/fsql"
)

var updatePlans = flag.Bool("update-plans", false, "rewrite testdata/plans/*.plan from the current planner")

// planCases are the EXPLAIN goldens: queries whose fact scan must be
// pruned dynamically (DynamicFilterDataCollector on the dimension side,
// OrderEnforce ahead of the fact scan), a semi join, a left join and a
// UNION ALL of two fact tables, a CTE computed once for two readers.
var planCases = []struct{ name, file string }{
	{"q3", "tpcds/queries/q3.sql"},
	{"q7", "tpcds/queries/q7.sql"},
	{"q19", "tpcds/queries/q19.sql"},
	{"q42", "tpcds/queries/q42.sql"},
	{"q52", "tpcds/queries/q52.sql"},
	{"q55", "tpcds/queries/q55.sql"},
	// A scalar subquery (q6) and a semi join (q58) filter date_dim before
	// it joins the fact, so the fact scan is pruned by the filtered
	// dates; q72 joins two facts.
	{"q6", "tpcds/queries/q6.sql"},
	{"q58", "tpcds/queries/q58.sql"},
	{"q72", "tpcds/queries/q72.sql"},
	// Joins on strings without statistics wait for the key joins: q24a's
	// store sales meet customer_address on the zip code only with the
	// customer's key, q85's customer_demographics meets itself on two
	// status strings only through web_returns' keys.
	{"q24a", "tpcds/queries/q24a.sql"},
	{"q85", "tpcds/queries/q85.sql"},
	// The few outer rows of a semi and an anti join prune the subquery
	// sides (the collector on the probe side): q16's EXISTS on the same
	// sales table and NOT EXISTS on the returns, q95's IN over a self-join
	// of web_sales, whose both sides are pruned.
	{"q16", "tpcds/queries/q16.sql"},
	{"q95", "tpcds/queries/q95.sql"},
	// A WHERE test of a left join's key copied onto the right input's key
	// (pushdown_through_keys.go): q78's ss_sold_year = 2000 reaches the
	// date joins of the web and catalog sales it left joins, so all three
	// fact scans are pruned to 2000. Its three `LEFT JOIN returns ...
	// WHERE returns key IS NULL` are anti joins (left_join_to_anti.go).
	{"q78", "tpcds/queries/q78.sql"},
	// q14b's `d_week_seq = (select ...)` filters date_dim below its
	// `ss_item_sk IN (cross_items)` semi join (filter_dimensions), so each
	// year's store sales are pruned to one week; cross_items' INTERSECT
	// builds on distinct rows.
	{"q14b", "tpcds/queries/q14b.sql"},
	// A filtered date_dim joined with q2's weekly aggregate on the week
	// semi-joins the aggregate's date_dim (filter_group_keys), so the
	// sales under the UNION ALL are pruned to the filtered year's weeks.
	{"q2", "tpcds/queries/q2.sql"},
	// q1's customer_total_return is read twice: once pruned to one
	// state's stores by a dynamic filter, once whole for the stores'
	// averages. The whole copy is computed anyway, so both read one
	// shared copy (worth_apart.go), pruned only by its own year.
	{"q1", "tpcds/queries/q1.sql"},
	{"semi_join", "plans/semi_join.sql"},
	{"left_join", "plans/left_join.sql"},
	{"union_all", "plans/union_all.sql"},
	{"shared_cte", "plans/shared_cte.sql"},
}

func explain(t *testing.T, eng *fsql.Engine, q string) string {
	t.Helper()
	rows, err := eng.Query(context.Background(), "explain "+q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var sb strings.Builder
	for rows.Next() {
		b := rows.RecordBatch()
		for i := 0; i < int(b.NumRows()); i++ {
			sb.WriteString(b.Column(0).ValueStr(i))
			sb.WriteString("\n")
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return sb.String()
}

// TestExplainGolden compares EXPLAIN of each case with its golden file
// (run with -update-plans to rewrite them, and read the diff). Every case
// must show both dynamic-pruning nodes, and none with pruning switched off.
func TestExplainGolden(t *testing.T) {
	if testing.Short() {
		t.Skip("generates TPC-DS data")
	}
	dir := tpcdsPartitioned(t)
	cfg := fsql.DefaultConfig()
	cfg.Parallelism = 4
	eng, err := fsql.Open(dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	off := cfg
	off.DynamicFiltering = false
	engOff, err := fsql.Open(dir, off)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range planCases {
		t.Run(c.name, func(t *testing.T) {
			text, err := os.ReadFile(filepath.Join("testdata", c.file))
			if err != nil {
				t.Fatal(err)
			}
			q := strings.TrimSuffix(strings.TrimSpace(string(text)), ";")
			got := explain(t, eng, q)
			for _, node := range []string{"DynamicFilterDataCollector", "OrderEnforce", "dynamic filter on"} {
				if !strings.Contains(got, node) {
					t.Errorf("plan lacks %s:\n%s", node, got)
				}
			}
			if p := explain(t, engOff, q); strings.Contains(p, "DynamicFilterDataCollector") || strings.Contains(p, "OrderEnforce") {
				t.Errorf("table.optimizer.dynamic-filtering.enabled=false still plans dynamic pruning:\n%s", p)
			}
			path := filepath.Join("testdata", "plans", c.name+".plan")
			if *updatePlans {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -run TestExplainGolden -update-plans)", err)
			}
			if got != string(want) {
				t.Errorf("EXPLAIN differs from %s (rerun with -update-plans and read the diff):\ngot:\n%s\nwant:\n%s", path, got, want)
			}
			// The plan decoded from its wire form is the same plan.
			if wired := explain(t, eng.WithPlanHook(wireRoundTrip), q); wired != got {
				t.Errorf("EXPLAIN of the plan decoded from the wire differs:\n%s\nwant:\n%s", wired, got)
			}
		})
	}
}
