package runtime

import (
	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/runtime/policy"
	"github.com/fsql-dev/fsql/shuffle"
	"github.com/fsql-dev/fsql/shuffle/keygroup"
)

// joinShape is a stage whose two hash inputs meet at one join and whose
// every edge from those inputs up to the stage's root is splittable (see
// exec.SplitInputs), everything else it reads being read whole by every
// task (broadcast inputs). Such a stage may read a key group of a
// splittable side in pieces on several tasks (skew splitting), or read its
// probe side unshuffled with the build side whole (the run-time broadcast
// switch); any other stage keeps whole key groups.
type joinShape struct {
	join         exec.Joiner
	probe, build *shuffle.Exchange
	// canProbe and canBuild say the join may read that side in pieces
	// with the other side whole.
	canProbe, canBuild bool
}

// step is one edge of a path from a stage's root down to an input: the
// node and the index of the child the path takes.
type step struct {
	n     exec.Node
	child int
}

// pathTo returns the path from n down to the exchange target within one
// stage, or nil when target is not below n.
func pathTo(n exec.Node, target *shuffle.Exchange) []step {
	if ex, ok := n.(*shuffle.Exchange); ok {
		if ex == target {
			return []step{}
		}
		return nil
	}
	for i, c := range n.Children() {
		if p := pathTo(c, target); p != nil {
			return append([]step{{n, i}}, p...)
		}
	}
	return nil
}

// splittableEdges reports whether every step splits along its child with
// the node's other inputs read whole: the node declares the child
// splittable, and its other children hold nothing but broadcast inputs.
func splittableEdges(path []step) bool {
	for _, s := range path {
		si, ok := s.n.(exec.SplitInputs)
		if !ok {
			return false
		}
		split := si.SplittableInputs()
		if s.child >= len(split) || !split[s.child] {
			return false
		}
		for i, c := range s.n.Children() {
			if i != s.child && !readWhole(c) {
				return false
			}
		}
	}
	return true
}

// readWhole reports whether every task of a stage reads the same rows from
// n: its leaves are broadcast inputs only.
func readWhole(n exec.Node) bool {
	whole := true
	walkStage(n, func(m exec.Node) {
		if ex, ok := m.(*shuffle.Exchange); ok {
			whole = whole && ex.Kind == shuffle.Broadcast
			return
		}
		if len(m.Children()) == 0 {
			whole = false // a split leaf (scan) or a one-task constant
		}
	})
	return whole
}

// shuffledJoin recognises a joinShape.
func shuffledJoin(st *Stage) (joinShape, bool) {
	var hashIn []*shuffle.Exchange
	for _, ex := range st.Inputs {
		switch ex.Kind {
		case shuffle.Hash:
			hashIn = append(hashIn, ex)
		case shuffle.Gather:
			return joinShape{}, false // one task reads everything
		}
	}
	if len(hashIn) != 2 || hashIn[0] == hashIn[1] {
		return joinShape{}, false
	}
	pa, pb := pathTo(st.Root, hashIn[0]), pathTo(st.Root, hashIn[1])
	if pa == nil || pb == nil {
		return joinShape{}, false
	}
	// The paths share a prefix down to the join where they part.
	k := 0
	for k < len(pa) && k < len(pb) && pa[k].n == pb[k].n && pa[k].child == pb[k].child {
		k++
	}
	if k >= len(pa) || k >= len(pb) || pa[k].n != pb[k].n {
		return joinShape{}, false
	}
	j, ok := pa[k].n.(exec.Joiner)
	si, ok2 := pa[k].n.(exec.SplitInputs)
	if !ok || !ok2 {
		return joinShape{}, false
	}
	if !splittableEdges(pa[:k]) || !splittableEdges(pa[k+1:]) || !splittableEdges(pb[k+1:]) {
		return joinShape{}, false
	}
	probe, build := hashIn[0], hashIn[1]
	pi, bi := pa[k].child, pb[k].child
	if pi == j.BuildInput() {
		probe, build, pi, bi = build, probe, bi, pi
	}
	if bi != j.BuildInput() {
		return joinShape{}, false
	}
	split := si.SplittableInputs()
	sh := joinShape{join: j, probe: probe, build: build}
	sh.canProbe = pi < len(split) && split[pi]
	sh.canBuild = bi < len(split) && split[bi]
	// The other children of the join hold broadcast inputs only.
	for i, c := range pa[k].n.Children() {
		if i != pi && i != bi && !readWhole(c) {
			return joinShape{}, false
		}
	}
	return sh, true
}

// skewPlan is balancedPlan for a joinShape stage with skewed key groups
// (policy.PlanSkew); nil when nothing is split.
func skewPlan(st *Stage, sh joinShape, bufs map[*shuffle.Exchange]*shuffle.Buffer, p int, cfg policy.AdaptiveConfig) (*stagePlan, []policy.SkewSplit) {
	if p < 2 || cfg.SkewFactor <= 0 {
		return nil, nil
	}
	pb, bb := bufs[sh.probe], bufs[sh.build]
	if pb == nil || bb == nil || pb.Forward() || bb.Forward() {
		return nil, nil
	}
	var whole int64
	for _, ex := range st.Inputs {
		if ex.Kind != shuffle.Hash {
			whole += bufs[ex].TotalBytes()
		}
	}
	side := func(b *shuffle.Buffer, can bool) policy.JoinSide {
		s := policy.JoinSide{Bytes: b.SubpartitionBytes(), Splittable: can}
		if can {
			s.Batches = b.BatchCounts()
		}
		return s
	}
	sp := policy.PlanSkew(side(pb, sh.canProbe), side(bb, sh.canBuild), whole, p, cfg)
	if sp == nil {
		return nil, nil
	}
	pl := &stagePlan{
		slices:    map[*shuffle.Exchange][][]keygroup.Slice{sh.probe: sp.Probe, sh.build: sp.Build},
		taskBytes: sp.TaskBytes,
	}
	return pl, sp.Splits
}

// stagePlan is how a stage's tasks read their inputs: for every input
// exchange, the slices of each task (absent: the task reads the whole
// exchange, as for broadcast and gather inputs).
type stagePlan struct {
	slices map[*shuffle.Exchange][][]keygroup.Slice
	// taskBytes is each task's input volume (broadcast inputs included).
	taskBytes []int64
}

// balancedPlan gives each of p tasks a contiguous key-group range of the
// stage's hash inputs with even bytes (summed over every hash input and
// producer); broadcast bytes count toward every task.
func balancedPlan(st *Stage, bufs []*shuffle.Buffer, p int) *stagePlan {
	var kgBytes []int64
	var whole int64
	for i, ex := range st.Inputs {
		b := bufs[i]
		switch ex.Kind {
		case shuffle.Hash:
			sb := b.SubpartitionBytes()
			if kgBytes == nil {
				kgBytes = make([]int64, len(sb))
			}
			for k, n := range sb {
				kgBytes[k] += n
			}
		default:
			whole += b.TotalBytes()
		}
	}
	if kgBytes == nil {
		return nil
	}
	ranges, taskBytes := policy.BalancedRanges(kgBytes, whole, p)
	pl := &stagePlan{slices: map[*shuffle.Exchange][][]keygroup.Slice{}, taskBytes: taskBytes}
	for _, ex := range st.Inputs {
		if ex.Kind != shuffle.Hash {
			continue
		}
		per := make([][]keygroup.Slice, len(ranges))
		for t, r := range ranges {
			per[t] = []keygroup.Slice{keygroup.Whole(r[0], r[1])}
		}
		pl.slices[ex] = per
	}
	return pl
}
