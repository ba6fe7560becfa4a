package planner_test

import (
	"testing"

	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/planner"
	"github.com/fsql-dev/fsql/shuffle"
	"github.com/fsql-dev/fsql/sql"
)

// physicalOf plans q with the rules in disabled switched off.
func physicalOf(t *testing.T, q string, disabled ...string) exec.Node {
	t.Helper()
	cat := catalog(t)
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

// planCounts counts the distinct scans of a physical plan (a shared node
// once) and the forward exchanges with several parents.
func planCounts(root exec.Node) (scans, shared int) {
	seen := map[exec.Node]bool{}
	parents := map[exec.Node]int{}
	var walk func(n exec.Node)
	walk = func(n exec.Node) {
		for _, c := range n.Children() {
			parents[c]++
		}
		if seen[n] {
			return
		}
		seen[n] = true
		if _, ok := n.(*exec.Scan); ok {
			scans++
		}
		for _, c := range n.Children() {
			walk(c)
		}
	}
	walk(root)
	for n, k := range parents {
		if ex, ok := n.(*shuffle.Exchange); ok && ex.Kind == shuffle.Forward && k > 1 {
			shared++
		}
	}
	return scans, shared
}

func TestShareSubplans(t *testing.T) {
	cases := []struct {
		name, query   string
		scans, shared int // with the rule; without it (and share_filtered) nothing is shared
		scansOff      int
	}{
		{
			name:  "a CTE joined with itself is computed once",
			query: "with t as (select id, count(*) c from l group by id) select * from t a join t b on a.id = b.id",
			scans: 1, shared: 1, scansOff: 2,
		},
		{
			name:  "a subquery written twice is computed once",
			query: "select (select max(w) from r), id from l where id < (select max(w) from r)",
			scans: 2, shared: 1, scansOff: 3,
		},
		{
			name:  "a shared subplan inside a shared subplan is shared whole",
			query: "with t as (select l.id, sum(w) s from l join r on l.id = r.id group by l.id) select * from t x join t y on x.id = y.id union all select * from t x join t y on x.id = y.id",
			scans: 2, shared: 2, scansOff: 8,
		},
		{
			name:  "filters that stay above the aggregate leave it shared",
			query: "with t as (select id, count(*) c from l group by id) select * from t a join t b on a.id = b.id where a.c > 1 and b.c < 3",
			scans: 1, shared: 1, scansOff: 2,
		},
		{
			name:  "references that differ by a filter pushed into the scan share one copy under both (share_filtered)",
			query: "with t as (select id, count(*) c from l group by id) select * from t a join t b on a.c = b.c where a.id > 1 and b.id < 3",
			scans: 1, shared: 1, scansOff: 2,
		},
		{
			name:  "scans alone are not shared: reading again costs what materializing does",
			query: "select * from l a join l b on a.id = b.id",
			scans: 2, shared: 0, scansOff: 2,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			scans, shared := planCounts(physicalOf(t, c.query))
			if scans != c.scans || shared != c.shared {
				t.Errorf("%d scans and %d shared subplans, want %d and %d", scans, shared, c.scans, c.shared)
			}
			scans, shared = planCounts(physicalOf(t, c.query, "share_subplans", "share_filtered"))
			if scans != c.scansOff || shared != 0 {
				t.Errorf("rule off: %d scans and %d shared subplans, want %d and 0", scans, shared, c.scansOff)
			}
		})
	}
}

// TestShareSubplansPrunedCopies: copies that dynamic filters of joins
// outside them prune stay apart only when every copy is pruned; a copy
// read whole anyway is shared by the pruned ones (worthApart).
func TestShareSubplansPrunedCopies(t *testing.T) {
	star := starCatalogLayout(t, false)
	const t1 = "with t as (select dk, ck, sum(amt) s from s group by dk, ck) "
	cases := []struct {
		name, query           string
		scans, shared, pruned int // with the rule
		scansOff, prunedOff   int // share_subplans and share_filtered off
	}{
		{
			name:  "one copy pruned by a filtered dimension, the other read whole: shared",
			query: t1 + "select a.ck, a.s from t a join dd on a.dk = dd.dk where dd.yr = 2000 and a.s > (select avg(s) from t)",
			scans: 2, shared: 1, pruned: 0, scansOff: 3, prunedOff: 1,
		},
		{
			name: "every copy pruned by its own dimension: apart",
			query: t1 + "select a.ck, a.s, b.s from t a join dd d1 on a.dk = d1.dk join t b on a.ck = b.ck join dd d2 on b.dk = d2.dk " +
				"where d1.yr = 2000 and d2.moy = 3",
			scans: 4, shared: 0, pruned: 2, scansOff: 4, prunedOff: 2,
		},
		{
			name: "two of three copies pruned, the third read whole: shared by all three",
			query: t1 + "select a.ck, a.s, b.s from t a join dd d1 on a.dk = d1.dk join t b on a.ck = b.ck join dd d2 on b.dk = d2.dk " +
				"where d1.yr = 2000 and d2.moy = 3 and a.s > (select avg(s) from t)",
			scans: 3, shared: 1, pruned: 0, scansOff: 5, prunedOff: 2,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := physicalIn(t, star, c.query)
			scans, shared := planCounts(root)
			if pruned := prunedScans(root); scans != c.scans || shared != c.shared || pruned != c.pruned {
				t.Errorf("%d scans, %d shared subplans, %d pruned scans; want %d, %d and %d", scans, shared, pruned, c.scans, c.shared, c.pruned)
			}
			root = physicalIn(t, star, c.query, "share_subplans", "share_filtered")
			scans, _ = planCounts(root)
			if pruned := prunedScans(root); scans != c.scansOff || pruned != c.prunedOff {
				t.Errorf("rules off: %d scans and %d pruned scans, want %d and %d", scans, pruned, c.scansOff, c.prunedOff)
			}
		})
	}
}
