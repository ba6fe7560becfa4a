package planner_test

import (
	"strings"
	"testing"
)

// TestPushDistinctBelowJoin: a DISTINCT over an inner join pre-aggregates
// the join's larger input when it is a join itself, on the columns the
// DISTINCT and the join read, and leaves the other shapes alone; the
// answers are checked in testdata/slt/push_distinct_below_join.slt, over
// the same tables.
func TestPushDistinctBelowJoin(t *testing.T) {
	cat := sltFileCatalog(t, "../testdata/slt/push_distinct_below_join.slt")
	for _, c := range []struct {
		query string
		local string // the pre-aggregation's line, "" for none
	}{
		// f joins c first (the larger input of the join with d): its
		// rows are grouped on the key of the join with d and c's
		// column, each read by the DISTINCT or the join.
		{"select distinct dn, cn from f, d, c where x = dk and y = ck", "Aggregate(local) group by [x, cn]"},
		{"select distinct upper(dn), length(cn) from f, d, c where x = dk and y = ck", "Aggregate(local) group by [x, cn]"},
		{"select distinct dn, cn from f, d, c where x = dk and y = ck and v < ck / 2", "Aggregate(local) group by [x, cn]"},
		{"select dn from f, d, c where x = dk and y = ck group by dn", "Aggregate(local) group by [x]"},
		// The larger input is a scan: its join carries its dynamic
		// filters, and nothing is pre-aggregated.
		{"select distinct dn from f, d where x = dk", ""},
		// Aggregate calls count duplicates.
		{"select dn, count(*) from f, d, c where x = dk and y = ck group by dn", ""},
		// An outer join's unmatched rows are not the inner join's.
		{"select distinct dn, cn from f join d on x = dk left join c on y = ck", ""},
	} {
		plan := optimize(t, cat, c.query)
		got := ""
		for _, line := range strings.Split(plan, "\n") {
			if l := strings.TrimSpace(line); strings.HasPrefix(l, "Aggregate(local)") {
				got = l
			}
		}
		if got != c.local {
			t.Errorf("%s: pre-aggregation %q, want %q; plan:\n%s", c.query, got, c.local, plan)
		}
	}
}
