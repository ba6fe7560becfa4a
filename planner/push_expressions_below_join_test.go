package planner_test

import (
	"strings"
	"testing"
)

// TestPushExpressionsBelowJoin: an expression that cannot fail over the
// join input with fewer rows than the join moves below the join, into a
// projection of that input; one that may fail, or reads both inputs,
// stays above. The answers are checked in
// testdata/slt/push_expressions_below_join.slt, over the same tables.
func TestPushExpressionsBelowJoin(t *testing.T) {
	cat := sltFileCatalog(t, "../testdata/slt/push_expressions_below_join.slt")
	for _, c := range []struct {
		query string
		below string // a line of the plan under the join, "" for none moved
	}{
		{"select substr(s, 1, 3), v from f, d where k = dk", "Project [dk, substr(s, 1, 3)]"},
		{"select substr(s, 2, 2), count(*), sum(v) from f, d where k = dk group by substr(s, 2, 2)", "Project [dk, substr(s, 2, 2)]"},
		// Each expression reads both inputs: nothing moves.
		{"select concat(upper(s), '-', x), length(s) + v from f join d on k = dk", ""},
		{"select cast(t as signed) + v from f, n where k = nk", ""},
	} {
		plan := optimize(t, cat, c.query)
		// The projection of an input: the one right under a join.
		got := ""
		lines := strings.Split(plan, "\n")
		for i, line := range lines {
			if i > 0 && strings.Contains(lines[i-1], "Join inner") || i > 1 && strings.Contains(lines[i-2], "Join inner") {
				if l := strings.TrimSpace(line); strings.HasPrefix(l, "Project [") {
					got = l
				}
			}
		}
		if got != c.below {
			t.Errorf("%s: moved %q, want %q; plan:\n%s", c.query, got, c.below, plan)
		}
	}
}
