package runtime

import (
	"fmt"

	"github.com/fsql-dev/fsql/runtime/policy"
	"github.com/fsql-dev/fsql/shuffle"
	"github.com/fsql-dev/fsql/shuffle/keygroup"
)

// broadcastSwitch is a shuffled join that the scheduler may turn into a
// broadcast join at run time, once its build side turned out small
// (Flink's adaptive broadcast join).
//
// The transformation keeps the stages and rewires two edges instead of
// rewriting operator trees: the build stage runs before the probe stage;
// if it wrote fewer than the threshold's bytes, the probe stage's output
// exchange becomes a forward edge (batches stored unsplit, no key-group
// hashing or reordering) and the join stage runs with the probe stage's
// parallelism, task i reading probe task i's output and the whole build
// side. The probe rows are thus never shuffled, and the join runs on the
// probe side's own partitioning, as a broadcast join would. Correct when
// the join's probe side is splittable with the build side whole (inner,
// left, semi and anti joins: each probe row meets the whole build side
// once) along a path of splittable edges (see joinShape). A preserved
// build side (right or full join) is never broadcast.
type broadcastSwitch struct {
	join, probe, build *Stage
	shape              joinShape
	decided, switched  bool
	buildBytes         int64
}

// findSwitches lists the joins of g that may switch: a joinShape stage
// whose probe side is splittable, whose probe stage feeds only it, and
// whose build stage does not wait for the probe stage (it must run first).
func findSwitches(g *JobGraph) []*broadcastSwitch {
	writer := map[*shuffle.Exchange]*Stage{}
	for _, st := range g.Stages {
		if st.Output != nil {
			writer[st.Output] = st
		}
	}
	var out []*broadcastSwitch
	probes := map[*Stage]bool{}
	for _, st := range g.Stages {
		sh, ok := shuffledJoin(st)
		if !ok || !sh.canProbe {
			continue
		}
		p, b := writer[sh.probe], writer[sh.build]
		if p == nil || b == nil || p == b || probes[p] {
			continue
		}
		if len(p.Consumers) != 1 || p.Consumers[0] != st || countInputs(st, sh.probe) != 1 {
			continue
		}
		if waitsFor(b, p, map[*Stage]bool{}) {
			continue
		}
		probes[p] = true
		out = append(out, &broadcastSwitch{join: st, probe: p, build: b, shape: sh})
	}
	return out
}

func countInputs(st *Stage, ex *shuffle.Exchange) int {
	n := 0
	for _, in := range st.Inputs {
		if in == ex {
			n++
		}
	}
	return n
}

// waitsFor reports whether stage s (transitively) waits for stage t.
func waitsFor(s, t *Stage, seen map[*Stage]bool) bool {
	if s == t {
		return true
	}
	if seen[s] {
		return false
	}
	seen[s] = true
	for _, p := range append(append([]*Stage{}, s.Producers...), s.DependsOn...) {
		if waitsFor(p, t, seen) {
			return true
		}
	}
	return false
}

// decide fixes, once the build stage finished, whether the join switches,
// from what the build stage wrote (its output buffer).
func (sw *broadcastSwitch) decide(build *shuffle.Buffer, threshold int64) {
	if sw.decided {
		return
	}
	sw.decided = true
	if build == nil {
		return
	}
	sw.buildBytes = build.TotalBytes()
	sw.switched = policy.SwitchToBroadcast(sw.buildBytes, threshold)
}

// plan is what each of the join stage's p tasks (p = the probe stage's
// parallelism) reads: probe task i's output, and the whole build side.
func (sw *broadcastSwitch) plan(bufs map[*shuffle.Exchange]*shuffle.Buffer, p int) *stagePlan {
	pb, bb := bufs[sw.shape.probe], bufs[sw.shape.build]
	probeBytes := make([]int64, p)
	for i := 0; i < p && i < pb.Producers; i++ {
		probeBytes[i] = pb.Bytes(i, 0)
	}
	var whole int64
	for _, ex := range sw.join.Inputs {
		if ex.Kind != shuffle.Hash {
			whole += bufs[ex].TotalBytes()
		}
	}
	probe, build, taskBytes := policy.ForwardPlan(probeBytes, bb.Subpartitions, bb.TotalBytes(), whole)
	return &stagePlan{
		slices:    map[*shuffle.Exchange][][]keygroup.Slice{sw.shape.probe: probe, sw.shape.build: build},
		taskBytes: taskBytes,
	}
}

// describe is the switch for EXPLAIN ANALYZE; p is the probe stage's
// parallelism.
func (sw *broadcastSwitch) describe(p int) string {
	return fmt.Sprintf("broadcast switch: %s join's build side (Stage %d) wrote %s, under the broadcast threshold; the probe side (Stage %d) was not shuffled and the join ran on its %d tasks",
		sw.shape.join.JoinType(), sw.build.ID, policy.FormatBytes(sw.buildBytes), sw.probe.ID, p)
}
