package exec

import (
	"testing"
)

func TestNestedLoopJoin(t *testing.T) {
	// probe (pk, pv) x build (bk, bv) on pk < bk
	b := func() *opSource { return buildRows(t, []any{1, "b1"}, []any{3, "b3"}, []any{nil, "bn"}) }
	lt := cmpExpr(0, 2, "<")
	cases := []struct {
		typ  JoinType
		want []string
	}{
		{InnerJoin, []string{"1|p1|3|b3", "2|p2|3|b3", "2|p2b|3|b3"}},
		{LeftJoin, []string{"1|p1|3|b3", "2|p2|3|b3", "2|p2b|3|b3", "NULL|pn|NULL|NULL", "4|p4|NULL|NULL"}},
		{SemiJoin, []string{"1|p1", "2|p2", "2|p2b"}},
		{AntiJoin, []string{"NULL|pn", "4|p4"}},
	}
	for _, c := range cases {
		t.Run(c.typ.String(), func(t *testing.T) {
			j := &NestedLoopJoin{Type: c.typ, Build: b(), Probe: probeRows(t), Cond: lt}
			wantSet(t, runRows(t, j), c.want...)
		})
	}
	cross := runRows(t, &NestedLoopJoin{Type: InnerJoin, Build: b(), Probe: probeRows(t)})
	if len(cross) != 15 {
		t.Fatalf("cross join: %d rows", len(cross))
	}
	empty := &NestedLoopJoin{Type: AntiJoin, Build: buildRows(t, [][]any{}...), Probe: probeRows(t)}
	if got := runRows(t, empty); len(got) != 5 {
		t.Fatalf("anti join with empty build: %q", got)
	}
	wantRows(t, runRows(t, &NestedLoopJoin{Type: SemiJoin, Build: buildRows(t, [][]any{}...), Probe: probeRows(t)}))
}
