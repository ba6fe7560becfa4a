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
	// via, when set, is the stage's forward input the probe side comes
	// through: probe is then a hash input of via's producer stage, and
	// task t of the join's stage reads what producer task t made of its
	// key groups of probe (a forward edge pairs tasks one to one).
	via *shuffle.Exchange
	// keys are the join's build keys in the order of probe's hash keys.
	keys []expr.Expr
	// buildBytes and buildRows are what the build stage wrote, cost
	// what its table would reserve (exec.BuildCost); set when decided.
	buildBytes, buildRows, cost int64
	// buildHash, when set, is the hash exchange on the join keys the
	// build side was partitioned by before it was broadcast: read by the
	// build stage, or through buildVia (a forward edge) by the stage
	// before it. Each piece of the broadcast output then holds the key
	// groups its producer task read, and a task reads only the pieces
	// it needs, hashing only those it needs part of.
	buildHash, buildVia *shuffle.Exchange
	// overLimit is whether the build is over CoPartitionLimit (held
	// whole it would spill) rather than only large enough that its
	// tasks should not wait for one of them to build it
	// (policy.CoPartitionShared).
	overLimit bool
}

// CoPartitionedBuild is how a task of a co-partitioned join reads its
// broadcast build input: only the rows whose key group, hashed from Keys
// as the hash exchange Probe hashes its keys, lies in the task's
// key-group range of Probe (see coPartition).
type CoPartitionedBuild struct {
	Keys  []expr.Expr
	Probe *shuffle.Exchange
	// Via, when set, is the forward input of the join's stage its probe
	// side comes through (Probe is an input of Via's producer stage, not
	// of the join's): Ranges[t] is then the key-group range of Probe
	// that producer task t read, fixed when the producer stage started,
	// out of KeyGroups.
	Via       *shuffle.Exchange
	Ranges    []KeyGroupRange
	KeyGroups int
	// BuildRanges, when set, are the key groups (out of
	// BuildKeyGroups, hashed from Keys) of each producer's piece of the
	// broadcast build input, by producer task (see
	// coPartition.buildHash): a task reads whole the pieces inside its
	// range, skips those outside it and filters only the others.
	BuildRanges    []KeyGroupRange
	BuildKeyGroups int
}

// KeyGroupRange is the key groups Start..End of a hash exchange one task
// read whole; OK is false when it read anything else (see
// shuffle.Buffer.TaskKeyGroups).
type KeyGroupRange struct {
	Start, End int
	OK         bool
}

