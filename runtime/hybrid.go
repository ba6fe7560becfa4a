package runtime

import (
	"context"
	"fmt"
	"strings"

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
//   - every input whose producer has not finished is a gather, broadcast
//     or forward edge: those are the edges whose consumer parallelism does
//     not depend on the producer's bytes (gather: one task; forward: the
//     producer's task count; broadcast: every task reads it whole, and its
//     still unknown bytes are left out of the per-task target). Hash edges
//     stay blocking: their parallelism and byte-balanced key-group ranges
//     come from the producers' final bytes. A join the run-time broadcast
//     switch may change waits as in blocking mode, too.
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
// Otherwise the stage waits and starts as in blocking mode. Output is
// kept until every consumer stage finished, so a retried or speculative
// consumer attempt reads it all again (ALL_EXCHANGES_HYBRID_FULL).
// ALL_EXCHANGES_HYBRID_SELECTIVE runs the same way for now: releasing
// output a consumer already took from memory needs the spill files of
// the spilling work, so a re-reading attempt can find it.

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
	// AllExchangesHybridSelective is hybrid too; it is meant to keep only
	// output not consumed from memory (today it keeps all, as full does).
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
// producer runs: its consumer's parallelism does not need its bytes.
func pipelinedKind(k shuffle.Kind) bool {
	return k == shuffle.Gather || k == shuffle.Broadcast || k == shuffle.Forward
}

// hybridPlan is a stage's parallelism decided for a pipelined start,
// kept until it starts (or until its producers finished and it starts
// blocking, deciding again from their final bytes).
type hybridPlan struct {
	p       int
	running []*Stage // producers still running when it was decided
}

// pipelinable reports whether stage run r, not ready in blocking terms,
// may start now while its producers run (the rules above). It decides
// r's parallelism once, from what is known without the running
// producers' bytes, and keeps it for launch.
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
	var running []*Stage
	bufs := make([]*shuffle.Buffer, len(st.Inputs))
	for i, p := range st.Producers {
		pr := s.eg.Run(p)
		switch {
		case pr.finished:
			bufs[i] = s.buffers[st.Inputs[i]]
		case !pr.started || pr.OutBuffer == nil || !pipelinedKind(pr.OutBuffer.Kind()) || !pipelinedKind(st.Inputs[i].Kind) || len(p.stagers) > 0:
			return false, nil
		default:
			running = append(running, p)
		}
	}
	if len(running) == 0 {
		return false, nil
	}
	if s.hybrid == nil {
		s.hybrid = map[*StageRun]*hybridPlan{}
	}
	h := s.hybrid[r]
	if h == nil || !sameStages(h.running, running) {
		p, err := s.decide(ctx, r, bufs, s.unclaimedSlots())
		if err != nil {
			return false, err
		}
		h = &hybridPlan{p: p, running: running}
		s.hybrid[r] = h
	}
	if len(s.queue)+h.p > s.FreeSlots() {
		return false, nil
	}
	r.Pipelined = running
	return true, nil
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
