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

// runAttempt runs one attempt, which its worker began at start (and
// reported as Started), to its end: it opens the stage's tree (each
// exchange input a reader of its buffer), pulls the root's batches and
// writes them into the attempt's staging of the output buffer (or, for the
// result stage, hands them to the caller). A panic anywhere in the
// operators becomes an exec.ErrInternal naming the stage and task, with
// the panic value and stack at the message's tail.
func runAttempt(ctx context.Context, spec *AttemptSpec, ev AttemptEvents, start time.Time) (res AttemptResult) {
	res.Start = start
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer func() {
		if p := recover(); p != nil {
			res.Err = fmt.Errorf("%w: stage %d task %d panicked: %v\n%s", exec.ErrInternal, spec.Stage, spec.Task, p, rtdebug.Stack())
		}
		// Once the attempt is cancelled, operators fail in all sorts of
		// ways (a wrapped context error at best); the cancellation is the
		// cause.
		if res.Err != nil && ctx.Err() != nil && !errors.Is(res.Err, errFaultCancel) {
			res.Err = context.Cause(ctx)
		}
		res.End = time.Now()
	}()
	tc := spec.Services
	tc.Stage, tc.Task, tc.Parallelism, tc.Attempt = spec.Stage, spec.Task, spec.Parallelism, spec.Attempt
	tc.InputRead = ev.ReadBytes
	// The attempt's quota of the budget; closing it after every stream
	// closed (defers run last to first) frees what an operator forgot.
	tc.Pool = tc.Memory.Task()
	defer tc.Pool.Close()
	pace := newPacer(spec.Slowdown)
	o := &opener{spec: spec, ev: ev, tc: &tc, pace: pace}
	stream, err := o.open(spec.Root)
	if err != nil {
		res.Err = err
		return res
	}
	defer stream.Close()
	var writer *shuffle.Writer
	if spec.Output != nil {
		writer = spec.Output.Writer(spec.Task, spec.Attempt, tc.Alloc)
		defer writer.Close()
	}
	batches := 0
	for {
		if err := ctx.Err(); err != nil {
			res.Err = err
			return res
		}
		b, err := stream.Next(ctx)
		if errors.Is(err, io.EOF) {
			if writer != nil {
				res.Err = writer.Flush(ctx)
			}
			if res.Err == nil && spec.Fault.FailAtEnd {
				res.Err = injectedFault(spec.Stage, spec.Task, spec.Attempt, spec.Worker)
			}
			return res
		}
		if err != nil {
			res.Err = err
			return res
		}
		if spec.Fault.FailAt > 0 && batches+1 == spec.Fault.FailAt {
			b.Release()
			res.Err = injectedFault(spec.Stage, spec.Task, spec.Attempt, spec.Worker)
			return res
		}
		res.Rows += b.NumRows()
		res.Bytes += exec.BatchBytes(b)
		if writer != nil {
			if err := writer.Write(ctx, b); err != nil {
				res.Err = err
				return res
			}
		} else {
			select {
			case spec.Result <- b:
				res.Emitted++
			case <-ctx.Done():
				b.Release()
				res.Err = ctx.Err()
				return res
			}
			pace.reset() // waiting for the caller is not the attempt's work
		}
		batches++
		if spec.Fault.CancelAfter > 0 && batches == spec.Fault.CancelAfter {
			res.Err = errFaultCancel
			return res
		}
	}
}

// opener opens a stage's tree for one attempt.
type opener struct {
	spec *AttemptSpec
	ev   AttemptEvents
	tc   *exec.TaskContext
	pace *pacer // nil unless the worker is slowed (Faults.Slow)
}

// open opens n's subtree: exchanges become readers of their buffers, every
// other node is opened over its opened children with its own counters in
// the task context. Every stream is wrapped to count rows, batches, bytes
// and time.
func (o *opener) open(n exec.Node) (exec.Stream, error) {
	op := o.spec.Stats.For(o.spec.Graph.NodeID(n))
	if ex, ok := n.(*shuffle.Exchange); ok {
		buf := o.spec.Inputs[ex]
		if buf == nil {
			return nil, fmt.Errorf("%w: stage %d reads an exchange with no buffer", exec.ErrInternal, o.spec.Stage)
		}
		var in exec.Stream
		if cp := o.spec.CoPartitioned[ex]; cp != nil {
			// A co-partitioned join's build side: only the rows of the
			// key groups this task reads of its probe side; a task that
			// reads no whole key-group range of it reads everything.
			in = cp.open(buf, o.spec, o.tc.Alloc, func(s exec.Stream) exec.Stream { return &inputStream{s: s, ev: o.ev} })
		} else {
			in = &inputStream{s: shuffle.OpenReader(buf, o.spec.Stage, o.spec.Task, o.spec.Parallelism, o.tc.Alloc), ev: o.ev}
		}
		return o.paced(instrument(op, in)), nil
	}
	kids := n.Children()
	inputs := make([]exec.Stream, 0, len(kids))
	for _, c := range kids {
		s, err := o.open(c)
		if err != nil {
			closeStreams(inputs)
			return nil, err
		}
		inputs = append(inputs, s)
	}
	tc := o.tc
	sb := o.spec.SharedBuilds[n]
	rows := o.inputRows(kids)
	if kg := o.keyGroups(kids); op != nil || kg != nil || sb != nil || rows != nil {
		own := *o.tc
		own.Op = op
		own.KeyGroups = kg
		own.SharedBuild = sb
		own.InputRows = rows
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
	return o.paced(instrument(op, s)), nil
}

// inputRows is exec.TaskContext.InputRows for a node over kids: the
// rows this task reads of each exchange among them (-1 for other
// inputs and for a co-partitioned build side, which reads only some of
// its rows), nil when no kid is an exchange.
func (o *opener) inputRows(kids []exec.Node) []int64 {
	var rows []int64
	for i, k := range kids {
		ex, ok := k.(*shuffle.Exchange)
		buf := o.spec.Inputs[ex]
		if !ok || buf == nil || o.spec.CoPartitioned[ex] != nil {
			continue
		}
		if rows == nil {
			rows = make([]int64, len(kids))
			for j := range rows {
				rows[j] = -1
			}
		}
		rows[i] = buf.TaskRows(o.spec.Stage, o.spec.Task, o.spec.Parallelism)
	}
	return rows
}

// paced slows s down when the attempt's worker is slowed.
func (o *opener) paced(s exec.Stream) exec.Stream {
	if o.pace == nil {
		return s
	}
	return &pacedStream{s: s, p: o.pace}
}

func closeStreams(ss []exec.Stream) {
	for _, s := range ss {
		s.Close()
	}
}

// inputStream reports the bytes an attempt reads from an exchange.
type inputStream struct {
	s  exec.Stream
	ev AttemptEvents
}

func (i *inputStream) Next(ctx context.Context) (arrow.RecordBatch, error) {
	b, err := i.s.Next(ctx)
	if b != nil {
		i.ev.ReadBytes(exec.BatchBytes(b))
	}
	return b, err
}

func (i *inputStream) Close() { i.s.Close() }

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
