package shuffle

import (
	"context"
	"errors"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec"
)

// batchGlue collects small batches until they make about target rows and
// then concatenates them into one. Exchanges use it on both sides: a scan
// of many small files yields tiny batches, and a key-group split turns an
// 8K-row batch into ~64-row slices (128 key groups); hashing, splitting
// and operating on such crumbs costs far more per row than on full
// batches.
type batchGlue struct {
	alloc   memory.Allocator
	target  int64
	pending []arrow.RecordBatch
	rows    int64
}

func newBatchGlue(alloc memory.Allocator, target int) *batchGlue {
	if alloc == nil {
		alloc = memory.DefaultAllocator
	}
	return &batchGlue{alloc: alloc, target: int64(target)}
}

// add takes ownership of b. It returns a batch when one is ready: b itself
// if it is at least half the target and nothing is pending, else the glued
// pending batches once they reach the target. Empty batches vanish.
func (g *batchGlue) add(b arrow.RecordBatch) (arrow.RecordBatch, error) {
	n := b.NumRows()
	if n == 0 {
		b.Release()
		return nil, nil
	}
	if len(g.pending) == 0 && n >= g.target/2 {
		return b, nil
	}
	g.pending = append(g.pending, b)
	g.rows += n
	if g.rows >= g.target {
		return g.flush()
	}
	return nil, nil
}

// flush glues whatever is pending; nil when nothing is.
func (g *batchGlue) flush() (arrow.RecordBatch, error) {
	pending := g.pending
	g.pending, g.rows = nil, 0
	if len(pending) == 0 {
		return nil, nil
	}
	defer func() {
		for _, b := range pending {
			b.Release()
		}
	}()
	if len(pending) == 1 {
		pending[0].Retain()
		return pending[0], nil
	}
	// The batches' own schema, not a declared one: they are what gets
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
		col, err := array.Concatenate(parts, g.alloc)
		if err != nil {
			for _, x := range cols {
				x.Release()
			}
			return nil, errs.Wrap(errs.Execution, "gluing exchange batches: %w", err)
		}
		cols = append(cols, col)
	}
	out := array.NewRecordBatch(schema, cols, rows)
	for _, col := range cols {
		col.Release()
	}
	return out, nil
}

// release drops pending batches (error and cancel paths).
func (g *batchGlue) release() {
	for _, b := range g.pending {
		b.Release()
	}
	g.pending, g.rows = nil, 0
}

// coalesceStream is a Stream whose batches are its input's, glued to about
// target rows.
type coalesceStream struct {
	in   exec.Stream
	glue *batchGlue
	eof  bool
}

func newCoalesceStream(in exec.Stream, alloc memory.Allocator, target int) *coalesceStream {
	return &coalesceStream{in: in, glue: newBatchGlue(alloc, target)}
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
		out, err := c.glue.add(b)
		if out != nil || err != nil {
			return out, err
		}
	}
	out, err := c.glue.flush()
	if out == nil && err == nil {
		return nil, io.EOF
	}
	return out, err
}

func (c *coalesceStream) Close() {
	c.glue.release()
	c.in.Close()
}
