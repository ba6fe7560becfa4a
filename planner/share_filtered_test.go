package planner_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fsql-dev/fsql/connectors/hive"
	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/planner"
	"github.com/fsql-dev/fsql/sql"
)

// starCatalog is a small star: a fact s partitioned by its date key (big
// enough for dynamic pruning), dates dd and customers cc.
func starCatalog(t *testing.T) *hive.Catalog {
	t.Helper()
	return starCatalogLayout(t, true)
}

// starCatalogLayout is starCatalog with s partitioned by its date key or
// flat.
func starCatalogLayout(t *testing.T, partitioned bool) *hive.Catalog {
	t.Helper()
	var sb strings.Builder
	if partitioned {
		sb.WriteString("partitioned table s (dk int, ck int, amt int) by (dk)\n")
	} else {
		sb.WriteString("table s (dk int, ck int, amt int)\n")
	}
	for i := 0; i < 24000; i++ {
		fmt.Fprintf(&sb, "%d\t%d\t%d\n", i%24, i%100, i)
	}
	sb.WriteString("\ntable dd (dk int, yr int, moy int)\n")
	for i := 0; i < 24; i++ {
		fmt.Fprintf(&sb, "%d\t%d\t%d\n", i, 2000+i/12, i%12+1)
	}
	sb.WriteString("\ntable cc (ck int, nm varchar)\n")
	for i := 0; i < 100; i++ {
		fmt.Fprintf(&sb, "%d\tn%d\n", i, i)
	}
	return sltCatalog(t, "star.slt", strings.NewReader(sb.String()))
}

