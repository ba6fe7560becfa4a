package planner_test

import (
	"testing"

	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/shuffle"
)

// windowShape lists a physical plan's windows top first (presorted or
// not, and how many functions each computes) and counts the hash
// exchanges.
func windowShape(root exec.Node) (windows []*exec.Window, hashes int) {
	var walk func(n exec.Node)
	walk = func(n exec.Node) {
		switch x := n.(type) {
		case *exec.Window:
			windows = append(windows, x)
		case *shuffle.Exchange:
			if x.Kind == shuffle.Hash {
				hashes++
			}
		}
		for _, c := range n.Children() {
			walk(c)
		}
	}
	walk(root)
	return windows, hashes
}

func TestOrderWindows(t *testing.T) {
	cases := []struct {
		name, query string
		// funcs per window, top first; presorted per window
		funcs     []int
		presorted []bool
		hashes    int
	}{
		{
			name:  "one partitioning and order: one window",
			query: "select sum(lv) over (partition by name order by id), max(lv) over (partition by name order by id), rank() over (partition by name order by id) from l",
			funcs: []int{3}, presorted: []bool{false}, hashes: 1,
		},
		{
			name:  "q47: the rank goes below, the average reads its order",
			query: "select avg(lv) over (partition by name, id), rank() over (partition by name order by id, lv) from l",
			funcs: []int{1, 1}, presorted: []bool{true, false}, hashes: 1,
		},
		{
			name:  "different frames over one order: two windows, the upper presorted",
			query: "select sum(lv) over (partition by name order by id rows between 1 preceding and current row), sum(lv) over (partition by name order by id) from l",
			funcs: []int{1, 1}, presorted: []bool{true, false}, hashes: 1,
		},
		{
			name:  "a frameless function joins a framed window",
			query: "select sum(lv) over (partition by name order by id rows between 1 preceding and current row), lag(lv) over (partition by name order by id) from l",
			funcs: []int{2}, presorted: []bool{false}, hashes: 1,
		},
		{
			name:  "unrelated partitionings: each shuffles and sorts",
			query: "select rank() over (partition by name order by id), rank() over (partition by id order by name) from l",
			funcs: []int{1, 1}, presorted: []bool{false, false}, hashes: 2,
		},
		{
			name:  "an order that differs in direction is not served",
			query: "select rank() over (partition by name order by id), rank() over (partition by name order by id desc) from l",
			funcs: []int{1, 1}, presorted: []bool{false, false}, hashes: 2,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws, hashes := windowShape(physicalOf(t, c.query))
			if len(ws) != len(c.funcs) {
				t.Fatalf("%d windows, want %d: %v", len(ws), len(c.funcs), ws)
			}
			for i, w := range ws {
				if len(w.Funcs) != c.funcs[i] || w.Presorted != c.presorted[i] {
					t.Errorf("window %d: %s, want %d functions, presorted %v", i, w, c.funcs[i], c.presorted[i])
				}
			}
			if hashes != c.hashes {
				t.Errorf("%d hash exchanges, want %d", hashes, c.hashes)
			}
			// With the rule off every function is its own window.
			off, _ := windowShape(physicalOf(t, c.query, "order_windows"))
			n := 0
			for _, f := range c.funcs {
				n += f
			}
			if len(off) != n {
				t.Errorf("rule off: %d windows, want %d", len(off), n)
			}
		})
	}
}
