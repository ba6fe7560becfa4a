package runtime

import (
	"context"
	"fmt"
	"strings"

	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/runtime/policy"
	"github.com/fsql-dev/fsql/shuffle"
)

// Hybrid shuffle. In blocking mode a stage starts when every producer
// finished. In the hybrid modes a consumer may also start while producers
// still run ("pipelined"), reading each producer task's output as the
// scheduler commits it (shuffle.SubpartitionStore: readers wait at a
// producer not yet committed and wake on its commit; only commits
// publish, so a failed, cancelled or losing attempt is never read). A
// stage is started pipelined when all of these hold:
//
//   - every input whose producer has not finished is a gather, broadcast,
//     forward or hash edge. Gather, broadcast and forward edges do not need
//     the producer's bytes for the consumer's parallelism (gather: one
//     task; forward: the producer's task count; broadcast: every task
//     reads it whole, and its still unknown bytes are left out of the
//     per-task target). A hash edge does when parallelism is adaptive: the
//     consumer then waits for a first committed task of the producer and
//     decides from the bytes committed so far scaled by the producer's
//     progress (its task count over its committed tasks: tasks get
//     byte-balanced inputs, so the committed ones are a fair sample), and
//     balances its key-group ranges by the committed bytes per key group
//     (the sample's distribution) rather than the final ones; no key group
//     is split for skew (that needs final bytes). A new commit before the
//     consumer fits in the slots makes the estimate again. The consumer's
//     tasks all start at once (the slot rule below), so there are no
//     unstarted ranges left to re-cut once the final bytes are known; the
//     tasks' planned input bytes, which the slow-task detector measures
//     progress against, are refreshed then. With adaptive parallelism off
//     a hash consumer has the run's parallelism and count-based ranges,
//     needing no bytes at all. A join the run-time broadcast switch may
//     change waits as in blocking mode.
//   - a running producer has committed at least one task, and no input
//     that the stage reads whole before it produces anything (the build
//     side of a join, exec.Joiner: a hash join reads its build to the
//     end before it probes) has a running producer. Only commits
//     publish, so before its producers' first commit, or while a build
//     it needs whole is incomplete, a consumer could only wait, holding
//     slots that stages ready to work could use; with one-task producers
//     (most stages of small queries) that wait was the whole of its
//     "pipelined" time. A consumer of a one-task producer is therefore
//     never pipelined: the first commit ends the producer.
//   - every producer has started (so all its attempts exist) and every
//     DependsOn stage finished (dynamic filters are complete);
//   - no running producer stages per-attempt effects besides its output
//     (exec.AttemptStager, a write's files): the scheduler commits those
//     after the output, and a job commit (TableCommit) must see every
//     task's files committed and every losing attempt ended;
//   - the free slots (FreeSlots) hold every queued attempt, producers'
//     included, plus the consumer's tasks. Then every attempt the consumer
//     waits on is placed at once, and what those wait on was placed
//     before them (by the same rule, or they read complete inputs), so a
//     waiting task never holds a slot a task it waits on needs: no
//     deadlock, also with one slot (where nothing is pipelined, since a
//     running producer leaves no slot free). A retry of a producer task
//     goes to the front of the queue and takes the slot its failed
//     attempt left.
//
// Otherwise the stage waits and starts as in blocking mode. In
// ALL_EXCHANGES_HYBRID_FULL (and blocking) output is kept, in memory or
// spilled, until every consumer stage finished, so any retried or
// speculative consumer attempt reads it all again. In
// ALL_EXCHANGES_HYBRID_SELECTIVE output is let go as soon as every
// consumer task that reads it has committed (shuffle/selective.go): a
// committed task never runs again, so attempts that may still run find
// all their input, and only output not consumed yet is kept or spilled.

// ShuffleMode is how exchanges move data between stages
// (execution.batch-shuffle-mode, Flink's values).
type ShuffleMode int

const (
	// AllExchangesBlocking starts a stage when all its producers finished.
	AllExchangesBlocking ShuffleMode = iota
	// AllExchangesHybridFull lets a consumer start while its producers run
	// when the slots allow (see above), and keeps every output for
	// re-reads.
	AllExchangesHybridFull
	// AllExchangesHybridSelective is hybrid too, and releases output once
	// every consumer task reading it committed: only output not consumed
	// yet is kept (or spilled).
	AllExchangesHybridSelective
)