// physicalIn is physicalOf over cat.
func physicalIn(t *testing.T, cat *hive.Catalog, q string, disabled ...string) exec.Node {
	t.Helper()
	stmts, err := sql.Parse(q)
	if err != nil {
		t.Fatal(err)
	}
	st, err := sql.NewBinder(cat).Bind(stmts[0])
	if err != nil {
		t.Fatal(err)
	}
	off := map[string]bool{}
	for _, d := range disabled {
		off[d] = true
	}
	p, err := planner.Optimize(st.Plan, &planner.Context{Disabled: off})
	if err != nil {
		t.Fatal(err)
	}
	root, err := planner.Physical(p, planner.PhysicalConfig{MaxParallelism: 128, BroadcastThreshold: 1 << 20, DynamicFiltering: true})
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// prunedScans counts the distinct scans a dynamic filter prunes.
func prunedScans(root exec.Node) int {
	seen := map[exec.Node]bool{}
	n := 0
	var walk func(exec.Node)
	walk = func(x exec.Node) {
		if seen[x] {
			return
		}
		seen[x] = true
		if s, ok := x.(*exec.Scan); ok && len(s.DynamicFilters) > 0 {
			n++
		}
		for _, c := range x.Children() {
			walk(c)
		}
	}
	walk(root)
	return n
}

// TestShareFiltered: the decision between one copy computed under the
// disjunction of the copies' filters and separate copies.
func TestShareFiltered(t *testing.T) {
	star := starCatalog(t)
	small := catalog(t)
	const yearTotal = "with t as (select nm, yr, sum(amt) s from s, dd, cc where s.dk = dd.dk and s.ck = cc.ck group by nm, yr) "
	cases := []struct {
		name, query string
		cat         *hive.Catalog
		// with the rule: distinct scans, shared subplans, dynamically
		// pruned scans; without it: scans and pruned scans (nothing
		// shared by this rule, share_subplans shares none of these)
		scans, shared, pruned int
		scansOff, prunedOff   int
	}{
		{
			name:  "copies differing by a year pushed into the dimension share one copy under both years (q4)",
			query: yearTotal + "select a.nm, a.s, b.s from t a, t b where a.nm = b.nm and a.yr = 2000 and b.yr = 2001",
			cat:   star, scans: 3, shared: 1, pruned: 1, scansOff: 6, prunedOff: 2,
		},
		{
			name:  "copies filtered by an equality and by a range share one copy under their disjunction",
			query: yearTotal + "select a.nm, a.s, b.s from t a, t b where a.nm = b.nm and a.yr = 2000 and b.yr > 2000",
			cat:   star, scans: 3, shared: 1, pruned: 1, scansOff: 6, prunedOff: 2,
		},
		{
			name: "filters reaching the copies through every branch of a UNION ALL (q75)",
			query: "with t as (select yr, sum(amt) s from (select s.amt, dd.yr from s, dd where s.dk = dd.dk union all " +
				"select s.amt * 2 amt, dd.yr from s, dd where s.dk = dd.dk) u group by yr) " +
				"select a.s, b.s from t a, t b where a.yr = 2000 and b.yr = 2001",
			// share_subplans shares the join under the two branches, in
			// each copy or in the one shared copy.
			cat: star, scans: 2, shared: 2, pruned: 1, scansOff: 4, prunedOff: 2,
		},
		{
			name: "copies pruned from outside by different dimensions stay apart: sharing would read every partition",
			query: "with t as (select dk, ck, sum(amt) s from s group by dk, ck) " +
				"select a.ck, a.s, b.s from t a join dd d1 on a.dk = d1.dk join t b on a.ck = b.ck join dd d2 on b.dk = d2.dk " +
				"where d1.yr = 2000 and d2.moy = 3 and a.ck < 50 and b.ck > 10",
			cat: star, scans: 4, shared: 0, pruned: 2, scansOff: 4, prunedOff: 2,
		},
		{
			name:  "filters below two inputs of a join are not merged (each copy would see the other's rows)",
			query: yearTotal + "select a.nm, a.s, b.s from t a, t b where a.nm = b.nm and a.yr = 2000 and b.nm = 'n1'",
			cat:   star, scans: 6, shared: 0, pruned: 2, scansOff: 6, prunedOff: 2,
		},
		{
			name: "filters on the optional side of a left join do not lift",
			query: "select * from (select l.id, count(r.w) c from l left join r on l.id = r.id and r.w > 100 group by l.id) x " +
				"join (select l.id, count(r.w) c from l left join r on l.id = r.id and r.w > 200 group by l.id) y on x.id = y.id",
			cat: small, scans: 4, shared: 0, scansOff: 4,
		},
		{
			name: "filters that may fail are not merged",
			query: "select * from (select id, count(*) c from l where cast(name as signed) > 1 group by id) x " +
				"join (select id, count(*) c from l where cast(name as signed) > 2 group by id) y on x.id = y.id",
			cat: small, scans: 2, shared: 0, scansOff: 2,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := physicalIn(t, c.cat, c.query)
			scans, shared := planCounts(root)
			if pruned := prunedScans(root); scans != c.scans || shared != c.shared || pruned != c.pruned {
				t.Errorf("%d scans, %d shared subplans, %d pruned scans; want %d, %d and %d", scans, shared, pruned, c.scans, c.shared, c.pruned)
			}
			root = physicalIn(t, c.cat, c.query, "share_filtered")
			scans, _ = planCounts(root)
			if pruned := prunedScans(root); scans != c.scansOff || pruned != c.prunedOff {
				t.Errorf("rule off: %d scans and %d pruned scans, want %d and %d", scans, pruned, c.scansOff, c.prunedOff)
			}
		})
	}
}

// TestShareFilteredKeepsEachFilter: the shared copy reads the years of
// both references as one IN list, and each reference keeps its own year
// above it.
func TestShareFilteredKeepsEachFilter(t *testing.T) {
	cat := starCatalog(t)
	plan := optimize(t, cat, "with t as (select nm, yr, sum(amt) s from s, dd, cc where s.dk = dd.dk and s.ck = cc.ck group by nm, yr) "+
		"select a.nm, a.s, b.s from t a, t b where a.nm = b.nm and a.yr = 2000 and b.yr = 2001")
	for _, want := range []string{"IN (2000, 2001)", "Filter (dd.yr = 2000)", "Filter (dd.yr = 2001)"} {
		if !strings.Contains(plan, want) {
			t.Errorf("plan lacks %q:\n%s", want, plan)
		}
	}
}
