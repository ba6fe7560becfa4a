package exec

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fsql-dev/fsql/exec/expr"
)

// SortKey is one ORDER BY item. The planner passes NullsFirst = !Desc, which
// is MySQL's order (NULL is the smallest value).
type SortKey struct {
	Expr       expr.Expr
	Desc       bool
	NullsFirst bool
}

func (k SortKey) String() string {
	s := k.Expr.String()
	if k.Desc {
		s += " DESC"
	}
	if k.NullsFirst {
		s += " NULLS FIRST"
	} else {
		s += " NULLS LAST"
	}
	return s
}

func sortKeyList(keys []SortKey) string {
	s := make([]string, len(keys))
	for i, k := range keys {
		s[i] = k.String()
	}
	return strings.Join(s, ", ")
}

// Sort orders all rows of its input by Keys. It holds the whole input
// (reserved as "sort" in the memory budget), sorts a permutation of row
// indexes with comparators specialised per key type, and gathers the
// output in batches.
type Sort struct {
	Child Node
	Keys  []SortKey
}

// Schema implements Node.
func (s *Sort) Schema() *arrow.Schema { return s.Child.Schema() }

// Children implements Node.
func (s *Sort) Children() []Node { return []Node{s.Child} }

// String implements Node.
func (s *Sort) String() string { return "Sort(" + sortKeyList(s.Keys) + ")" }

// Open implements Node.
func (s *Sort) Open(tc *TaskContext, inputs []Stream) (Stream, error) {
	if len(inputs) != 1 {
		return nil, fmt.Errorf("%w: Sort wants 1 input, got %d", ErrInternal, len(inputs))
	}
	return &sortStream{buf: newSortBuffer(tc, s.Child.Schema(), s.Keys, "sort"), in: inputs[0]}, nil
}

type sortStream struct {
	buf    *sortBuffer
	in     Stream
	sorted bool
	pos    int
}

func (s *sortStream) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !s.sorted {
		if err := s.buf.drain(ctx, s.in, 0); err != nil {
			return nil, err
		}
		s.in.Close()
		s.in = nil
		if err := s.buf.sort(-1); err != nil {
			return nil, err
		}
		s.sorted = true
	}
	return s.buf.emit(&s.pos, s.buf.n)
}

func (s *sortStream) Close() {
	if s.in != nil {
		s.in.Close()
		s.in = nil
	}
	s.buf.release()
}

// sortBuffer collects batches, sorts them and hands out sorted batches.
// Sort and TopN share it.
type sortBuffer struct {
	tc       *TaskContext
	ec       *expr.Context
	schema   *arrow.Schema
	keys     []SortKey
	who      string
	batches  []arrow.RecordBatch
	rows     int
	reserved int64
	// after sort: the sorted columns
	cols []arrow.Array
	n    int
}

func newSortBuffer(tc *TaskContext, schema *arrow.Schema, keys []SortKey, who string) *sortBuffer {
	return &sortBuffer{tc: tc, ec: exprContext(tc), schema: schema, keys: keys, who: who}
}

// drain reads the input. When compactAt > 0 the buffer is sorted and cut
// to compactAt rows whenever it holds twice that many (top-N).
func (b *sortBuffer) drain(ctx context.Context, in Stream, compactAt int) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		batch, err := in.Next(ctx)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if batch.NumRows() == 0 {
			batch.Release()
			continue
		}
		b.batches = append(b.batches, batch)
		b.rows += int(batch.NumRows())
		n := recordBytes(batch)
		if err := b.tc.Memory.Reserve(b.who, n); err != nil {
			return err
		}
		b.reserved += n
		if compactAt > 0 && b.rows >= max(2*compactAt, BatchSize) {
			if err := b.sort(compactAt); err != nil {
				return err
			}
			// Keep the survivors as the one buffered batch.
			kept := array.NewRecordBatch(b.schema, b.cols, int64(b.n))
			releaseArrays(b.cols)
			b.cols, b.n = nil, 0
			b.batches = []arrow.RecordBatch{kept}
			b.rows = int(kept.NumRows())
			if err := b.resizeReservation(recordBytes(kept)); err != nil {
				return err
			}
		}
	}
}

// resizeReservation makes the buffer's reservation n bytes: a shrink
// gives the difference back, a growth must be granted. What the buffer
// keeps is never released first, so no other reserver can take it in
// between and leave the buffer holding rows the budget does not know of.
func (b *sortBuffer) resizeReservation(n int64) error {
	if n <= b.reserved {
		b.tc.Memory.Release(b.reserved - n)
		b.reserved = n
		return nil
	}
	if err := b.tc.Memory.Reserve(b.who, n-b.reserved); err != nil {
		return err
	}
	b.reserved = n
	return nil
}

// sort orders the buffered rows into b.cols, keeping the first limit rows
// (all when limit < 0).
func (b *sortBuffer) sort(limit int) error {
	all, err := concatColumns(b.ec.Alloc, b.schema, b.batches)
	if err != nil {
		return err
	}
	defer releaseArrays(all)
	releaseBatches(b.batches)
	b.batches = nil
	rows := b.rows
	rb := array.NewRecordBatch(b.schema, all, int64(rows))
	exprs := make([]expr.Expr, len(b.keys))
	for i, k := range b.keys {
		exprs[i] = k.Expr
	}
	keys, err := evalExprs(b.ec, exprs, rb)
	rb.Release()
	if err != nil {
		return err
	}
	perm, err := sortPermutation(keys, b.keys, rows)
	releaseArrays(keys)
	if err != nil {
		return err
	}
	if limit >= 0 && len(perm) > limit {
		perm = perm[:limit]
	}
	cols, err := takeArrays(b.ec.Alloc, all, perm)
	if err != nil {
		return err
	}
	b.cols, b.n = cols, len(perm)
	return nil
}

// emit returns the sorted rows [*pos, end) one batch at a time.
func (b *sortBuffer) emit(pos *int, end int) (arrow.RecordBatch, error) {
	if *pos >= end || b.cols == nil {
		return nil, io.EOF
	}
	to := min(*pos+BatchSize, end)
	cols := sliceArrays(b.cols, *pos, to)
	n := to - *pos
	*pos = to
	return newBatch(b.schema, cols, n), nil
}

func (b *sortBuffer) release() {
	releaseBatches(b.batches)
	b.batches = nil
	releaseArrays(b.cols)
	b.cols = nil
	b.tc.Memory.Release(b.reserved)
	b.reserved = 0
}
