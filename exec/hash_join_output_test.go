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

// A left join over a build side whose keys are all distinct passes each
// probe batch on whole, the build columns gathered beside it
// (emitLeftUnique); NULL and unmatched probe keys get NULL build
// columns, with and without a narrowed output. A build key occurring
// twice (2 below) takes the pair path again.
func TestHashJoinLeftUniqueBuild(t *testing.T) {
	unique := func() *opSource {
		return buildRows(t, []any{1, "b1"}, []any{3, "b3"}, []any{nil, "bn"}, []any{4, "b4"})
	}
	j := hj(t, LeftJoin, unique(), nil)
	wantSet(t, runRows(t, j), "1|p1|1|b1", "2|p2|NULL|NULL", "NULL|pn|NULL|NULL", "4|p4|4|b4", "2|p2b|NULL|NULL")
	j = hj(t, LeftJoin, unique(), nil)
	j.Output = []int{3, 1}
	wantSet(t, runRows(t, j), "b1|p1", "NULL|p2", "NULL|pn", "b4|p4", "NULL|p2b")
	dup := buildRows(t, []any{1, "b1"}, []any{2, "b2"}, []any{2, "b2x"})
	wantSet(t, runRows(t, hj(t, LeftJoin, dup, nil)), "1|p1|1|b1", "2|p2|2|b2", "2|p2|2|b2x", "NULL|pn|NULL|NULL", "4|p4|NULL|NULL", "2|p2b|2|b2", "2|p2b|2|b2x")
	if !uniqueChains([]int32{-1, -1}) || uniqueChains([]int32{-1, 0}) {
		t.Fatal("uniqueChains")
	}
}

// An inner join over distinct build keys whose every probe row matches
// passes the probe batch on like a left join (emitLeftUnique); one probe
// row without a match (a NULL key) sends the batch down the pair path.
func TestHashJoinInnerUniqueAllMatched(t *testing.T) {
	unique := func() *opSource {
		return buildRows(t, []any{1, "b1"}, []any{2, "b2"}, []any{4, "b4"}, []any{nil, "bn"})
	}
	all := func() *opSource {
		return src(t, probeSchema, []any{2, "p2"}, []any{1, "p1"}, []any{4, "p4"}, []any{2, "p2b"})
	}
	j := hj(t, InnerJoin, unique(), nil)
	j.Probe = all()
	wantSet(t, runRows(t, j), "2|p2|2|b2", "1|p1|1|b1", "4|p4|4|b4", "2|p2b|2|b2")
	j = hj(t, InnerJoin, unique(), nil)
	j.Probe = all()
	j.Output = []int{1}
	wantSet(t, runRows(t, j), "p2", "p1", "p4", "p2b")
	j = hj(t, InnerJoin, unique(), nil)
	j.Output = []int{3, 1}
	wantSet(t, runRows(t, j), "b1|p1", "b2|p2", "b4|p4", "b2|p2b")
	if !allMatched([]int32{0, 3}) || allMatched([]int32{0, -1}) {
		t.Fatal("allMatched")
	}
}
