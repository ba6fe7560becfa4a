package exec

import (
	"context"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fsql-dev/fsql/exec/expr"
)

// RankLimit is a filter `rank() <= K` (or `row_number() <= K`) above a
// window, known to the window's sort: rows it would number past K in
// their partition are dropped when the buffered rows are sorted, before
// any column of theirs is gathered. q67 keeps 100 rows of each of its
// categories out of 654k, and sorted, gathered and numbered all of them.
//
// Dropping is exact for any subset of the input sorted alone (a run, a
// task's share, what a compaction holds): a row's rank among a subset is
// at most its rank among all rows, so no row the filter keeps is dropped;
// and every dropped row leaves at least K rows strictly before it, so a
// row kept in error is still numbered past K at the end and the filter
// above drops it. For row_number the K rows kept form a valid numbering
// of ties, which row_number leaves free.
type RankLimit struct {
	Fn string // "rank" or "row_number"
	K  int64
}

// String renders the limit as the filter it serves.
func (l *RankLimit) String() string { return fmt.Sprintf("%s <= %d", l.Fn, l.K) }

// keeper returns the filter a sort buffer over keys (the np partition keys
// first, then the order keys) applies to its sorted permutation.
func (l *RankLimit) keeper(keys []SortKey, np int) func(cols []arrow.Array, perm []int32) ([]int32, error) {
	return func(cols []arrow.Array, perm []int32) ([]int32, error) {
		partCmp, err := keyCmps(cols[:np], keys[:np])
		if err != nil {
			return nil, err
		}
		orderCmp, err := keyCmps(cols[np:], keys[np:])
		if err != nil {
			return nil, err
		}
		ordered := len(keys) > np
		out := perm[:0] // written at or behind the read position
		var pos, rank int64
		for i, r := range perm {
			newPart := i == 0 || (np > 0 && partCmp(int(perm[i-1]), int(r)) != 0)
			if newPart {
				pos = 0
			}
			pos++
			switch {
			case l.Fn == "row_number", newPart:
				rank = pos
			case ordered && orderCmp(int(perm[i-1]), int(r)) != 0:
				rank = pos // a new peer group; peers share the first's rank
			}
			if rank <= l.K {
				out = append(out, r)
			}
		}
		return out, nil
	}
}

// rankCompactRows is how many rows a sort buffer with a rank limit holds
// before it sorts them and keeps only the ranked ones (and then again at
// twice what it kept), so its memory follows what it keeps, not its
// input. A variable so that tests compact small inputs.
var rankCompactRows = 8 * BatchSize

// WindowGroupLimit is the partial half of a RankLimit, run in each task
// below the exchange that feeds the window: of the rows of its task it
// passes on only those the limit keeps among them (exact for the reason
// RankLimit gives), so the exchange carries K rows of each partition per
// task rather than all of them. When its first compaction keeps more than
// half of what it read (partitions smaller than K), it gives up and
// passes the rest of its input on unsorted: the window does the work.
type WindowGroupLimit struct {
	Child       Node
	PartitionBy []expr.Expr
	OrderBy     []SortKey
	Limit       RankLimit
}

// Schema implements Node.
func (w *WindowGroupLimit) Schema() *arrow.Schema { return w.Child.Schema() }

// Children implements Node.
func (w *WindowGroupLimit) Children() []Node { return []Node{w.Child} }

// String implements Node.
func (w *WindowGroupLimit) String() string {
	return fmt.Sprintf("WindowGroupLimit(%s, partition by [%s], order by [%s])", w.Limit.String(), exprList(w.PartitionBy), sortKeyList(w.OrderBy))
}

// Open implements Node.
func (w *WindowGroupLimit) Open(tc *TaskContext, inputs []Stream) (Stream, error) {
	if len(inputs) != 1 {
		return nil, fmt.Errorf("%w: WindowGroupLimit wants 1 input, got %d", ErrInternal, len(inputs))
	}
	keys := windowSortKeys(w.PartitionBy, w.OrderBy)
	buf := newSortBuffer(tc, w.Child.Schema(), keys, "window limit", -1)
	buf.keep = w.Limit.keeper(keys, len(w.PartitionBy))
	return &windowLimitStream{buf: buf, in: inputs[0]}, nil
}

// windowLimitStream buffers and compacts its input until the input ends
// or the first compaction shows the limit does not pay; it then hands out
// what it buffered, sorted, and after that (having given up) the rest of
// the input as it comes.
type windowLimitStream struct {
	buf    *sortBuffer
	in     Stream
	sorted bool
	inEOF  bool
}

func (s *windowLimitStream) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !s.sorted {
		for {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			b, err := s.in.Next(ctx)
			if err == io.EOF {
				s.inEOF = true
				break
			}
			if err != nil {
				return nil, err
			}
			if err := s.buf.add(ctx, b); err != nil {
				return nil, err
			}
			if in, kept := s.buf.compactedIn, s.buf.compactedOut; in > 0 && 2*kept > in {
				break // partitions smaller than K: not worth sorting
			}
		}
		if err := s.buf.finish(ctx, 0); err != nil {
			return nil, err
		}
		s.sorted = true
	}
	b, err := s.buf.next(ctx)
	if err != io.EOF || s.inEOF {
		return b, err
	}
	return s.in.Next(ctx)
}

func (s *windowLimitStream) Close() {
	if s.in != nil {
		s.in.Close()
		s.in = nil
	}
	s.buf.release()
}

// windowSortKeys is the order a window sorts its input in: partition keys
// (NULL first, any fixed order groups them), then the order keys.
func windowSortKeys(partitionBy []expr.Expr, orderBy []SortKey) []SortKey {
	keys := make([]SortKey, 0, len(partitionBy)+len(orderBy))
	for _, p := range partitionBy {
		keys = append(keys, SortKey{Expr: p, NullsFirst: true})
	}
	return append(keys, orderBy...)
}
