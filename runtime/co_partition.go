package runtime

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/runtime/policy"
	"github.com/fsql-dev/fsql/shuffle"
)

// coPartition is the run-time broadcast switch the other way round: a
// hash join the planner broadcast (its build side estimated small) whose
// build side turned out larger than a task should hold whole
// (policy.CoPartitionLimit), in a stage whose probe side is already
// hash-partitioned on the join's keys. Held whole, such a build spills,
// and then every task writes and reads back most of its probe rows. Run
// co-partitioned instead: each task of the join's stage reads the
// broadcast build side through a key-group filter
// (shuffle.FilterKeyGroups) and builds only the rows of the key groups its
// probe side holds, so the build is divided among the tasks rather than
// repeated in each.
//
// The build stage has written its output (a broadcast buffer, stored
// unsplit) before the decision can be made, so the output is re-split at
// read time rather than written hash-partitioned: that needs no change to
// the build stage, and every task reads the same buffer, so speculation,
// retries and selective release are unchanged.
//
// Correct when each probe row meets, in its own task, every build row
// that can match it: matching rows have equal keys, so equal hashes and
// key groups, provided the build keys hash as the probe side's exchange
// keys do (each exchange key is a plain column that reaches the join as
// one of its probe keys unchanged, through projections, filters, group
// keys and the probe side of joins, with a build key of the same type).
// The join must judge each probe row alone against the build rows that
// match it: inner, left, semi and anti joins. Not NOT IN (a NULL probe key
// depends on whether the whole build side is empty, and one NULL build
// key anywhere on every row), mark joins (NULL marks depend on the whole
// build side too), nor right and full joins (an unmatched build row would
// be emitted by every task that read it, or judged without all probe
// rows). A task that does not read whole key groups of the probe side (a
// piece of a key group split for skew) reads the build side whole.
type coPartition struct {
	join *exec.HashJoin
	// build is the join's broadcast build input, probe the stage's hash
	// input its probe side is partitioned by.
	build, probe *shuffle.Exchange
	// keys are the join's build keys in the order of probe's hash keys.
	keys []expr.Expr
	// buildBytes and buildRows are what the build stage wrote, cost
	// what its table would reserve (exec.BuildCost); set when decided.
	buildBytes, buildRows, cost int64
}

// CoPartitionedBuild is how a task of a co-partitioned join reads its
// broadcast build input: only the rows whose key group, hashed from Keys
// as the hash exchange Probe hashes its keys, lies in the task's
// key-group range of Probe (see coPartition).
type CoPartitionedBuild struct {
	Keys  []expr.Expr
	Probe *shuffle.Exchange
}

// findCoPartitions lists the hash joins of stage st that could run
// co-partitioned (see coPartition), before any build size is known.
func findCoPartitions(st *Stage) []*coPartition {
	inputs := map[*shuffle.Exchange]bool{}
	for _, ex := range st.Inputs {
		inputs[ex] = true
	}
	var out []*coPartition
	walkStage(st.Root, func(n exec.Node) {
		j, ok := n.(*exec.HashJoin)
		if !ok {
			return
		}
		if cp := coPartitionOf(j); cp != nil && inputs[cp.build] && inputs[cp.probe] {
			out = append(out, cp)
		}
	})
	return out
}

