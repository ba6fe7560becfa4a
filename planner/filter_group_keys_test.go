package planner_test

import (
	"strings"
	"testing"
)

// TestFilterGroupKeys: a filtered dimension joined with an aggregate on a
// group key prunes the aggregate's fact, on a partitioned fact only.
func TestFilterGroupKeys(t *testing.T) {
	const q = "with w as (select dd.moy, sum(amt) s from s, dd where s.dk = dd.dk group by dd.moy) " +
		"select a.s, b.s from w a, dd d1, w b, dd d2 where a.moy = d1.moy and d1.yr = 2000 and b.moy = d2.moy and d2.yr = 2001 and a.moy = b.moy"
	cases := []struct {
		name        string
		partitioned bool
		// distinct scans, shared subplans and dynamically pruned scans,
		// with the rule and without it
		scans, shared, pruned          int
		scansOff, sharedOff, prunedOff int
	}{
		{
			name:        "partitioned: each reference prunes its fact by its own months",
			partitioned: true,
			scans:       8, shared: 0, pruned: 2,
			scansOff: 4, sharedOff: 1, prunedOff: 0,
		},
		{
			name:        "flat: nothing to prune, the references stay one shared aggregate",
			partitioned: false,
			scans:       4, shared: 1, pruned: 0,
			scansOff: 4, sharedOff: 1, prunedOff: 0,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cat := starCatalogLayout(t, c.partitioned)
			root := physicalIn(t, cat, q)
			scans, shared := planCounts(root)
			if pruned := prunedScans(root); scans != c.scans || shared != c.shared || pruned != c.pruned {
				t.Errorf("%d scans, %d shared subplans, %d pruned scans; want %d, %d and %d", scans, shared, pruned, c.scans, c.shared, c.pruned)
			}
			root = physicalIn(t, cat, q, "filter_group_keys")
			scans, shared = planCounts(root)
			if pruned := prunedScans(root); scans != c.scansOff || shared != c.sharedOff || pruned != c.prunedOff {
				t.Errorf("rule off: %d scans, %d shared subplans, %d pruned scans; want %d, %d and %d", scans, shared, pruned, c.scansOff, c.sharedOff, c.prunedOff)
			}
		})
	}
}

// TestFilterGroupKeysFactKey: a group key that is the fact's own column
// (q1's sr_store_sk) gets no semi join: the outer join's dynamic filter
// prunes the fact by it already.
func TestFilterGroupKeysFactKey(t *testing.T) {
	cat := starCatalogLayout(t, true)
	plan := optimize(t, cat, "with w as (select ck, sum(amt) s from s group by ck) select w.s from w, cc where w.ck = cc.ck and cc.nm = 'n1'")
	if strings.Contains(plan, "Join semi") {
		t.Errorf("a semi join on the fact's own key:\n%s", plan)
	}
	plan = optimize(t, cat, "with w as (select dd.moy, sum(amt) s from s, dd where s.dk = dd.dk group by dd.moy) select w.s from w, dd where w.moy = dd.moy and dd.yr = 2000")
	if !strings.Contains(plan, "Join semi") {
		t.Errorf("no semi join on the dimension's key:\n%s", plan)
	}
}
