package exec

import (
	"context"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/exec/kernels"
)

// Filter keeps the rows for which Cond is TRUE; FALSE and NULL drop the row,
// as in a SQL WHERE clause.
type Filter struct {
	Child Node
	Cond  expr.Expr
}

// Schema implements Node: a filter never changes the columns.
func (f *Filter) Schema() *arrow.Schema { return f.Child.Schema() }

// Children implements Node.
func (f *Filter) Children() []Node { return []Node{f.Child} }

// SplittableInputs implements SplitInputs: a filter judges each row alone.
func (f *Filter) SplittableInputs() []bool { return []bool{true} }

// String implements Node.
func (f *Filter) String() string { return fmt.Sprintf("Filter(%s)", f.Cond) }

// Open implements Node.
func (f *Filter) Open(tc *TaskContext, inputs []Stream) (Stream, error) {
	if len(inputs) != 1 {
		return nil, fmt.Errorf("%w: Filter wants 1 input, got %d", ErrInternal, len(inputs))
	}
	if f.Cond.DataType().ID() != arrow.BOOL {
		return nil, fmt.Errorf("%w: filter condition %s is %s, not boolean", ErrInternal, f.Cond, f.Cond.DataType())
	}
	return &filterStream{f: f, in: inputs[0], ec: exprContext(tc), steps: newConjunctSteps(f.Cond, f.Child.Schema())}, nil
}

type filterStream struct {
	f     *Filter
	in    Stream
	ec    *expr.Context
	steps *conjunctSteps // nil: the condition is evaluated whole
}

func (s *filterStream) Next(ctx context.Context) (arrow.RecordBatch, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if s.in == nil {
			return nil, io.EOF
		}
		b, err := s.in.Next(ctx)
		if err != nil {
			return nil, err
		}
		var out arrow.RecordBatch
		if s.steps != nil {
			out, err = s.steps.filter(s.ec, s.f.Cond, b)
		} else {
			out, err = filterBatch(s.ec, s.f.Cond, b)
		}
		b.Release()
		if err != nil {
			return nil, err
		}
		if out != nil {
			return out, nil
		}
	}
}

// filterBatch returns the rows of b where cond is TRUE, b itself (retained)
// when all rows pass, or nil when none does.
func filterBatch(ec *expr.Context, cond expr.Expr, b arrow.RecordBatch) (arrow.RecordBatch, error) {
	if b.NumRows() == 0 {
		return nil, nil
	}
	m, err := cond.Eval(ec, b)
	if err != nil {
		return nil, err
	}
	defer m.Release()
	mask, ok := m.(*array.Boolean)
	if !ok {
		return nil, fmt.Errorf("%w: filter condition %s returned %s", ErrInternal, cond, m.DataType())
	}
	out, _, err := kernels.FilterBatch(ec.Alloc, b, mask, nil)
	return out, err
}

func (s *filterStream) Close() {
	if s.in != nil {
		s.in.Close()
		s.in = nil
	}
}
