package planner_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fsql-dev/fsql/connectors/hive"
	"github.com/fsql-dev/fsql/internal/slt"
	"github.com/fsql-dev/fsql/planner"
	"github.com/fsql-dev/fsql/sql"
)

// twoFactCatalog is q72's shape in small: a sales fact with a filtered
// date and a filtered dimension, an inventory fact ten times larger with
// its own date, both dates meeting by week.
func twoFactCatalog(t *testing.T) *hive.Catalog {
	t.Helper()
	var sb strings.Builder
	sb.WriteString("table sales (s_item int, s_date int, s_dim int, s_qty int)\n")
	for i := 0; i < 2000; i++ {
		fmt.Fprintf(&sb, "%d\t%d\t%d\t%d\n", i%100, i%365, i%50, i%7)
	}
	sb.WriteString("\ntable inv (i_item int, i_date int, i_qty int)\n")
	for i := 0; i < 20000; i++ {
		fmt.Fprintf(&sb, "%d\t%d\t%d\n", i%100, 7*(i%52), i%11)
	}
	sb.WriteString("\ntable dates (dk int, week int, yr int)\n")
	for i := 0; i < 365; i++ {
		fmt.Fprintf(&sb, "%d\t%d\t%d\n", i, i/7, i/120)
	}
	sb.WriteString("\ntable dim (k int, attr int)\n")
	for i := 0; i < 50; i++ {
		fmt.Fprintf(&sb, "%d\t%d\n", i, i%5)
	}
	file, err := slt.Parse("two_facts.slt", strings.NewReader(sb.String()))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := slt.WriteTables(dir, file.Tables()); err != nil {
		t.Fatal(err)
	}
	cat, err := hive.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

// The search joins the sales fact with its filtered dimensions first and
// meets the larger inventory fact last, on both of its keys at once; the
// greedy order (search_joins off) starts from inventory.
func TestSearchJoinsTwoFacts(t *testing.T) {
	cat := twoFactCatalog(t)
	q := `select count(*) from sales, inv, dates d1, dates d2, dim
		where s_item = i_item and s_date = d1.dk and i_date = d2.dk and d1.week = d2.week
		and d1.yr = 1 and s_dim = dim.k and dim.attr = 1 and i_qty < s_qty`
	plan := func(disabled map[string]bool) string {
		stmts, err := sql.Parse(q)
		if err != nil {
			t.Fatal(err)
		}
		st, err := sql.NewBinder(cat).Bind(stmts[0])
		if err != nil {
			t.Fatal(err)
		}
		p, err := planner.Optimize(st.Plan, &planner.Context{Disabled: disabled})
		if err != nil {
			t.Fatal(err)
		}
		return planner.Format(p)
	}
	// The join nearest the root is the first one printed.
	topJoin := func(text string) string {
		for _, line := range strings.Split(text, "\n") {
			if strings.Contains(line, "Join inner") {
				return strings.TrimSpace(line)
			}
		}
		return ""
	}
	searched := plan(nil)
	top := topJoin(searched)
	if !strings.Contains(top, "inv.i_item") || !strings.Contains(top, "inv.i_date") {
		t.Errorf("the last join does not meet inventory on item and date:\n%s", searched)
	}
	if strings.Contains(searched, "(cross)") {
		t.Errorf("the search formed a cross product:\n%s", searched)
	}
	greedy := plan(map[string]bool{"search_joins": true})
	if strings.Contains(topJoin(greedy), "inv.") {
		t.Errorf("the greedy order (search_joins off) no longer starts from inventory; the test no longer tells the two apart:\n%s", greedy)
	}
}
