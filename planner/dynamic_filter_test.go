package planner_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/fsql-dev/fsql/connectors/hive"
	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/planner"
	"github.com/fsql-dev/fsql/shuffle"
	"github.com/fsql-dev/fsql/sql"
)

// ordersCatalog is q16's and q95's shape in small: order lines (several
// per order, from several warehouses) and returned lines, both large
// enough to be pruned dynamically.
func ordersCatalog(t *testing.T) *hive.Catalog {
	t.Helper()
	var sb strings.Builder
	sb.WriteString("table sales (o int, wh int, v int)\n")
	for i := 0; i < 20000; i++ {
		fmt.Fprintf(&sb, "%d\t%d\t%d\n", i/4, i%3, i%10)
	}
	sb.WriteString("\ntable rets (ro int, rv int)\n")
	for i := 0; i < 12000; i++ {
		fmt.Fprintf(&sb, "%d\t%d\n", i/3, i%7)
	}
	sb.WriteString("\ntable small (k int, tag int)\n")
	for i := 0; i < 100; i++ {
		fmt.Fprintf(&sb, "%d\t%d\n", i, i%10)
	}
	return sltCatalog(t, "orders.slt", strings.NewReader(sb.String()))
}

// physicalPlan binds, optimizes and physically plans q with dynamic
// filtering on.
func physicalPlan(t *testing.T, cat *hive.Catalog, q string) exec.Node {
	t.Helper()
	stmts, err := sql.Parse(q)
	if err != nil {
		t.Fatal(err)
	}
	st, err := sql.NewBinder(cat).Bind(stmts[0])
	if err != nil {
		t.Fatal(err)
	}
	p, err := planner.Optimize(st.Plan, nil)
	if err != nil {
		t.Fatal(err)
	}
	n, err := planner.Physical(p, planner.PhysicalConfig{MaxParallelism: 128, BroadcastThreshold: 1 << 20, DynamicFiltering: true})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// dynamicTargets lists, sorted, the tables of the scans that wait for a
// dynamic filter, and counts the joins whose collector sits on their
// probe side (under the probe side's exchange).
func dynamicTargets(n exec.Node) (scans []string, onProbe int) {
	var walk func(n exec.Node)
	walk = func(n exec.Node) {
		switch x := n.(type) {
		case *exec.Scan:
			if len(x.DynamicFilters) > 0 {
				scans = append(scans, x.Table.Name)
			}
		case *exec.HashJoin:
			if hasCollector(x.Probe) {
				onProbe++
			}
		}
		for _, c := range n.Children() {
			walk(c)
		}
	}
	walk(n)
	slices.Sort(scans)
	return scans, onProbe
}

// hasCollector reports whether a collector sits right under the
// exchange n.
func hasCollector(n exec.Node) bool {
	ex, ok := n.(*shuffle.Exchange)
	if !ok {
		return false
	}
	_, ok = ex.Child.(*exec.DynamicFilterDataCollector)
	return ok
}

// tree is n's EXPLAIN-like text, one node a line.
func tree(n exec.Node) string {
	var sb strings.Builder
	var walk func(n exec.Node, depth int)
	walk = func(n exec.Node, depth int) {
		fmt.Fprintf(&sb, "%s%s\n", strings.Repeat("  ", depth), n)
		for _, c := range n.Children() {
			walk(c, depth+1)
		}
	}
	walk(n, 0)
	return sb.String()
}

// A semi or anti join whose outer side is filtered and far smaller than
// its subquery side prunes the subquery's scans by the outer keys (the
// collector on its probe side), through both sides of a self-join on the
// key; NOT IN and mark joins, whose NULL rules read the whole subquery
// side, and outer sides that are not the few rows, do not. A left join
// whose preserved side is pruned by a join above prunes its optional side.
func TestOuterKeysPruneSubquery(t *testing.T) {
	cat := ordersCatalog(t)
	cases := []struct {
		name    string
		q       string
		scans   []string
		onProbe int
	}{
		{"exists with a residual (q16)", `select count(*) from sales s1 where s1.v = 3 and s1.o < 100
			and exists (select * from sales s2 where s1.o = s2.o and s1.wh <> s2.wh)`, []string{"sales"}, 1},
		{"not exists (q16)", `select count(*) from sales s1 where s1.v = 3 and s1.o < 100
			and not exists (select * from rets where s1.o = ro)`, []string{"rets"}, 1},
		{"in over a self-join (q95)", `with w as (select a.o from sales a, sales b where a.o = b.o and a.wh <> b.wh)
			select count(*) from sales s1 where s1.v = 3 and s1.o < 100 and s1.o in (select o from w)`, []string{"sales", "sales"}, 1},
		{"both, chained (q94)", `select count(*) from sales s1 where s1.v = 3 and s1.o < 100
			and exists (select * from sales s2 where s1.o = s2.o and s1.wh <> s2.wh)
			and not exists (select * from rets where s1.o = ro)`, []string{"rets", "sales"}, 2},
		{"not in reads the whole subquery", `select count(*) from sales s1 where s1.v = 3 and s1.o < 100
			and s1.o not in (select ro from rets)`, nil, 0},
		{"a mark reads the whole subquery", `select s1.o in (select ro from rets) from sales s1 where s1.v = 3 and s1.o < 100`, nil, 0},
		{"an unfiltered outer side", `select count(*) from small where exists (select * from sales where k = o)`, nil, 0},
		// q5's web branch: the returns, pruned by the dimension above the
		// UNION ALL, are the preserved side of a left join with the
		// sales, which they prune in turn.
		{"a left join whose preserved side is pruned from above (q5)", `select count(*) from
			(select o k, v from sales union all select ro k, rv v from rets left join sales on ro = o) u, small
			where u.v = small.k and small.tag = 1`, []string{"rets", "sales", "sales"}, 1},
		{"a left join whose preserved side is not pruned", `select count(*) from rets left join sales on ro = o`, nil, 0},
		// The filtered subquery side is the smaller one: it prunes the
		// outer side, as for any selective build side.
		{"an outer side larger than the subquery", `select count(*) from sales s1 where s1.v = 3
			and exists (select * from rets where s1.o = ro and rv = 1 and ro < 50)`, []string{"sales"}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := physicalPlan(t, cat, c.q)
			scans, onProbe := dynamicTargets(n)
			if !slices.Equal(scans, c.scans) || onProbe != c.onProbe {
				t.Errorf("scans with dynamic filters %v and %d probe-side collectors, want %v and %d\n%s",
					scans, onProbe, c.scans, c.onProbe, tree(n))
			}
		})
	}
}
