package exec

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// A join with Output emits only those columns of the joined row, in that
// order, for matched pairs and NULL-extended rows of either side alike.
func TestHashJoinOutput(t *testing.T) {
	cases := []struct {
		typ    JoinType
		output []int
		want   []string
	}{
		{InnerJoin, []int{3, 1}, []string{"b1|p1", "b2|p2", "b2x|p2", "b2|p2b", "b2x|p2b"}},
		{LeftJoin, []int{1, 3}, []string{"p1|b1", "p2|b2", "p2|b2x", "p2b|b2", "p2b|b2x", "pn|NULL", "p4|NULL"}},
		{RightJoin, []int{1, 2}, []string{"p1|1", "p2|2", "p2|2", "p2b|2", "p2b|2", "NULL|3", "NULL|NULL"}},
		{FullJoin, []int{3}, []string{"b1", "b2", "b2x", "b2", "b2x", "NULL", "NULL", "b3", "bn"}},
		{InnerJoin, []int{0}, []string{"1", "2", "2", "2", "2"}},
	}
	for _, c := range cases {
		t.Run(c.typ.String(), func(t *testing.T) {
			j := hj(t, c.typ, buildRows(t), nil)
			j.Output = c.output
			if s := j.Schema(); s.NumFields() != len(c.output) {
				t.Fatalf("schema %s, want %d columns", s, len(c.output))
			}
			if !strings.Contains(j.String(), "output [") {
				t.Fatalf("EXPLAIN text %q does not show the output", j)
			}
			wantSet(t, runRows(t, j), c.want...)
		})
	}
}

// Only pair-emitting joins without a residual may narrow their output.
func TestHashJoinOutputRejected(t *testing.T) {
	for _, j := range []*HashJoin{
		func() *HashJoin { j := hj(t, SemiJoin, buildRows(t), nil); j.Output = []int{0}; return j }(),
		func() *HashJoin { j := hj(t, InnerJoin, buildRows(t), notB2x()); j.Output = []int{0}; return j }(),
		func() *HashJoin { j := hj(t, InnerJoin, buildRows(t), nil); j.Output = []int{4}; return j }(),
	} {
		if _, err := j.Open(newTC(memory.DefaultAllocator), []Stream{nil, nil}); err == nil || !strings.Contains(err.Error(), "output") {
			t.Fatalf("%s: Open returned %v, want an error about its output", j, err)
		}
	}
}
