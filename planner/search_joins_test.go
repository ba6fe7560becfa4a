package planner_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fsql-dev/fsql/connectors/hive"
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
	return sltCatalog(t, "two_facts.slt", strings.NewReader(sb.String()))
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

// zipCatalog is q24's shape in small: sales with a store, an item and a
// customer, and the customer's address, which also meets the store on a
// zip code shared by many addresses. No statistics bound the zip codes.
func zipCatalog(t *testing.T) *hive.Catalog {
	t.Helper()
	var sb strings.Builder
	sb.WriteString("table sales (s_cust int, s_store int, s_item int, s_qty int)\n")
	for i := 0; i < 4000; i++ {
		fmt.Fprintf(&sb, "%d\t%d\t%d\t%d\n", i%400, i%10, i%30, i%7)
	}
	sb.WriteString("\ntable store (st_k int, st_zip varchar, st_market int)\n")
	for i := 0; i < 10; i++ {
		fmt.Fprintf(&sb, "%d\tz%d\t%d\n", i, i%3, i%4)
	}
	sb.WriteString("\ntable item (i_k int, i_color varchar)\n")
	for i := 0; i < 30; i++ {
		fmt.Fprintf(&sb, "%d\tc%d\n", i, i%5)
	}
	sb.WriteString("\ntable customer (c_k int, c_addr int)\n")
	for i := 0; i < 400; i++ {
		fmt.Fprintf(&sb, "%d\t%d\n", i, i%300)
	}
	sb.WriteString("\ntable address (a_k int, a_zip varchar)\n")
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&sb, "%d\tz%d\n", i, i%3)
	}
	return sltCatalog(t, "zips.slt", strings.NewReader(sb.String()))
}

// A join on keys no statistics bound is no key join: the sales rows meet
// the address's zip code only together with its key, in the search and
// in the greedy order alike (taken as a key join, the zip join came
// first: q24's 228k store sales became 252M rows).
func TestJoinOnUnknownKeysWaits(t *testing.T) {
	cat := zipCatalog(t)
	q := `select count(*) from sales, store, item, customer, address
		where s_cust = c_k and s_store = st_k and s_item = i_k
		and c_addr = a_k and st_zip = a_zip and st_market = 1`
	for _, disabled := range []map[string]bool{nil, {"search_joins": true}} {
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
		text := planner.Format(p)
		lines := strings.Split(text, "\n")
		indent := func(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }
		for i, line := range lines {
			if !strings.Contains(line, "Join inner") || !strings.Contains(line, "a_zip") || strings.Contains(line, "a_k") {
				continue
			}
			// The zip join alone may meet the store (dimensions first),
			// never the sales.
			for _, below := range lines[i+1:] {
				if indent(below) <= indent(line) {
					break
				}
				if strings.Contains(below, "Scan sales") {
					t.Errorf("disabled %v: the sales meet the address on the zip code before the customer's key:\n%s", disabled, text)
				}
			}
		}
		if strings.Contains(text, "(cross)") {
			t.Errorf("disabled %v: a cross product:\n%s", disabled, text)
		}
	}
}
