package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/pruning"
)

// DynamicFilterDataCollector passes its child's batches through unchanged
// and hands the evaluated Keys to the run's dynamic-filter coordinator
// (TaskContext.DynamicFilters), under its ID: the plan holds the ID, the
// run holds the keys, so the plan runs again with fresh filters. The
// planner puts it on the dimension side of a join whose fact side is
// pruned by the collected keys; it must sit where its input is read to
// the end (a task's keys count only once it reached io.EOF), e.g.
// directly below an exchange or a join build side.
type DynamicFilterDataCollector struct {
	ID    int
	Child Node
	Keys  []expr.Expr
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
	if tc == nil || tc.DynamicFilters == nil {
		return nil, fmt.Errorf("%w: dynamic filter collector %d: its task has no dynamic-filter coordinator", ErrInternal, c.ID)
	}
	if len(c.Keys) == 0 {
		return nil, fmt.Errorf("%w: dynamic filter collector %d has no keys", ErrInternal, c.ID)
	}
	task, attempt, p := 0, 0, 1
	if tc.Parallelism >= 1 {
		task, attempt, p = tc.Task, tc.Attempt, tc.Parallelism
	}
	sink := tc.DynamicFilters.Collector(c.ID)
	return &collectorStream{c: c, sink: sink, in: inputs[0], ec: exprContext(tc), task: task, attempt: attempt, p: p}, nil
}

type collectorStream struct {
	c                *DynamicFilterDataCollector
	sink             *pruning.Collector
	in               Stream
	ec               *expr.Context
	task, attempt, p int
	done             bool
	keys             []arrow.Array
}

func (s *collectorStream) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if s.in == nil {
		return nil, io.EOF
	}
	b, err := s.in.Next(ctx)
	if errors.Is(err, io.EOF) {
		if !s.done {
			s.done = true
			if err := s.sink.Finish(s.task, s.attempt, s.p); err != nil {
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
	if err := s.sink.Add(s.task, s.attempt, s.p, s.keys); err != nil {
		b.Release()
		return nil, s.wrap(err)
	}
	return b, nil
}

// wrap names the collector in a coordinator error, keeping its kind.
func (s *collectorStream) wrap(err error) error {
	return errs.Wrap(errs.Execution, "dynamic filter collector %d: %w", s.c.ID, err)
}

func (s *collectorStream) Close() {
	if s.in != nil {
		s.in.Close()
		s.in = nil
	}
}
