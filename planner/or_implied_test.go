package planner_test

import (
	"strings"
	"testing"
)

// TestImpliedByOr: an OR over two join inputs, each branch restricting
// both, gives each input the OR of its own restrictions, on its scan;
// an input some branch leaves free gets nothing; the preserved side of a
// left join gets nothing from its ON clause. Each derived filter lands
// once, however many pushdown passes run.
func TestImpliedByOr(t *testing.T) {
	cat := catalog(t)
	cases := []struct {
		q    string
		l, r string // the scan's filters, "" for none
	}{
		{
			q: "select * from l, r where l.id = r.id and ((l.lv = 10 and r.w = 100) or (l.lv = 20 and r.w > 200))",
			l: "filters [((l.lv = 10) OR (l.lv = 20))]",
			r: "filters [((r.w = 100) OR (r.w > 200))]",
		},
		{
			// The second branch does not restrict l: l stays whole.
			q: "select * from l, r where l.id = r.id and ((l.lv = 10 and r.w = 100) or r.w > 200)",
			r: "filters [((r.w = 100) OR (r.w > 200))]",
		},
		{
			// A test every branch shares comes out as its own conjunct.
			q: "select * from l join r on l.id = r.id where (l.lv = 10 and l.name = 'one' and r.w = 100) or (l.lv = 10 and r.w = 300)",
			l: "filters [(l.lv = 10)",
			r: "filters [((r.w = 100) OR (r.w = 300))]",
		},
		{
			// Branches restricting an input alike are tested once.
			q: "select * from l, r where l.id = r.id and ((l.lv = 10 and r.w = 100) or (l.lv = 10 and r.w > 200) or (l.lv = 20 and r.rv = 'c'))",
			l: "filters [((l.lv = 10) OR (l.lv = 20))]",
			r: "filters [(((r.w = 100) OR (r.w > 200)) OR (r.rv = 'c'))]",
		},
		{
			// ON of a left join: the optional side only.
			q: "select * from l left join r on l.id = r.id and ((l.lv = 10 and r.w = 100) or (l.lv = 20 and r.w > 200))",
			r: "filters [((r.w = 100) OR (r.w > 200))]",
		},
	}
	for _, c := range cases {
		plan := optimize(t, cat, c.q)
		for _, side := range []struct{ table, want string }{{"l", c.l}, {"r", c.r}} {
			line := scanLine(plan, side.table)
			if line == "" {
				t.Errorf("%s: no scan of %s:\n%s", c.q, side.table, plan)
				continue
			}
			if side.want == "" {
				if strings.Contains(line, "filters") {
					t.Errorf("%s: scan of %s must stay unfiltered, got %s\n%s", c.q, side.table, line, plan)
				}
				continue
			}
			if !strings.Contains(line, side.want) {
				t.Errorf("%s: scan of %s: want %s, got %s\n%s", c.q, side.table, side.want, line, plan)
			}
			if strings.Count(plan, side.want[len("filters ["):]) != 1 {
				t.Errorf("%s: derived filter %s appears more than once:\n%s", c.q, side.want, plan)
			}
		}
	}
}

func scanLine(plan, table string) string {
	for _, line := range strings.Split(plan, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "Scan "+table+" ") {
			return strings.TrimSpace(line)
		}
	}
	return ""
}
