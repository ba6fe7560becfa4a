package planner_test

import (
	"testing"

	"github.com/fsql-dev/fsql/exec"
)

// TestFilterDimensionsBelowSemi: a scalar-subquery join that filters a
// dimension reaches it through a semi or anti join left above the
// MultiJoin on the fact's key (q14b's `ss_item_sk IN (...)` above its
// `d_week_seq = (select ...)`), so the filtered dimension prunes the fact.
func TestFilterDimensionsBelowSemi(t *testing.T) {
	cat := starCatalog(t)
	for _, c := range []struct{ name, query string }{
		{"semi", "select sum(amt) from s, dd where s.dk = dd.dk and s.ck in (select ck from cc where nm = 'n1') and dd.moy = (select moy from dd where dk = 5)"},
		{"anti", "select sum(amt) from s, dd where s.dk = dd.dk and not exists (select 1 from cc where cc.ck = s.ck and nm = 'n1') and dd.moy = (select moy from dd where dk = 5)"},
		{"two semi joins", "select sum(amt) from s, dd where s.dk = dd.dk and s.ck in (select ck from cc where nm = 'n1') and s.amt in (select ck from cc) and dd.moy = (select moy from dd where dk = 5)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := physicalIn(t, cat, c.query)
			if !prunedOn(root, "s", "dk") {
				t.Errorf("the fact is not pruned by the filtered dates:\n%s", tree(root))
			}
		})
	}
}

// prunedOn reports whether a scan of table waits for a dynamic filter on
// its column col.
func prunedOn(root exec.Node, table, col string) bool {
	found := false
	var walk func(exec.Node)
	walk = func(n exec.Node) {
		if s, ok := n.(*exec.Scan); ok && s.Table.Name == table {
			for _, f := range s.DynamicFilters {
				found = found || f.Name == col
			}
		}
		for _, c := range n.Children() {
			walk(c)
		}
	}
	walk(root)
	return found
}
