package exec

import "testing"

func TestSplittableSides(t *testing.T) {
	for _, c := range []struct {
		t            JoinType
		probe, build bool
	}{
		{InnerJoin, true, true}, {LeftJoin, true, false}, {SemiJoin, true, false}, {AntiJoin, true, false},
		{RightJoin, false, false}, {FullJoin, false, false}, {NullAwareAntiJoin, false, false}, {MarkJoin, false, false},
	} {
		p, b := splittableSides(c.t)
		if p != c.probe || b != c.build {
			t.Errorf("%s: splittable probe=%v build=%v, want %v %v", c.t, p, b, c.probe, c.build)
		}
	}
}