var shuffleModeNames = [...]string{"ALL_EXCHANGES_BLOCKING", "ALL_EXCHANGES_HYBRID_FULL", "ALL_EXCHANGES_HYBRID_SELECTIVE"}

// String is the mode's Flink name.
func (m ShuffleMode) String() string {
	if m >= 0 && int(m) < len(shuffleModeNames) {
		return shuffleModeNames[m]
	}
	return fmt.Sprintf("ShuffleMode(%d)", int(m))
}

// Hybrid reports whether consumers may start before their producers end.
func (m ShuffleMode) Hybrid() bool {
	return m == AllExchangesHybridFull || m == AllExchangesHybridSelective
}

// ParseShuffleMode reads a mode by its Flink name, in any case.
func ParseShuffleMode(s string) (ShuffleMode, error) {
	for i, n := range shuffleModeNames {
		if strings.EqualFold(strings.TrimSpace(s), n) {
			return ShuffleMode(i), nil
		}
	}
	return 0, fmt.Errorf("want %s, %s or %s, got %q", shuffleModeNames[0], shuffleModeNames[1], shuffleModeNames[2], s)
}

// pipelinedKind reports whether an edge of kind k may be read while its
// producer runs without knowing its bytes: its consumer's parallelism
// does not need them.
func pipelinedKind(k shuffle.Kind) bool {
	return k == shuffle.Gather || k == shuffle.Broadcast || k == shuffle.Forward
}

// hybridPlan is a stage's parallelism decided for a pipelined start,
// kept until it starts (or until its producers finished and it starts
// blocking, deciding again from their final bytes).
type hybridPlan struct {
	p       int
	running []*Stage // producers still running when it was decided
	// committed is how many tasks of the running hash producers had
	// committed: a new commit is a larger sample, so the plan is made again.
	committed int
	notes     []string // how each running hash edge's bytes were estimated
}

// hashEstimate is the bytes a running hash producer's output is expected
// to end with: what its committed tasks wrote, scaled by its task count
// over the committed ones (tasks of a stage get byte-balanced inputs, so
// the committed ones are a fair sample). ok is false before the first
// commit: there is no sample yet.
func hashEstimate(pr *StageRun) (bytes int64, note string, ok bool) {
	n, c := len(pr.Tasks), pr.committed
	if c == 0 || n == 0 {
		return 0, "", false
	}
	seen := pr.OutBuffer.TotalBytes()
	bytes = seen * int64(n) / int64(c)
	return bytes, fmt.Sprintf("%s committed by %d of %d tasks, scaled to %s",
		policy.FormatBytes(seen), c, n, policy.FormatBytes(bytes)), true
}

// pipelinable reports whether stage run r, not ready in blocking terms,
// may start now while its producers run (the rules above). It decides
// r's parallelism from what is known of the running producers' bytes and
// keeps it for launch.
func (s *scheduler) pipelinable(ctx context.Context, r *StageRun) (bool, error) {
	st := r.Stage
	if !s.cfg.ShuffleMode.Hybrid() || s.switchByJoin[st] != nil {
		return false, nil
	}
	for _, d := range st.DependsOn {
		if !s.eg.Run(d).finished {
			return false, nil
		}
	}
	var (
		running   []*Stage
		notes     []string
		committed int
		est       []int64
	)
	bufs := make([]*shuffle.Buffer, len(st.Inputs))
	whole := s.readWhole(st)
	for i, p := range st.Producers {
		pr := s.eg.Run(p)
		switch {
		case pr.finished:
			bufs[i] = s.buffers[st.Inputs[i]]
		case !pr.started || pr.OutBuffer == nil || len(p.stagers) > 0 || pr.committed == 0 || whole[st.Inputs[i]]:
			return false, nil
		case pipelinedKind(pr.OutBuffer.Kind()) && pipelinedKind(st.Inputs[i].Kind):
			running = append(running, p)
		case pr.OutBuffer.Kind() == shuffle.Hash && st.Inputs[i].Kind == shuffle.Hash:
			if s.cfg.Adaptive.Enabled {
				bytes, note, ok := hashEstimate(pr)
				if !ok {
					return false, nil
				}
				if est == nil {
					est = make([]int64, len(st.Inputs))
				}
				est[i] = bytes
				notes = append(notes, note)
			}
			// The committed part stands for the whole: its bytes per key
			// group balance the ranges (balancedPlan) as a sample.
			bufs[i] = pr.OutBuffer
			committed += pr.committed
			running = append(running, p)
		default:
			return false, nil
		}
	}
	if len(running) == 0 {
		return false, nil
	}
	if s.hybrid == nil {
		s.hybrid = map[*StageRun]*hybridPlan{}
	}
	h := s.hybrid[r]
	if h == nil || !sameStages(h.running, running) || h.committed != committed {
		// A pipelined start places every task at once (below), so only
		// the unclaimed slots count.
		free := s.unclaimedSlots()
		p, err := s.decide(ctx, r, bufs, est, free, free)
		if err != nil {
			return false, err
		}
		h = &hybridPlan{p: p, running: running, committed: committed, notes: notes}
		s.hybrid[r] = h
	}
	if len(s.queue)+h.p > s.FreeSlots() {
		return false, nil
	}
	r.Pipelined = running
	r.PipelinedEstimates = h.notes
	return true, nil
}