// taskRange is the key-group range (out of keyGroups) of the build rows
// task (of parallelism tasks) of stage builds, given the stage's input
// buffers; ok is false when the task must read the build side whole: it
// does not read whole key groups of the probe side, one contiguous range
// (a piece of a key group split for skew), or, through a forward edge,
// it does not read exactly its own producer task's output.
func (cp *CoPartitionedBuild) taskRange(inputs map[*shuffle.Exchange]*shuffle.Buffer, stage, task, parallelism int) (start, end, keyGroups int, ok bool) {
	if cp.Via == nil {
		pb := inputs[cp.Probe]
		if pb == nil {
			return 0, 0, 0, false
		}
		start, end, ok = pb.TaskKeyGroups(stage, task, parallelism)
		return start, end, pb.Subpartitions, ok
	}
	fb := inputs[cp.Via]
	if fb == nil || fb.Kind() != shuffle.Forward || fb.Slices(stage, task) != nil || task >= len(cp.Ranges) || parallelism != len(cp.Ranges) {
		return 0, 0, 0, false
	}
	r := cp.Ranges[task]
	return r.Start, r.End, cp.KeyGroups, r.OK
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
		if cp := coPartitionOf(j); cp != nil && inputs[cp.build] && (cp.via == nil && inputs[cp.probe] || cp.via != nil && inputs[cp.via]) {
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
	// Where each probe key comes from: a column of one hash exchange,
	// read in the join's stage or, through one forward edge, in the
	// stage before it.
	var probe, via *shuffle.Exchange
	from := map[int]int{} // exchange column -> join key
	for i, k := range j.ProbeKeys {
		c, ok := k.(*expr.Column)
		if !ok {
			continue
		}
		ex, col, ok := traceColumn(j.Probe, c.Index)
		var fwd *shuffle.Exchange
		if ok && ex.Kind == shuffle.Forward && ex.Child != nil {
			fwd = ex
			ex, col, ok = traceColumn(ex.Child, col)
		}
		if !ok || ex.Kind != shuffle.Hash || (probe != nil && (ex != probe || fwd != via)) {
			continue
		}
		probe, via = ex, fwd
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
	cp := &coPartition{join: j, build: build, probe: probe, via: via, keys: keys}
	cp.buildHash, cp.buildVia = buildPartitioning(build, keys)
	return cp
}

// buildPartitioning is the hash exchange the broadcast build side was
// partitioned by, if any: the build stage (build.Child) reads it
// directly, or through one forward edge (via), and its hash keys are
// keys (the join's build keys in the order of the probe side's hash
// keys), each traced to it unchanged (traceColumn) with a type that
// hashes alike. Nil when there is none.
func buildPartitioning(build *shuffle.Exchange, keys []expr.Expr) (hash, via *shuffle.Exchange) {
	if build.Child == nil {
		return nil, nil
	}
	for k, key := range keys {
		bk, ok := key.(*expr.Column)
		if !ok {
			return nil, nil
		}
		ex, col, ok := traceColumn(build.Child, bk.Index)
		var fwd *shuffle.Exchange
		if ok && ex.Kind == shuffle.Forward && ex.Child != nil {
			fwd = ex
			ex, col, ok = traceColumn(ex.Child, col)
		}
		if !ok || ex.Kind != shuffle.Hash || len(ex.Keys) != len(keys) || (k > 0 && (ex != hash || fwd != via)) {
			return nil, nil
		}
		hk, ok := ex.Keys[k].(*expr.Column)
		if !ok || hk.Index != col || !sameHash(hk.DataType(), bk.DataType()) {
			return nil, nil
		}
		hash, via = ex, fwd
	}
	return hash, via
}

// buildRanges are the key groups of each producer's piece of the
// broadcast build input b (written by stage bs), out of keyGroups (the
// probe side's), when cp.buildHash says what they are and every edge
// between pairs tasks one to one; nil otherwise.
func (s *scheduler) buildRanges(cp *coPartition, bs *Stage, b *shuffle.Buffer, keyGroups int) []KeyGroupRange {
	if cp.buildHash == nil {
		return nil
	}
	br := s.eg.Run(bs)
	if br == nil || b.Producers != br.Parallelism {
		return nil
	}
	hs := bs // the stage that read cp.buildHash
	if cp.buildVia != nil {
		fb := s.buffers[cp.buildVia]
		if fb == nil || fb.Kind() != shuffle.Forward {
			return nil
		}
		hs = nil
		for i, ex := range bs.Inputs {
			if ex == cp.buildVia && i < len(bs.Producers) {
				hs = bs.Producers[i]
			}
		}
		if hs == nil || s.eg.Run(hs) == nil || s.eg.Run(hs).Parallelism != br.Parallelism {
			return nil
		}
		for u := range br.Parallelism {
			if fb.Slices(bs.ID, u) != nil {
				return nil
			}
		}
	}
	reads := false
	for _, ex := range hs.Inputs {
		reads = reads || ex == cp.buildHash
	}
	hb := s.buffers[cp.buildHash]
	if !reads || hb == nil || !hb.Hashed() || hb.Subpartitions != keyGroups {
		return nil
	}
	hp := s.eg.Run(hs).Parallelism
	out := make([]KeyGroupRange, br.Parallelism)
	for u := range out {
		start, end, ok := hb.TaskKeyGroups(hs.ID, u, hp)
		out[u] = KeyGroupRange{Start: start, End: end, OK: ok}
	}
	return out
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
		case *exec.HashAggregate, *exec.Sort, *exec.TopN, *exec.Window, *exec.WindowGroupLimit, *exec.Rollup:
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
	side := fmt.Sprintf("its probe side is Stage %d's hash exchange on the join keys", probe.ID)
	if cp.via != nil {
		side = fmt.Sprintf("its probe side comes one to one through a forward edge from Stage %d's tasks, each of which read its own key groups of a hash exchange on the join keys", probe.ID)
	}
	if !cp.overLimit {
		return fmt.Sprintf("co-partitioned build: planned broadcast %s join's build side (Stage %d) wrote %s in %d rows, a %s table, at least %s: shared, one task would build it while the others wait; %s, so each of the %d tasks built only the build rows [%s] of its own key groups, all at once",
			cp.join.Type, build.ID, policy.FormatBytes(cp.buildBytes), cp.buildRows, policy.FormatBytes(cp.cost), policy.FormatBytes(policy.CoPartitionSharedMin),
			side, p, strings.Join(keys, ", "))
	}
	return fmt.Sprintf("co-partition switch: planned broadcast %s join's build side (Stage %d) wrote %s in %d rows, a %s table, over half a task's quota (%s of %s); %s, so each of the %d tasks built only the build rows [%s] of its own key groups",
		cp.join.Type, build.ID, policy.FormatBytes(cp.buildBytes), cp.buildRows, policy.FormatBytes(cp.cost), policy.FormatBytes(limit), policy.FormatBytes(quota),
		side, p, strings.Join(keys, ", "))
}

// coPartition decides, when stage run r starts (blocking, adaptive, its
// parallelism p decided from its input), which of its planned broadcast
// joins run co-partitioned: those whose build stage finished and wrote
// more than policy.CoPartitionLimit of a task's quota, over a probe side
// hash-partitioned on their keys. It returns the stage's parallelism,
// raised (policy.CoPartitionParallelism) so each task's part of the
// largest such build fits one operator's fair share of the task's quota:
// with more operators than that in the task it would spill again.
//
// A smaller build runs co-partitioned too when policy.CoPartitionShared
// says so: its stage's tasks all run at once, so shared (exec.SharedBuild)
// one task would build the whole table while the others wait for it;
// co-partitioned they each build their part at the same time, and probe
// a table 1/p the size. The parallelism stays p for those, and for every
// join whose probe side comes through a forward edge (which pairs the
// stage's tasks with its producer's one to one).
func (s *scheduler) coPartition(r *StageRun, bufs map[*shuffle.Exchange]*shuffle.Buffer, p int) int {
	st := r.Stage
	quota := s.cfg.Memory.TaskQuota()
	limit := policy.CoPartitionLimit(quota)
	if r.Decision == nil {
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
	share := quota / int64(max(memoryHolders(st.Root), 1))
	slots := s.usableSlots()
	var chosen []*coPartition
	probeStage := map[*coPartition]*Stage{}
	ranges := map[*coPartition]*CoPartitionedBuild{}
	keyGroupsOf := map[*coPartition]int{}
	var largest int64
	maxTasks := s.cfg.Adaptive.Normalized().MaxParallelism
	for _, cp := range cands {
		bs := writer[cp.build]
		if bs == nil || !s.eg.Run(bs).finished {
			continue // the build's size is not known yet
		}
		b := bufs[cp.build]
		if b == nil {
			continue
		}
		var ps *Stage
		var pb *shuffle.Buffer
		var cb *CoPartitionedBuild
		if cp.via == nil {
			ps, pb = writer[cp.probe], bufs[cp.probe]
		} else {
			// The probe side's key groups were fixed when the forward
			// edge's producer started: task t of this stage reads what
			// its task t made of them.
			fs, fb := writer[cp.via], bufs[cp.via]
			if fs == nil || fb == nil || fb.Kind() != shuffle.Forward {
				continue
			}
			fr := s.eg.Run(fs)
			if fr == nil || !fr.started || fr.Parallelism != p {
				continue
			}
			for _, ex := range fs.Inputs {
				if ex == cp.probe {
					pb = s.buffers[ex]
				}
			}
			if pb == nil || !pb.Hashed() {
				continue
			}
			ps = fs
			cb = &CoPartitionedBuild{Keys: cp.keys, Probe: cp.probe, Via: cp.via, KeyGroups: pb.Subpartitions, Ranges: make([]KeyGroupRange, p)}
			some := false
			for t := range p {
				start, end, ok := pb.TaskKeyGroups(fs.ID, t, p)
				cb.Ranges[t] = KeyGroupRange{Start: start, End: end, OK: ok}
				some = some || ok
			}
			if !some {
				continue
			}
		}
		if pb == nil || ps == nil || !pb.Hashed() {
			continue
		}
		cp.buildBytes, cp.buildRows = b.TotalBytes(), b.TotalRows()
		cp.cost = exec.BuildCost(cp.buildBytes, cp.buildRows)
		cp.overLimit = policy.SwitchToCoPartitioned(cp.cost, limit)
		if !cp.overLimit && !policy.CoPartitionShared(cp.cost, p, slots, share) {
			continue
		}
		chosen = append(chosen, cp)
		probeStage[cp] = ps
		keyGroupsOf[cp] = pb.Subpartitions
		ranges[cp] = cb
		if cp.via != nil {
			maxTasks = p
		}
		if cp.overLimit {
			largest = max(largest, cp.cost)
			maxTasks = min(maxTasks, pb.Subpartitions)
		}
	}
	if len(chosen) == 0 {
		return p
	}
	np := policy.CoPartitionParallelism(p, largest, share, slots, maxTasks)
	if np <= 1 {
		return p // one task reads every key group: nothing to divide
	}
	if np != p {
		r.Decision.Parallelism = np
		r.Decision.Clamps = append(r.Decision.Clamps, fmt.Sprintf("raised to %d by the co-partition switch, so each task's part of its %s build table fits one operator's share (%s) of a task's quota", np, policy.FormatBytes(largest), policy.FormatBytes(share)))
	}
	r.coPartitioned = map[*shuffle.Exchange]*CoPartitionedBuild{}
	for _, cp := range chosen {
		cb := ranges[cp]
		if cb == nil {
			cb = &CoPartitionedBuild{Keys: cp.keys, Probe: cp.probe}
		}
		if kgs := keyGroupsOf[cp]; kgs > 0 {
			if br := s.buildRanges(cp, writer[cp.build], bufs[cp.build], kgs); br != nil {
				cb.BuildRanges, cb.BuildKeyGroups = br, kgs
			}
		}
		r.coPartitioned[cp.build] = cb
		d := cp.describe(writer[cp.build], probeStage[cp], limit, quota, np)
		if cb.BuildRanges != nil {
			d += "; the build side was hash-partitioned on the same keys before its broadcast, so each task read whole the build tasks' pieces inside its key groups and hashed only the rows of those that straddle them"
		}
		r.CoPartitions = append(r.CoPartitions, d)
	}
	return np
}