// coPartitionOf is j as a co-partition candidate, or nil.
func coPartitionOf(j *exec.HashJoin) *coPartition {
	switch j.Type {
	case exec.InnerJoin, exec.LeftJoin, exec.SemiJoin, exec.AntiJoin:
	default:
		return nil
	}
	build, ok := j.Build.(*shuffle.Exchange)
	if !ok || build.Kind != shuffle.Broadcast || len(j.BuildKeys) != len(j.ProbeKeys) {
		return nil
	}
	// Where each probe key comes from: a column of one hash exchange.
	var probe *shuffle.Exchange
	from := map[int]int{} // exchange column -> join key
	for i, k := range j.ProbeKeys {
		c, ok := k.(*expr.Column)
		if !ok {
			continue
		}
		ex, col, ok := traceColumn(j.Probe, c.Index)
		if !ok || ex.Kind != shuffle.Hash || (probe != nil && ex != probe) {
			continue
		}
		probe = ex
		if _, seen := from[col]; !seen {
			from[col] = i
		}
	}
	if probe == nil || len(probe.Keys) == 0 {
		return nil
	}
	keys := make([]expr.Expr, len(probe.Keys))
	for k, hk := range probe.Keys {
		c, ok := hk.(*expr.Column)
		if !ok {
			return nil
		}
		i, ok := from[c.Index]
		if !ok {
			return nil
		}
		bk, ok := j.BuildKeys[i].(*expr.Column)
		if !ok || !sameHash(bk.DataType(), hk.DataType()) {
			return nil
		}
		keys[k] = bk
	}
	return &coPartition{join: j, build: build, probe: probe, keys: keys}
}

// sameHash reports whether values of types a and b that a join finds
// equal hash alike (exec.HashColumns): the same type, or two signed
// integer types (hashed as int64 values).
func sameHash(a, b arrow.DataType) bool {
	if arrow.TypeEqual(a, b) {
		return true
	}
	signed := func(t arrow.DataType) bool {
		switch t.ID() {
		case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
			return true
		}
		return false
	}
	return signed(a) && signed(b)
}

// traceColumn follows column c of n's output down to the exchange (an
// input of the stage) it was read from unchanged: through projections of
// plain columns, filters, group keys of aggregates and the probe side of
// joins that emit each probe row as it came (not right or full joins,
// which emit build rows with NULL probe columns). ok is false when the
// column is computed or comes from anywhere else.
func traceColumn(n exec.Node, c int) (*shuffle.Exchange, int, bool) {
	switch n := n.(type) {
	case *shuffle.Exchange:
		return n, c, c >= 0 && c < n.Schema().NumFields()
	case *exec.Project:
		if c < 0 || c >= len(n.Exprs) {
			return nil, 0, false
		}
		col, ok := n.Exprs[c].(*expr.Column)
		if !ok {
			return nil, 0, false
		}
		return traceColumn(n.Child, col.Index)
	case *exec.Filter:
		return traceColumn(n.Child, c)
	case *exec.HashAggregate:
		// A seeded group (ROLLUP's grand total) is made, not read.
		if n.Seed != nil || c < 0 || c >= len(n.GroupBy) {
			return nil, 0, false
		}
		if n.Mode == exec.AggFinal {
			return traceColumn(n.Child, c) // group keys are the first input columns
		}
		col, ok := n.GroupBy[c].(*expr.Column)
		if !ok {
			return nil, 0, false
		}
		return traceColumn(n.Child, col.Index)
	case *exec.HashJoin:
		switch n.Type {
		case exec.InnerJoin, exec.LeftJoin, exec.SemiJoin, exec.AntiJoin, exec.NullAwareAntiJoin, exec.MarkJoin:
		default:
			return nil, 0, false
		}
		o := c
		if n.Output != nil {
			if c < 0 || c >= len(n.Output) {
				return nil, 0, false
			}
			o = n.Output[c]
		}
		if o < 0 || o >= n.Probe.Schema().NumFields() {
			return nil, 0, false
		}
		return traceColumn(n.Probe, o)
	}
	return nil, 0, false
}

// memoryHolders counts the operators of a stage's tree that hold memory
// under a fair share of the task's quota (exec/memory.go).
func memoryHolders(root exec.Node) int {
	n := 0
	walkStage(root, func(m exec.Node) {
		switch m := m.(type) {
		case *exec.HashJoin:
			if len(m.BuildKeys) > 0 {
				n++
			}
		case *exec.HashAggregate, *exec.Sort, *exec.TopN, *exec.Window, *exec.Rollup:
			n++
		}
	})
	return n
}

