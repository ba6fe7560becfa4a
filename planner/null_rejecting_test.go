package planner_test

import (
	"strings"
	"testing"
)

// TestNullRejecting lists WHERE conditions over l LEFT JOIN r and whether
// push_down_filters may make the join inner: only when the condition
// cannot be TRUE on a NULL-extended row (every r column NULL). Each
// "left" case is TRUE on such a row for some l values, so an inner join
// would lose rows.
func TestNullRejecting(t *testing.T) {
	cat := catalog(t)
	cases := []struct {
		where string
		inner bool
	}{
		// Strict comparisons and functions: NULL when r is.
		{"r.w > 150", true},
		{"r.w + l.lv = 3", true},
		{"abs(r.w) = 3", true},
		{"concat(r.rv, 'x') = 'ax'", true},
		{"substr(r.rv, 1, 1) = 'a'", true},
		{"r.w in (1, 2)", true},
		{"r.w not in (1, 2)", true},
		{"r.rv like 'a%'", true},
		{"not (r.rv like 'a%')", true},
		{"cast(r.rv as signed) = 1", true},
		{"r.w - r.id > 0", true},
		{"l.lv = 10", false}, // preserved side only
		{"l.lv = 10 or l.lv is null", false},

		// IS [NOT] NULL and NOT.
		{"r.w is null", false},
		{"r.w is not null", true},
		{"not (r.w is not null)", false},
		{"not (r.w is null)", true},
		{"not not (r.w is not null)", true},
		{"(r.w > 1) is null", false},
		{"(r.w > 1) is not null", true},

		// AND: one rejecting side is enough; NOT over it is not.
		{"r.w > 1 and l.lv = 10", true},
		{"r.w is null and l.lv = 10", false},
		{"not (r.w > 1 and l.lv = 10)", false},
		{"not (r.w > 1 and r.id > 1)", true},
		{"not (r.rv = 'a' and l.lv = 20)", false},

		// OR: both sides must reject; NOT over OR is an AND of NOTs.
		{"r.w > 1 or l.lv = 10", false},
		{"r.w > 1 or r.id = 3", true},
		{"r.w > 1 or r.w is null", false},
		{"not (r.w > 1 or l.lv = 10)", true},
		{"not (r.w is null or l.lv = 10)", true},
		{"not (r.w is not null or l.lv = 10)", false},

		// Null-safe equality, IS TRUE / IS FALSE.
		{"r.w <=> 1", true},
		{"r.w <=> null", false},
		{"r.w <=> l.lv", false},
		{"not (r.w <=> 1)", false},
		{"(r.w > 1) is true", true},
		{"(r.w > 1) is false", true},
		{"(r.w > 1) is not true", false},
		{"(r.w > 1) is not false", false},
		{"(r.w is null) is true", false},

		// COALESCE, IFNULL, IF, CASE, NULLIF: not strict.
		{"coalesce(r.w, 0) = 0", false},
		{"coalesce(r.w, l.lv) = 10", false},
		{"coalesce(r.w, r.id) = 1", true},
		{"coalesce(r.w, null) = 1", true},
		{"ifnull(r.w, 0) = 0", false},
		{"ifnull(r.w, r.id) = 0", true},
		{"if(r.w > 1, 1, 0) = 0", false},
		{"if(r.w > 1, r.w, null) > 1", true},
		{"if(r.w is null, 1, r.w) = 1", false},
		{"case when r.w > 1 then 1 end = 1", true},
		{"case when r.w > 1 then 1 else 0 end = 0", false},
		{"case when r.w is null then l.lv else r.w end = 10", false},
		{"case when l.lv > 1 then r.w else r.id end = 1", true},
		{"case when l.lv > 1 then r.w else l.lv end = 10", false},
		{"nullif(r.w, 1) is null", false},
		{"nullif(r.w, 1) = 2", true},

		// Functions that are not strict, and ones fsql does not list.
		{"concat_ws(',', r.rv, l.name) = 'one'", false},
		{"greatest(r.w, l.lv) = 10", false},
	}
	for _, c := range cases {
		plan := optimize(t, cat, "select * from l left join r on l.id = r.id where "+c.where)
		inner := strings.Contains(plan, "Join inner")
		if !inner && !strings.Contains(plan, "Join left") {
			t.Errorf("where %s: no join in the plan:\n%s", c.where, plan)
			continue
		}
		if inner != c.inner {
			want := "left"
			if c.inner {
				want = "inner"
			}
			t.Errorf("where %s: want a %s join, got:\n%s", c.where, want, plan)
		}
	}
}
