package exec

import (
	"context"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
)

// Limit passes rows Offset+1 .. Offset+N of its input. Once N rows are out
// it closes its input, which stops everything below it early.
type Limit struct {
	Child     Node
	N, Offset int64
}

// Schema implements Node.
func (l *Limit) Schema() *arrow.Schema { return l.Child.Schema() }

// Children implements Node.
func (l *Limit) Children() []Node { return []Node{l.Child} }

// String implements Node.
func (l *Limit) String() string {
	if l.Offset > 0 {
		return fmt.Sprintf("Limit(%d, offset %d)", l.N, l.Offset)
	}
	return fmt.Sprintf("Limit(%d)", l.N)
}

// Open implements Node.
func (l *Limit) Open(tc *TaskContext, inputs []Stream) (Stream, error) {
	if len(inputs) != 1 {
		return nil, fmt.Errorf("%w: Limit wants 1 input, got %d", ErrInternal, len(inputs))
	}
	return &limitStream{in: inputs[0], skip: l.Offset, left: l.N}, nil
}

type limitStream struct {
	in         Stream
	skip, left int64
}

func (s *limitStream) Next(ctx context.Context) (arrow.RecordBatch, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if s.left <= 0 || s.in == nil {
			s.Close()
			return nil, io.EOF
		}
		b, err := s.in.Next(ctx)
		if err != nil {
			return nil, err
		}
		n := b.NumRows()
		if s.skip >= n {
			s.skip -= n
			b.Release()
			continue
		}
		from, to := s.skip, n
		s.skip = 0
		if to-from > s.left {
			to = from + s.left
		}
		s.left -= to - from
		if from == 0 && to == n {
			return b, nil
		}
		out := b.NewSlice(from, to)
		b.Release()
		return out, nil
	}
}

func (s *limitStream) Close() {
	if s.in != nil {
		s.in.Close()
		s.in = nil
	}
}