// describe is the switch for EXPLAIN ANALYZE: which join, how large its
// build side was against the limit, and how the tasks read it.
func (cp *coPartition) describe(build *Stage, probe *Stage, limit, quota int64, p int) string {
	var keys []string
	for _, k := range cp.keys {
		keys = append(keys, k.String())
	}
	return fmt.Sprintf("co-partition switch: planned broadcast %s join's build side (Stage %d) wrote %s in %d rows, a %s table, over half a task's quota (%s of %s); its probe side is Stage %d's hash exchange on the join keys, so each of the %d tasks built only the build rows [%s] of its own key groups",
		cp.join.Type, build.ID, policy.FormatBytes(cp.buildBytes), cp.buildRows, policy.FormatBytes(cp.cost), policy.FormatBytes(limit), policy.FormatBytes(quota),
		probe.ID, p, strings.Join(keys, ", "))
}

// coPartition decides, when stage run r starts (blocking, adaptive, its
// parallelism p decided from its input), which of its planned broadcast
// joins run co-partitioned: those whose build stage finished and wrote
// more than policy.CoPartitionLimit of a task's quota, over a probe side
// hash-partitioned on their keys. It returns the stage's parallelism,
// raised (policy.CoPartitionParallelism) so each task's part of the
// largest such build fits one operator's fair share of the task's quota:
// with more operators than that in the task it would spill again.
func (s *scheduler) coPartition(r *StageRun, bufs map[*shuffle.Exchange]*shuffle.Buffer, p int) int {
	st := r.Stage
	quota := s.cfg.Memory.TaskQuota()
	limit := policy.CoPartitionLimit(quota)
	if limit <= 0 || r.Decision == nil {
		return p
	}
	cands := findCoPartitions(st)
	if len(cands) == 0 {
		return p
	}
	writer := map[*shuffle.Exchange]*Stage{}
	for i, ex := range st.Inputs {
		if i < len(st.Producers) {
			writer[ex] = st.Producers[i]
		}
	}
	var chosen []*coPartition
	var largest int64
	maxTasks := s.cfg.Adaptive.Normalized().MaxParallelism
	for _, cp := range cands {
		bs, ps := writer[cp.build], writer[cp.probe]
		if bs == nil || ps == nil || !s.eg.Run(bs).finished {
			continue // the build's size is not known yet
		}
		b, pb := bufs[cp.build], bufs[cp.probe]
		if b == nil || pb == nil || !pb.Hashed() {
			continue
		}
		cp.buildBytes, cp.buildRows = b.TotalBytes(), b.TotalRows()
		cp.cost = exec.BuildCost(cp.buildBytes, cp.buildRows)
		if !policy.SwitchToCoPartitioned(cp.cost, limit) {
			continue
		}
		chosen = append(chosen, cp)
		largest = max(largest, cp.cost)
		maxTasks = min(maxTasks, pb.Subpartitions)
	}
	if len(chosen) == 0 {
		return p
	}
	share := quota / int64(max(memoryHolders(st.Root), 1))
	np := policy.CoPartitionParallelism(p, largest, share, s.usableSlots(), maxTasks)
	if np <= 1 {
		return p // one task reads every key group: nothing to divide
	}
	if np != p {
		r.Decision.Parallelism = np
		r.Decision.Clamps = append(r.Decision.Clamps, fmt.Sprintf("raised to %d by the co-partition switch, so each task's part of its %s build table fits one operator's share (%s) of a task's quota", np, policy.FormatBytes(largest), policy.FormatBytes(share)))
	}
	r.coPartitioned = map[*shuffle.Exchange]*CoPartitionedBuild{}
	for _, cp := range chosen {
		r.coPartitioned[cp.build] = &CoPartitionedBuild{Keys: cp.keys, Probe: cp.probe}
		r.CoPartitions = append(r.CoPartitions, cp.describe(writer[cp.build], writer[cp.probe], limit, quota, np))
	}
	return np
}
