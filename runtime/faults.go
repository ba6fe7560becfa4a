package runtime

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec"
)

// Faults is the fault-injection facility of tests and benchmarks: slowed
// workers and failed or duplicated attempts. It is reachable from Go only
// (RunConfig.Faults; the engine's Engine.WithFaults), never from SQL.
type Faults struct {
	// Slow slows the named workers by a factor: every batch an attempt
	// there processes takes Factor times as long, as on a machine that
	// runs hot. The in-process worker's runner sleeps (Factor-1) times
	// the time each step of the attempt took, so a slowed attempt makes
	// progress at 1/Factor of its rate, not after a fixed delay.
	Slow map[string]float64
	// Attempt, when set, is the fault of each attempt, by stage ID, task
	// index and attempt number (0 first). The Twin of attempt 0 decides
	// whether the task starts as two attempts.
	Attempt func(stage, task, attempt int) AttemptFault
}

// AttemptFault is what is done to one attempt.
//
// The result stage streams its rows to the caller and cannot take them
// back: it never runs as twins, and fails (FailAt, FailAtEnd) only
// before it handed over a batch, where a retry is still safe.
type AttemptFault struct {
	// Twin runs a second attempt of the task beside the first (set on
	// attempt 0), so tests see that a task's output counts once whichever
	// attempt wins.
	Twin bool
	// CancelAfter, when positive, stops the attempt once it produced that
	// many batches, as a scheduler cancelling it would: it ends cancelled
	// mid-way, and another attempt must finish the task.
	CancelAfter int
	// BothFinish lets the second attempt to finish run to its end rather
	// than being cancelled when the first is committed; it is then
	// discarded.
	BothFinish bool
	// FailAt, when positive, fails the attempt instead of handing over its
	// FailAt-th batch, with ErrInjectedFault (retryable, as a lost worker).
	FailAt int
	// FailAtEnd fails the attempt with ErrInjectedFault once it produced
	// everything, before it is committed: all its work is lost.
	FailAtEnd bool
}

// ErrInjectedFault is the error of an attempt failed by Faults. The
// attempt's error wraps it and is marked transient (errs.IsTransient):
// it stands for a lost worker, so failover retries the attempt.
var ErrInjectedFault = errs.New(errs.Execution, "attempt failed by an injected fault")

func injectedFault(stage, task, attempt int, worker string) error {
	return errs.Transient(fmt.Errorf("%w: stage %d task %d attempt %d on %s", ErrInjectedFault, stage, task, attempt, worker))
}

// errFaultCancel is how an attempt that a fault cancelled mid-way ends.
var errFaultCancel = fmt.Errorf("attempt cancelled by an injected fault: %w", context.Canceled)

// pacer slows one attempt by a factor. Every opened stream of the attempt
// calls pace after each Next: the time since the previous mark (work of
// this attempt's goroutine, nested calls included once, since each call
// moves the mark) is followed by a sleep of (factor-1) times it. Waits
// that are not work (handing a result batch to the caller) reset the mark.
type pacer struct {
	factor float64
	mark   time.Time
}

func newPacer(factor float64) *pacer {
	if factor <= 1 {
		return nil
	}
	return &pacer{factor: factor, mark: time.Now()}
}

// pace sleeps for the slowdown of the work done since the last mark; it
// returns ctx's error if the attempt was cancelled meanwhile.
func (p *pacer) pace(ctx context.Context) error {
	if p == nil {
		return nil
	}
	d := time.Duration(float64(time.Since(p.mark)) * (p.factor - 1))
	if d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
	p.mark = time.Now()
	return nil
}

// reset moves the mark to now, not charging the time since the last one.
func (p *pacer) reset() {
	if p != nil {
		p.mark = time.Now()
	}
}

// pacedStream paces every Next of s.
type pacedStream struct {
	s exec.Stream
	p *pacer
}

func (s *pacedStream) Next(ctx context.Context) (b arrow.RecordBatch, err error) {
	b, err = s.s.Next(ctx)
	if perr := s.p.pace(ctx); perr != nil {
		if b != nil {
			b.Release()
		}
		return nil, perr
	}
	return b, err
}

func (s *pacedStream) Close() { s.s.Close() }
