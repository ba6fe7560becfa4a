package exec

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// coalesceStream glues the small batches a key-group split leaves behind
// (a 8K-row batch spread over 128 key groups is 64 rows per group) back
// into batches of about target rows, so operators above an exchange work
// on full batches. Batches of at least half the target pass through
// untouched when nothing is pending.
type coalesceStream struct {
	in      Stream
	schema  *arrow.Schema
	alloc   memory.Allocator
	target  int64
	pending []arrow.RecordBatch
	rows    int64
	eof     bool
}

func newCoalesceStream(in Stream, schema *arrow.Schema, alloc memory.Allocator, target int) *coalesceStream {
	if alloc == nil {
		alloc = memory.DefaultAllocator
	}
	return &coalesceStream{in: in, schema: schema, alloc: alloc, target: int64(target)}
}

func (c *coalesceStream) Next(ctx context.Context) (arrow.RecordBatch, error) {
	for !c.eof {
		b, err := c.in.Next(ctx)
		if errors.Is(err, io.EOF) {
			c.eof = true
			break
		}
		if err != nil {
			return nil, err
		}
		n := b.NumRows()
		if n == 0 {
			b.Release()
			continue
		}
		if len(c.pending) == 0 && n >= c.target/2 {
			return b, nil
		}
		c.pending = append(c.pending, b)
		c.rows += n
		if c.rows >= c.target {
			return c.flush()
		}
	}
	if len(c.pending) == 0 {
		return nil, io.EOF
	}
	return c.flush()
}

// flush concatenates the pending batches into one.
func (c *coalesceStream) flush() (arrow.RecordBatch, error) {
	pending := c.pending
	c.pending, c.rows = nil, 0
	defer func() {
		for _, b := range pending {
			b.Release()
		}
	}()
	if len(pending) == 1 {
		pending[0].Retain()
		return pending[0], nil
	}
	// The batches' own schema, not the declared one: they are what gets
	// glued (and nullability flags may legitimately differ).
	schema := pending[0].Schema()
	ncols := len(schema.Fields())
	cols := make([]arrow.Array, 0, ncols)
	parts := make([]arrow.Array, len(pending))
	var rows int64
	for _, b := range pending {
		rows += b.NumRows()
	}
	for i := 0; i < ncols; i++ {
		for j, b := range pending {
			parts[j] = b.Column(i)
		}
		col, err := array.Concatenate(parts, c.alloc)
		if err != nil {
			for _, x := range cols {
				x.Release()
			}
			return nil, fmt.Errorf("%w: coalescing exchange batches: %v", ErrExecution, err)
		}
		cols = append(cols, col)
	}
	out := array.NewRecordBatch(schema, cols, rows)
	for _, col := range cols {
		col.Release()
	}
	return out, nil
}

func (c *coalesceStream) Close() {
	for _, b := range c.pending {
		b.Release()
	}
	c.pending, c.rows = nil, 0
	c.in.Close()
}
