package shuffle

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/exec/kernels"
	"github.com/fsql-dev/fsql/shuffle/keygroup"
)

// Writer is the producer side of an exchange in one attempt of a task.
type Writer struct {
	buf      *Buffer
	producer int
	staging  Staging
	out      *attemptOutput
	alloc    memory.Allocator
	ectx     *expr.Context

	hashes []uint32
	kgs    []int32
	counts []int
	starts []int
	idx    []int32
	// glue gathers small input batches into full ones before they are
	// split, so key-group slices are not crumbs of crumbs.
	glue *batchGlue
}

func newWriter(buf *Buffer, producer int, staging Staging, out *attemptOutput, alloc memory.Allocator) *Writer {
	w := &Writer{buf: buf, producer: producer, staging: staging, out: out, alloc: alloc, ectx: &expr.Context{Alloc: alloc}, glue: newBatchGlue(alloc, exec.BatchSize)}
	if buf.Hashed() {
		w.counts = make([]int, buf.Subpartitions)
		w.starts = make([]int, buf.Subpartitions)
	}
	return w
}

// Write routes b (owned by the writer from here on) into the buffer; small
// batches wait to be glued to others. Call Flush after the last Write and
// Close on every path.
func (w *Writer) Write(ctx context.Context, b arrow.RecordBatch) error {
	full, err := w.glue.add(b)
	if full == nil || err != nil {
		return err
	}
	return w.route(ctx, full)
}

// Flush routes the batches still waiting to be glued.
func (w *Writer) Flush(ctx context.Context) error {
	full, err := w.glue.flush()
	if full == nil || err != nil {
		return err
	}
	return w.route(ctx, full)
}

// Close drops batches still waiting (error and cancel paths).
func (w *Writer) Close() { w.glue.release() }

// route stores one full batch, which it owns.
func (w *Writer) route(ctx context.Context, b arrow.RecordBatch) error {
	if !w.buf.Hashed() {
		return w.buf.write(w.staging, w.out, b, []int32{0}, []int32{int32(b.NumRows())})
	}
	return w.writeHash(ctx, b)
}

// writeHash computes each row's key group, reorders the batch by key group
// with one Take, and stores it whole with the row bounds of each key group.
func (w *Writer) writeHash(ctx context.Context, b arrow.RecordBatch) error {
	defer b.Release()
	n := int(b.NumRows())
	keys := make([]arrow.Array, 0, len(w.buf.Exchange.Keys))
	defer func() {
		for _, k := range keys {
			k.Release()
		}
	}()
	for _, k := range w.buf.Exchange.Keys {
		a, err := k.Eval(w.ectx, b)
		if err != nil {
			return err
		}
		keys = append(keys, a)
	}
	if cap(w.hashes) < n {
		w.hashes = make([]uint32, n)
		w.kgs = make([]int32, n)
		w.idx = make([]int32, n)
	}
	hashes, kgs := w.hashes[:n], w.kgs[:n]
	exec.HashColumns(keys, hashes)
	maxP := w.buf.Subpartitions
	clear(w.counts)
	for i, h := range hashes {
		kg := keygroup.ForHash(h, maxP)
		kgs[i] = int32(kg)
		w.counts[kg]++
	}

	sorted := b
	if c := w.counts[kgs[0]]; c != n {
		// Counting sort of row indexes by key group, then one Take.
		off := 0
		for kg, c := range w.counts {
			w.starts[kg] = off
			off += c
		}
		idx := w.idx[:n]
		for i, kg := range kgs {
			idx[w.starts[kg]] = int32(i)
			w.starts[kg]++
		}
		taken, err := takeBatch(w.alloc, b, idx)
		if err != nil {
			return err
		}
		sorted = taken
		defer taken.Release()
	}
	var subs, ends []int32
	end := int32(0)
	for kg, c := range w.counts {
		if c > 0 {
			end += int32(c)
			subs = append(subs, int32(kg))
			ends = append(ends, end)
		}
	}
	sorted.Retain() // the buffer's reference; the deferred releases drop ours
	return w.buf.write(w.staging, w.out, sorted, subs, ends)
}

// takeBatch gathers rows idx of b into a new batch allocated from alloc.
func takeBatch(alloc memory.Allocator, b arrow.RecordBatch, idx []int32) (arrow.RecordBatch, error) {
	out, err := kernels.TakeBatch(alloc, b, idx)
	if err != nil {
		return nil, errs.Wrap(errs.Execution, "shuffle take: %w", err)
	}
	return out, nil
}
