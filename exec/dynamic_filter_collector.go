package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fsql-dev/fsql/exec/expr"
)

// DynamicFilterSink receives the join keys a DynamicFilterDataCollector
// sees; pruning.Coordinator's collectors implement it. Tasks call it
// concurrently.
type DynamicFilterSink interface {
	// Add hands over one batch's evaluated key columns (one array per
	// collector key, same length). The caller releases them after Add
	// returns, so the sink copies what it keeps.
	Add(task, parallelism int, keys []arrow.Array) error
	// Finish is called once by every task at the end of its input, never
	// on error or cancellation: a filter is complete only when all
	// parallelism tasks finished.
	Finish(task, parallelism int) error
}

// DynamicFilterDataCollector passes its child's batches through unchanged
// and feeds the evaluated Keys to Sink. The planner puts it on the
// dimension side of a join whose fact side is pruned by the collected
// keys; it must sit where its input is read to the end (a Finish is only
// sent at io.EOF), e.g. directly below an exchange or a join build side.
type DynamicFilterDataCollector struct {
	ID    int
	Child Node
	Keys  []expr.Expr
	Sink  DynamicFilterSink
}

// Schema implements Node.
func (c *DynamicFilterDataCollector) Schema() *arrow.Schema { return c.Child.Schema() }

// Children implements Node.
func (c *DynamicFilterDataCollector) Children() []Node { return []Node{c.Child} }

// CollectorID implements DynamicFilterProducer.
func (c *DynamicFilterDataCollector) CollectorID() int { return c.ID }

// String implements Node.
func (c *DynamicFilterDataCollector) String() string {
	keys := make([]string, len(c.Keys))
	for i, k := range c.Keys {
		keys[i] = k.String()
	}
	return fmt.Sprintf("DynamicFilterDataCollector(id=%d, keys [%s])", c.ID, strings.Join(keys, ", "))
}

// Open implements Node.
func (c *DynamicFilterDataCollector) Open(tc *TaskContext, inputs []Stream) (Stream, error) {
	if len(inputs) != 1 {
		return nil, fmt.Errorf("%w: DynamicFilterDataCollector wants 1 input, got %d", ErrInternal, len(inputs))
	}
	if c.Sink == nil {
		return nil, fmt.Errorf("%w: dynamic filter collector %d has no sink", ErrInternal, c.ID)
	}
	if len(c.Keys) == 0 {
		return nil, fmt.Errorf("%w: dynamic filter collector %d has no keys", ErrInternal, c.ID)
	}
	task, p := 0, 1
	if tc != nil && tc.Parallelism >= 1 {
		task, p = tc.Task, tc.Parallelism
	}
	return &collectorStream{c: c, in: inputs[0], ec: exprContext(tc), task: task, p: p}, nil
}

type collectorStream struct {
	c       *DynamicFilterDataCollector
	in      Stream
	ec      *expr.Context
	task, p int
	done    bool
	keys    []arrow.Array
}

func (s *collectorStream) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if s.in == nil {
		return nil, io.EOF
	}
	b, err := s.in.Next(ctx)
	if errors.Is(err, io.EOF) {
		if !s.done {
			s.done = true
			if err := s.c.Sink.Finish(s.task, s.p); err != nil {
				return nil, s.wrap(err)
			}
		}
		return nil, io.EOF
	}
	if err != nil {
		return nil, err
	}
	if b.NumRows() == 0 {
		return b, nil
	}
	s.keys = s.keys[:0]
	defer func() {
		for _, k := range s.keys {
			k.Release()
		}
		s.keys = s.keys[:0]
	}()
	for _, k := range s.c.Keys {
		a, err := k.Eval(s.ec, b)
		if err != nil {
			b.Release()
			return nil, fmt.Errorf("%w: dynamic filter collector %d: evaluating %s: %w", ErrExecution, s.c.ID, k, err)
		}
		s.keys = append(s.keys, a)
	}
	if err := s.c.Sink.Add(s.task, s.p, s.keys); err != nil {
		b.Release()
		return nil, s.wrap(err)
	}
	return b, nil
}

// wrap keeps a sink error's own sentinel when it has one.
func (s *collectorStream) wrap(err error) error {
	for _, sentinel := range []error{ErrPlan, ErrNotImplemented, ErrExecution, ErrInternal, ErrResourcesExhausted} {
		if errors.Is(err, sentinel) {
			return fmt.Errorf("dynamic filter collector %d: %w", s.c.ID, err)
		}
	}
	return fmt.Errorf("%w: dynamic filter collector %d: %w", ErrExecution, s.c.ID, err)
}

func (s *collectorStream) Close() {
	if s.in != nil {
		s.in.Close()
		s.in = nil
	}
}
