package exec

import (
	"context"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fsql-dev/fsql/errs"
)

// TopN is ORDER BY ... LIMIT N OFFSET Offset in one operator: it keeps
// only the best N+Offset rows seen so far (re-sorting and cutting its
// buffer whenever it doubles), so memory stays proportional to N, not to
// the input. When even N+Offset rows outgrow its share of the budget it
// spills sorted runs of at most N+Offset rows and merges them, stopping
// after N+Offset rows.
type TopN struct {
	Child     Node
	Keys      []SortKey
	N, Offset int64
}

// Schema implements Node.
func (t *TopN) Schema() *arrow.Schema { return t.Child.Schema() }

// Children implements Node.
func (t *TopN) Children() []Node { return []Node{t.Child} }

// String implements Node.
func (t *TopN) String() string {
	return fmt.Sprintf("TopN(%d, offset %d, %s)", t.N, t.Offset, sortKeyList(t.Keys))
}

// Open implements Node.
func (t *TopN) Open(tc *TaskContext, inputs []Stream) (Stream, error) {
	if len(inputs) != 1 {
		return nil, fmt.Errorf("%w: TopN wants 1 input, got %d", ErrInternal, len(inputs))
	}
	keep := t.N + t.Offset
	if t.N < 0 || t.Offset < 0 || keep > 1<<30 {
		return nil, errs.New(errs.Internal, "TopN limit %d offset %d out of range", t.N, t.Offset)
	}
	return &topNStream{t: t, keep: int(keep), buf: newSortBuffer(tc, t.Child.Schema(), t.Keys, "top-n", int(keep)), in: inputs[0]}, nil
}

type topNStream struct {
	t      *TopN
	keep   int
	buf    *sortBuffer
	in     Stream
	sorted bool
}

func (s *topNStream) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.keep == 0 {
		s.Close()
		return nil, io.EOF
	}
	if !s.sorted {
		if err := s.buf.drain(ctx, s.in); err != nil {
			return nil, err
		}
		s.in.Close()
		s.in = nil
		if err := s.buf.finish(ctx, int(s.t.Offset)); err != nil {
			return nil, err
		}
		s.sorted = true
	}
	return s.buf.next(ctx)
}

func (s *topNStream) Close() {
	if s.in != nil {
		s.in.Close()
		s.in = nil
	}
	s.buf.release()
}
