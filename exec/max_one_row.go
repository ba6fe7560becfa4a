package exec

import (
	"context"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fsql-dev/fsql/errs"
)

// MaxOneRow passes through the single row of its input, or nothing, and
// fails the query when the input has more: the guard under a scalar
// subquery, whose value must be one row (SQL: "Subquery returns more than
// 1 row").
type MaxOneRow struct {
	Child Node
}

// Schema implements Node.
func (m *MaxOneRow) Schema() *arrow.Schema { return m.Child.Schema() }

// Children implements Node.
func (m *MaxOneRow) Children() []Node { return []Node{m.Child} }

// String implements Node.
func (m *MaxOneRow) String() string { return "MaxOneRow" }

// Open implements Node.
func (m *MaxOneRow) Open(_ *TaskContext, inputs []Stream) (Stream, error) {
	if len(inputs) != 1 {
		return nil, fmt.Errorf("%w: MaxOneRow wants 1 input, got %d", ErrInternal, len(inputs))
	}
	return &maxOneRowStream{in: inputs[0]}, nil
}

type maxOneRowStream struct {
	in   Stream
	done bool
}

// Next reads the whole input (at most one row may arrive) before handing
// the row on, so a second row is caught even in a later batch.
func (s *maxOneRowStream) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if s.done {
		return nil, io.EOF
	}
	s.done = true
	var row arrow.RecordBatch
	for {
		b, err := s.in.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			if row != nil {
				row.Release()
			}
			return nil, err
		}
		if b.NumRows() == 0 {
			b.Release()
			continue
		}
		if row != nil || b.NumRows() > 1 {
			b.Release()
			if row != nil {
				row.Release()
			}
			return nil, errs.New(errs.ErSubqueryNo1Row, "a scalar subquery returned more than one row")
		}
		row = b
	}
	if row == nil {
		return nil, io.EOF
	}
	return row, nil
}

func (s *maxOneRowStream) Close() {
	if s.in != nil {
		s.in.Close()
		s.in = nil
	}
}
