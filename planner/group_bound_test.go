package planner_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fsql-dev/fsql/planner"
	"github.com/fsql-dev/fsql/sql"
)

// TestGroupBound: an aggregate whose keys are columns with statistics is
// estimated at no more groups than the product of their distinct counts
// (each plus one for NULL), and at a tenth of its input when a key is
// unbounded (a string, an expression) or the grouping is a ROLLUP.
func TestGroupBound(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("table f (store int, day int, name varchar, v int)\n")
	for i := range 2000 {
		// store 1..4, day 1..10: 4 and 10 distinct values.
		fmt.Fprintf(&sb, "%d\t%d\tn%d\t%d\n", i%4+1, i%10+1, i, i)
	}
	cat := sltCatalog(t, "f.slt", strings.NewReader(sb.String()))
	for _, c := range []struct {
		query string
		rows  float64
	}{
		{"select store, avg(v) from f group by store", 5},
		{"select store, day, sum(v) from f group by store, day", 5 * 11},
		{"select v, count(*) from f group by v", 200}, // v: 2000 values, more than a tenth
		{"select name, count(*) from f group by name", 200},
		{"select store + 1, count(*) from f group by store + 1", 200},
		{"select store, day, sum(v) from f group by store, day with rollup", 200},
		{"select count(*) from f", 1},
	} {
		stmts, err := sql.Parse(c.query)
		if err != nil {
			t.Fatal(err)
		}
		st, err := sql.NewBinder(cat).Bind(stmts[0])
		if err != nil {
			t.Fatal(err)
		}
		if got := planner.Estimate(st.Plan).Rows; got != c.rows {
			t.Errorf("%s: estimated %v rows, want %v", c.query, got, c.rows)
		}
	}
}
