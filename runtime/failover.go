package runtime

import (
	"errors"
	"fmt"
	"time"

	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec"
)

// Failover. An attempt that failed with an error marked retryable
// (errs.IsTransient: a lost worker, a transient I/O error, an injected
// fault) gets a new attempt of its task, on another worker where there is
// one, up to restart-strategy.fixed-delay.attempts times per task. It
// starts as soon as such a worker has a free slot;
// restart-strategy.fixed-delay.delay applies only to a retry that must go
// back to a worker where its task failed (the only worker, or every other
// one gone), to give a transient fault there time to pass. Waiting out
// the delay elsewhere would only idle a slot: with one injected failure
// per query, the 100 ms default made the 20-query set take 1.7x its
// fault-free time on 4 workers. The
// retry reads what the first attempt read: a source task the same splits
// (the assignment depends only on the splits and the parallelism), a
// consumer task the same committed input (buffers live until their
// consumer stages finished). Any other error is the query's own and fails
// it at once, unchanged. A result-stage attempt that already handed rows
// to the caller is not retried.

// retry handles failed attempt att of a task with no committed attempt:
// it queues a retry, leaves the task to another attempt still running, or
// returns the error that fails the query.
func (s *scheduler) retry(att *Attempt, res AttemptResult) error {
	task := att.Task
	r := task.Stage
	retryable := errs.IsTransient(res.Err)
	if retryable && r.Stage == s.g.Result && res.Emitted > 0 {
		return errs.Wrap(errs.Execution, "stage %d task %d failed after it streamed %d batches to the caller, so it cannot be retried: %w", r.Stage.ID, task.Index, res.Emitted, res.Err)
	}
	if att.Kind == SpeculativeAttempt && errors.Is(res.Err, exec.ErrResourcesExhausted) && s.hasOther(att) {
		// The copy's own memory did not fit beside the original: that is
		// the copy's cost, not the query's failure.
		return nil
	}
	ok, delay := s.cfg.Restart.Retry(retryable, task.failures)
	if !ok {
		if !retryable {
			return res.Err // the query's own error, as it was
		}
		if s.hasOther(att) {
			return nil
		}
		return errs.Wrap(errs.Execution, "stage %d task %d failed %d times (restart-strategy.fixed-delay.attempts is %d); the last failure: %w",
			r.Stage.ID, task.Index, task.failures, s.cfg.Restart.Attempts, res.Err)
	}
	if s.hasOther(att) {
		return nil // a copy still runs and may finish the task
	}
	n := &Attempt{Task: task, Kind: RetryAttempt, Why: fmt.Sprintf("retry of attempt %d, which failed on %s: %s", att.Number, att.Worker, firstLine(res.Err))}
	for _, a := range task.Attempts {
		if a.State() == Failed {
			n.avoid = append(n.avoid, a.worker)
		}
	}
	if delay > 0 {
		n.notBefore = time.Now().Add(delay)
	}
	s.enqueue(n, true)
	return nil
}

// enqueue numbers att as its task's next attempt and queues it, at the
// front when front (a retry holds up its stage; it goes first).
func (s *scheduler) enqueue(att *Attempt, front bool) {
	t := att.Task
	att.Number = len(t.Attempts)
	att.worker = -1
	t.Attempts = append(t.Attempts, att)
	t.Stage.open++
	if front {
		s.queue = append([]*Attempt{att}, s.queue...)
	} else {
		s.queue = append(s.queue, att)
	}
}
