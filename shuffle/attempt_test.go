package shuffle

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/exec/expr"
)

// TestAttemptStagingAndCommit: what an attempt writes is invisible (to
// readers and counters) until it is committed; a discarded attempt's
// batches and memory are given back; a producer commits once.
func TestAttemptStagingAndCommit(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	budget := exec.NewMemoryBudget(0)
	ex := &Exchange{Kind: Hash, Keys: []expr.Expr{expr.NewColumn(0, arrow.PrimitiveTypes.Int64, "v")}, Child: leaf{}}
	buf := NewBuffer(ex, Hash, 4, 2, budget)
	ctx := context.Background()
	write := func(producer, attempt int, from, n int64) {
		t.Helper()
		w := buf.Writer(producer, attempt, mem)
		defer w.Close()
		if err := w.Write(ctx, coalesceTestBatch(mem, from, n)); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// read reads both consumer tasks to the end; with wait set, it stops
	// after wait (a reader waits for producers not committed yet).
	read := func(wait time.Duration) (rows int64) {
		t.Helper()
		for task := 0; task < 2; task++ {
			rctx, cancel := ctx, context.CancelFunc(func() {})
			if wait > 0 {
				rctx, cancel = context.WithTimeout(ctx, wait)
			}
			r := OpenReader(buf, 9, task, 2, mem)
			for {
				b, err := r.Next(rctx)
				if errors.Is(err, io.EOF) || (wait > 0 && errors.Is(err, context.DeadlineExceeded)) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				rows += b.NumRows()
				b.Release()
			}
			r.Close()
			cancel()
		}
		return rows
	}
	write(0, 0, 0, 300)    // producer 0, attempt 0: will be discarded
	write(0, 1, 0, 300)    // producer 0, attempt 1: committed
	write(1, 0, 1000, 500) // producer 1, attempt 0: committed
	if buf.TotalRows() != 0 || read(20*time.Millisecond) != 0 {
		t.Fatalf("staged output visible: %d rows counted", buf.TotalRows())
	}
	staged := budget.Used()
	if err := buf.Commit(0, 1); err != nil {
		t.Fatal(err)
	}
	buf.Discard(0, 0)
	if err := buf.Commit(1, 0); err != nil {
		t.Fatal(err)
	}
	if got := read(0); got != 800 || buf.TotalRows() != 800 {
		t.Fatalf("read %d rows, counted %d, want 800", got, buf.TotalRows())
	}
	if budget.Used() != buf.TotalBytes() || budget.Used() >= staged {
		t.Fatalf("budget %d (staged %d), committed bytes %d", budget.Used(), staged, buf.TotalBytes())
	}
	if err := buf.Commit(0, 0); !errors.Is(err, exec.ErrInternal) {
		t.Fatalf("second commit of producer 0: %v", err)
	}
	// A writer of a discarded attempt is refused and releases its batch.
	w := buf.Writer(1, 1, mem)
	buf.Discard(1, 1)
	if err := w.Write(ctx, coalesceTestBatch(mem, 0, exec.BatchSize)); err == nil {
		t.Fatal("a discarded attempt's write was accepted")
	}
	w.Close()
	buf.Release()
	if budget.Used() != 0 {
		t.Fatalf("budget holds %d after release", budget.Used())
	}
}
