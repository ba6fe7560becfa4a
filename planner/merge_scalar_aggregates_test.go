package planner_test

import (
	"strings"
	"testing"

	"github.com/fsql-dev/fsql/exec"
)

// TestMergeScalarAggregates counts the scans of plans whose scalar
// aggregates over one table the rule merges, and of plans it must leave
// alone; the answers are checked in testdata/slt/merge_scalar_aggregates.slt.
func TestMergeScalarAggregates(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("table s (q int, p decimal(7,2), c int)\n1\t1.00\t2\n2\t3.00\t4\n")
	sb.WriteString("\ntable u (q int, p decimal(7,2))\n1\t1.00\n")
	sb.WriteString("\ntable r (k int)\n1\n")
	sb.WriteString("\ntable d (dk int, h int)\n1\t8\n")
	sb.WriteString("\ntable g (gk int, n int)\n1\t1\n")
	cat := sltCatalog(t, "m.slt", strings.NewReader(sb.String()))
	cases := []struct {
		name   string
		query  string
		merged int // scans with the rule
		apart  int // without it
	}{
		{"select-list subqueries (q9)", `select (select count(*) from s where q between 1 and 5), (select avg(p) from s where q between 1 and 5),
			(select avg(p) from s where q between 6 and 9), (select count(*) from s where q > 9) from r where k = 1`, 2, 5},
		{"derived tables of a comma join (q28)", `select * from (select avg(p) a, count(distinct p) b from s where q < 3 and (p > 1 or c = 2)) x,
			(select avg(p) a, count(distinct p) b from s where q >= 3 and (p > 2 or c = 4)) y`, 1, 2},
		{"another table between them, a condition over them", `select k from (select count(*) n from s where q < 3) x, r,
			(select sum(c) m from s where q > 3) y where n + k > m`, 2, 3},
		{"different tables", `select (select count(*) from s where q < 3), (select count(*) from u where q < 3) from r`, 3, 3},
		{"an aggregate that does not ignore NULLs", `select (select count(*) from s where q < 3), (select group_concat(q) from s where q > 3) from r`, 3, 3},
		{"a filter that may fail", `select (select count(*) from s where q + 1 > 3), (select count(*) from s where q < 3) from r`, 3, 3},
		{"one join, filters differing on one table (q88)", `select * from (select count(*) a from s, d, g where q = dk and c = gk and h = 8 and n = 1) x,
			(select count(*) b from s, d, g where q = dk and c = gk and h = 9 and n = 1) y, (select sum(p) b from s, d, g where q = dk and c = gk and h = 10 and n = 1) z`, 3, 7},
		{"one join, filters differing on two tables", `select * from (select count(*) a from s, d, g where q = dk and c = gk and h = 8 and n = 1) x,
			(select count(*) b from s, d, g where q = dk and c = gk and h = 9 and n = 2) y`, 6, 6},
		{"joins under different conditions", `select * from (select count(*) a from s, d where q = dk and h = 8) x,
			(select count(*) b from s, d where c = dk and h = 9) y`, 4, 4},
		{"grouped aggregates", `select * from (select q, count(*) n from s where q < 3 group by q) x, (select count(*) m from s where q > 3) y`, 2, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := countScans(physicalIn(t, cat, c.query)); got != c.merged {
				t.Errorf("%d scans, want %d", got, c.merged)
			}
			if got := countScans(physicalIn(t, cat, c.query, "merge_scalar_aggregates")); got != c.apart {
				t.Errorf("without the rule: %d scans, want %d", got, c.apart)
			}
		})
	}
}

func countScans(root exec.Node) int {
	seen := map[exec.Node]bool{}
	n := 0
	var walk func(exec.Node)
	walk = func(x exec.Node) {
		if seen[x] {
			return
		}
		seen[x] = true
		if _, ok := x.(*exec.Scan); ok {
			n++
		}
		for _, c := range x.Children() {
			walk(c)
		}
	}
	walk(root)
	return n
}
