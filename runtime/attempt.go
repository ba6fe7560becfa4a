package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	rtdebug "runtime/debug"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/shuffle"
)

// Worker runs task attempts on a fixed number of slots. It is in-process
// today; a worker in another process would take the same attempts over
// the network.
type Worker struct {
	slots chan struct{}
}

// NewWorker returns a worker with n slots (at least 1).
func NewWorker(n int) *Worker {
	if n < 1 {
		n = 1
	}
	return &Worker{slots: make(chan struct{}, n)}
}

// Slots is the number of attempts the worker runs at once.
func (w *Worker) Slots() int { return cap(w.slots) }

// acquire waits for a free slot, or for ctx to end.
func (w *Worker) acquire(ctx context.Context) error {
	select {
	case w.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (w *Worker) release() { <-w.slots }

// attemptRun is everything one attempt needs; the scheduler fills it.
type attemptRun struct {
	att    *Attempt
	tc     *exec.TaskContext
	graph  *JobGraph
	stats  *exec.QueryStats // nil: no counters
	inputs map[*shuffle.Exchange]*shuffle.Buffer
	out    *shuffle.Buffer          // nil for the result stage
	result chan<- arrow.RecordBatch // result stage only
}

// run executes the attempt on a slot. A panic anywhere in the operators
// becomes an exec.ErrInternal naming the stage and task, with the panic value
// and stack at the message's tail.
func (w *Worker) run(ctx context.Context, r *attemptRun) (err error) {
	if err := w.acquire(ctx); err != nil {
		return err
	}
	defer w.release()
	r.att.Start = time.Now()
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: stage %d task %d panicked: %v\n%s", exec.ErrInternal, r.tc.Stage, r.tc.Task, p, rtdebug.Stack())
		}
		// Once the query is cancelled, operators fail in all sorts of ways
		// (a wrapped context error at best); the cancellation is the cause.
		if err != nil && ctx.Err() != nil {
			err = ctx.Err()
		}
		r.att.End = time.Now()
		r.att.Err = err
	}()
	stream, err := r.open(r.att.Task.Stage.Root)
	if err != nil {
		return err
	}
	defer stream.Close()
	var writer *shuffle.Writer
	if r.out != nil {
		writer = shuffle.NewWriter(r.out, r.tc.Task, r.tc.Alloc)
		defer writer.Close()
	}
	stage := r.att.Task.Stage
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		b, err := stream.Next(ctx)
		if errors.Is(err, io.EOF) {
			if writer != nil {
				return writer.Flush(ctx)
			}
			return nil
		}
		if err != nil {
			return err
		}
		n, nb := b.NumRows(), exec.BatchBytes(b)
		r.att.Rows += n
		r.att.Bytes += nb
		stage.rows.Add(n)
		stage.bytes.Add(nb)
		if writer != nil {
			if err := writer.Write(ctx, b); err != nil {
				return err
			}
			continue
		}
		select {
		case r.result <- b:
		case <-ctx.Done():
			b.Release()
			return ctx.Err()
		}
	}
}

// open opens n's subtree for the attempt's task: exchanges become readers
// of their buffers, every other node is opened over its opened children
// with its own counters in the task context. Every stream is wrapped to
// count rows, batches, bytes and time.
func (r *attemptRun) open(n exec.Node) (exec.Stream, error) {
	op := r.stats.For(r.graph.NodeID(n))
	if ex, ok := n.(*shuffle.Exchange); ok {
		buf := r.inputs[ex]
		if buf == nil {
			return nil, fmt.Errorf("%w: stage %d reads an exchange with no buffer", exec.ErrInternal, r.tc.Stage)
		}
		return instrument(op, shuffle.OpenReader(buf, r.tc.Stage, r.tc.Task, r.tc.Parallelism, r.tc.Alloc)), nil
	}
	kids := n.Children()
	inputs := make([]exec.Stream, 0, len(kids))
	for _, c := range kids {
		s, err := r.open(c)
		if err != nil {
			closeStreams(inputs)
			return nil, err
		}
		inputs = append(inputs, s)
	}
	tc := r.tc
	if op != nil {
		own := *r.tc
		own.Op = op
		tc = &own
	}
	s, err := n.Open(tc, inputs)
	if err != nil {
		// Open failed, so nothing took ownership of the inputs; Close is
		// idempotent should the node have closed some already.
		closeStreams(inputs)
		return nil, err
	}
	if s == nil {
		closeStreams(inputs)
		return nil, fmt.Errorf("%w: %s opened to a nil stream", exec.ErrInternal, n)
	}
	return instrument(op, s), nil
}

func closeStreams(ss []exec.Stream) {
	for _, s := range ss {
		s.Close()
	}
}

func instrument(op *exec.OperatorStats, s exec.Stream) exec.Stream {
	if op == nil {
		return s
	}
	return &instrumentedStream{s: s, st: op}
}

// instrumentedStream fills a node's OperatorStats from outside the
// operator, so every operator is measured the same way.
type instrumentedStream struct {
	s  exec.Stream
	st *exec.OperatorStats
}

func (i *instrumentedStream) Next(ctx context.Context) (arrow.RecordBatch, error) {
	t0 := time.Now()
	b, err := i.s.Next(ctx)
	i.st.Nanos.Add(int64(time.Since(t0)))
	if b != nil {
		i.st.Rows.Add(b.NumRows())
		i.st.Batches.Add(1)
		i.st.Bytes.Add(exec.BatchBytes(b))
	}
	return b, err
}

func (i *instrumentedStream) Close() { i.s.Close() }
