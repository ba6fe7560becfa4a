package planner_test

import (
	"strings"
	"testing"
)

func TestMergeProjections(t *testing.T) {
	cat := catalog(t)
	cases := []struct {
		name, query string
		projects    int
		want        string
	}{
		{"stacked projections become one",
			"select m from (select n as m, id from (select id, name as n, lv + 1 as lv1 from l) x) y", 1,
			"Project [l.name]"},
		{"an expression read once moves up",
			"select e + 1 from (select lv * 2 as e from l) x", 1,
			"Project [((CAST(l.lv AS BIGINT) * 2) + 1)]"},
		{"an expression read twice stays below",
			"select e * e from (select lv + 1 as e from l) x", 2,
			"Project [(CAST(l.lv AS BIGINT) + 1)]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			plan := optimize(t, cat, c.query)
			if got := strings.Count(plan, "Project ["); got != c.projects {
				t.Errorf("%d projections, want %d:\n%s", got, c.projects, plan)
			}
			if !strings.Contains(plan, c.want) {
				t.Errorf("plan lacks %q:\n%s", c.want, plan)
			}
		})
	}
}