// readWhole is, per input of st, whether st reads it to the end before
// it produces anything: an input under the build side of a join
// (exec.Joiner). Kept per stage; the job graph is immutable.
func (s *scheduler) readWhole(st *Stage) map[*shuffle.Exchange]bool {
	if w, ok := s.whole[st]; ok {
		return w
	}
	w := map[*shuffle.Exchange]bool{}
	var walk func(n exec.Node, build bool)
	walk = func(n exec.Node, build bool) {
		if ex, ok := n.(*shuffle.Exchange); ok {
			if build {
				w[ex] = true
			}
			return // its child is another stage
		}
		j, isJoin := n.(exec.Joiner)
		for i, c := range n.Children() {
			walk(c, build || (isJoin && i == j.BuildInput()))
		}
	}
	walk(st.Root, false)
	if s.whole == nil {
		s.whole = map[*Stage]map[*shuffle.Exchange]bool{}
	}
	s.whole[st] = w
	return w
}

// readsRunningHash reports whether r started while a hash producer of it
// still ran (its key-group ranges come from a sample of the bytes).
func (s *scheduler) readsRunningHash(r *StageRun) bool {
	for _, p := range r.Pipelined {
		if pr := s.eg.Run(p); pr.OutBuffer != nil && pr.OutBuffer.Kind() == shuffle.Hash {
			return true
		}
	}
	return false
}

// pipelinedInputsDone refreshes the planned input bytes of the tasks of
// every stage that started pipelined beside producer stage done, once all
// of its producers have finished: they were planned on the bytes
// committed at its start, and the slow-task detector measures progress
// against them from now on.
func (s *scheduler) pipelinedInputsDone(ctx context.Context, done *Stage) {
	for _, c := range done.Consumers {
		cr := s.eg.Run(c)
		if cr == nil || !cr.started || cr.finished || len(cr.Pipelined) == 0 || !s.ready(c) {
			continue
		}
		planned, err := s.plannedInput(ctx, cr, cr.Parallelism)
		if err != nil {
			continue // the estimate stays as planned; nothing depends on it for correctness
		}
		for i, t := range cr.Tasks {
			if i < len(planned) {
				t.InputBytes = planned[i]
			}
		}
	}
}

// plannedParallelism is the parallelism pipelinable decided for r, if r
// is starting pipelined.
func (s *scheduler) plannedParallelism(r *StageRun) (int, bool) {
	if r.Pipelined == nil || s.hybrid[r] == nil {
		return 0, false
	}
	return s.hybrid[r].p, true
}

// waitsOnProducers reports whether r was started pipelined and still has
// a producer running: its attempts' time is partly waiting for input, so
// the slow-task detector leaves them alone until their producers end.
func (s *scheduler) waitsOnProducers(r *StageRun) bool {
	for _, p := range r.Pipelined {
		if !s.eg.Run(p).finished {
			return true
		}
	}
	return false
}

// distinctStages counts the different stages of sts.
func distinctStages(sts []*Stage) int {
	seen := map[*Stage]bool{}
	for _, s := range sts {
		seen[s] = true
	}
	return len(seen)
}

func sameStages(a, b []*Stage) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
