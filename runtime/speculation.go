package runtime

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/fsql-dev/fsql/runtime/policy"
)

// Speculative execution. Every check interval the scheduler's loop asks
// the slow-task detector (policy.FindSlowAttempts) about each running
// stage but the result stage. The worker of every slow attempt is
// blocklisted, or its block renewed; then, as long as there are free
// slots the queue does not claim (unclaimedSlots, from FreeSlots, the
// one definition of free capacity), the slow attempts with the longest
// estimated time left get a speculative copy on a usable worker that
// runs no attempt of their task, up to max-concurrent-executions
// attempts per task. The first
// attempt to finish is committed and the others cancelled (loseOthers).
//
// The result stage is excluded: its rows stream to the caller as they
// are produced, and a copy's rows could not be told from the original's.

// speculating reports whether the run speculates.
func (s *scheduler) speculating() bool {
	c := s.cfg.Speculation
	return c.Enabled && c.MaxConcurrent >= 2 && c.Detector.CheckInterval > 0
}

// slowCandidate is a slow attempt whose task may get a copy.
type slowCandidate struct {
	att  *Attempt
	slow policy.SlowAttempt
}

// detect runs the detector over the running stages at now.
func (s *scheduler) detect(ctx context.Context, now time.Time) {
	var cands []slowCandidate
	for _, r := range s.eg.Stages {
		if !r.started || r.finished || r.Stage == s.g.Result || r.live == 0 || s.waitsOnProducers(r) {
			continue
		}
		sample, atts := s.sample(r, now)
		if len(atts) == 0 {
			continue
		}
		for _, sl := range policy.FindSlowAttempts(sample, s.cfg.Speculation.Detector) {
			a := atts[sl.Attempt]
			if a.Slow == "" {
				a.Slow = sl.Why
			}
			s.block(a, now)
			if s.canCopy(a.Task) {
				cands = append(cands, slowCandidate{att: a, slow: sl})
			}
		}
	}
	// Longest time left first over all stages (the detector sorted each).
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].slow.TimeLeft > cands[j].slow.TimeLeft })
	for _, c := range cands {
		if s.unclaimedSlots() <= 0 { // copies never delay a queued attempt
			return
		}
		if err := s.speculate(ctx, c); err != nil {
			s.fail(err)
			return
		}
	}
}

// sample is what the detector sees of stage run r at now. The running
// attempts are numbered by their index in atts (RunningAttempt.Attempt).
func (s *scheduler) sample(r *StageRun, now time.Time) (policy.StageSample, []*Attempt) {
	smp := policy.StageSample{Tasks: len(r.Tasks)}
	var atts []*Attempt
	for _, t := range r.Tasks {
		if c := t.Committed; c != nil {
			smp.Finished = append(smp.Finished, policy.FinishedTask{Duration: c.End.Sub(c.Start), InputBytes: t.InputBytes})
			continue
		}
		for _, a := range t.Attempts {
			started := a.started.Load()
			if a.State() != Running || started == 0 {
				continue
			}
			smp.Running = append(smp.Running, policy.RunningAttempt{
				Task: t.Index, Attempt: len(atts), Elapsed: now.Sub(time.Unix(0, started)),
				InputBytes: t.InputBytes, ReadBytes: a.InputBytes.Load(),
				WorkerPace: s.blocklist.pace(a.Worker, now),
			})
			atts = append(atts, a)
		}
	}
	return smp, atts
}

// recordPaces adds a pace sample (policy.PaceOf) of every committed
// attempt of finished stage run r to its worker's record in the
// blocklist. Only stages whose attempts' times are their own work give
// samples: not the result stage (its time includes the caller's reading)
// nor a stage that ran pipelined (its tasks waited for producers).
func (s *scheduler) recordPaces(r *StageRun, now time.Time) {
	if r.Stage == s.g.Result || r.Pipelined != nil || len(r.Tasks) < 2 {
		return
	}
	peers := make([]policy.FinishedTask, 0, len(r.Tasks)-1)
	for _, t := range r.Tasks {
		c := t.Committed
		if c == nil || c.Worker == "" {
			continue
		}
		peers = peers[:0]
		for _, o := range r.Tasks {
			if o != t && o.Committed != nil {
				peers = append(peers, policy.FinishedTask{Duration: o.Committed.End.Sub(o.Committed.Start), InputBytes: o.InputBytes})
			}
		}
		if pace, ok := policy.PaceOf(c.End.Sub(c.Start), t.InputBytes, peers); ok {
			s.blocklist.recordPace(c.Worker, now, pace)
		}
	}
}

// canCopy reports whether task may get another attempt: not committed,
// fewer than max-concurrent-executions attempts alive, none of them
// waiting in the queue.
func (s *scheduler) canCopy(t *TaskRun) bool {
	if t.Committed != nil {
		return false
	}
	alive := 0
	for _, a := range t.Attempts {
		switch a.State() {
		case Created:
			return false
		case Scheduled, Running:
			alive++
		}
	}
	return alive < s.cfg.Speculation.MaxConcurrent
}

// speculate starts a copy of c's task on a usable worker that runs no
// attempt of it; none, and the task waits for the next check.
func (s *scheduler) speculate(ctx context.Context, c slowCandidate) error {
	t := c.att.Task
	cp := &Attempt{Task: t, Kind: SpeculativeAttempt,
		Why: fmt.Sprintf("speculative copy of attempt %d on %s, which %s", c.att.Number, c.att.Worker, c.slow.Why)}
	for _, a := range t.Attempts {
		if !a.ended() && a.worker >= 0 {
			cp.avoid = append(cp.avoid, a.worker)
		}
	}
	w := s.pickWorker(cp, s.usableWorkers(time.Now()), true)
	if w < 0 {
		return nil
	}
	s.enqueue(cp, false)
	s.unqueue(cp) // placed at once, not behind the queue
	return s.start(ctx, cp, w)
}

// block blocklists the worker of slow attempt a, or renews its block, and
// records it in the run's graph; while half the pool is blocked already
// (policy.MayBlock) it only counts the slow attempt it did not act on.
func (s *scheduler) block(a *Attempt, now time.Time) {
	d := s.cfg.Speculation.BlockDuration
	if d <= 0 {
		return
	}
	why := fmt.Sprintf("attempt %d of stage %d task %d %s", a.Number, a.Task.Stage.Stage.ID, a.Task.Index, a.Slow)
	if !s.blocklist.blockInPool(a.Worker, s.workerIDs, now, d, why) {
		s.eg.NotBlocked++
		return
	}
	until := s.blocklist.until(a.Worker)
	for i := range s.eg.Blocked {
		if b := &s.eg.Blocked[i]; b.Worker == a.Worker {
			if b.Inherited || !b.Until.Before(now) {
				b.Renewals++
			}
			b.Until = until
			return
		}
	}
	s.eg.Blocked = append(s.eg.Blocked, BlockedWorker{Worker: a.Worker, At: now, Until: until, Why: why})
}
