package shuffle

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.uber.org/goleak"

	"github.com/fsql-dev/fsql/exec"
)

// writeIDs writes one batch of ids into attempt of producer.
func writeIDs(t *testing.T, buf *Buffer, mem memory.Allocator, producer, attempt int, ids ...int64) {
	t.Helper()
	w := buf.Writer(producer, attempt, mem)
	defer w.Close()
	ib, kb := array.NewInt64Builder(mem), array.NewInt64Builder(mem)
	defer ib.Release()
	defer kb.Release()
	ib.AppendValues(ids, nil)
	kb.AppendValues(make([]int64, len(ids)), nil)
	ia, ka := ib.NewArray(), kb.NewArray()
	rb := array.NewRecordBatch(kvSchema, []arrow.Array{ia, ka}, int64(len(ids)))
	ia.Release()
	ka.Release()
	if err := buf.write(w.staging, w.out, rb, []int32{0}, []int32{int32(len(ids))}); err != nil {
		t.Fatal(err)
	}
}

// A reader opened before its producers committed (hybrid shuffle) waits
// at each producer not yet committed, wakes on its commit, never sees a
// discarded attempt's rows, reads producers in index order whatever the
// commit order, and ends once every producer committed.
func TestReaderFollowsCommits(t *testing.T) {
	defer goleak.VerifyNone(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	buf := NewBuffer(&Exchange{Kind: Gather, Child: leaf{}}, Gather, 1, 3, exec.NewMemoryBudget(0))
	defer buf.Release()

	r := buf.store.Open(0, 0)
	defer r.Close()
	type got struct {
		ids []int64
		err error
	}
	batches := make(chan got)
	go func() {
		for {
			b, err := r.Next(context.Background())
			if err != nil {
				batches <- got{err: err}
				return
			}
			batches <- got{ids: append([]int64(nil), b.Column(0).(*array.Int64).Int64Values()...)}
			b.Release()
		}
	}()
	quiet := func(what string) {
		t.Helper()
		select {
		case g := <-batches:
			t.Fatalf("%s: the reader returned %v, %v before the producer it needs committed", what, g.ids, g.err)
		case <-time.After(50 * time.Millisecond):
		}
	}
	want := func(ids ...int64) {
		t.Helper()
		select {
		case g := <-batches:
			if g.err != nil || len(g.ids) != len(ids) || (len(ids) > 0 && g.ids[0] != ids[0]) {
				t.Fatalf("got %v, %v; want %v", g.ids, g.err, ids)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("the reader did not wake for %v", ids)
		}
	}

	quiet("nothing written")
	writeIDs(t, buf, mem, 1, 0, 10, 11) // producer 1 commits first
	if err := buf.Commit(1, 0); err != nil {
		t.Fatal(err)
	}
	quiet("producer 0 not committed")
	writeIDs(t, buf, mem, 0, 0, 99) // a losing attempt of producer 0
	writeIDs(t, buf, mem, 0, 1, 1, 2, 3)
	buf.Discard(0, 0)
	quiet("producer 0's losing attempt discarded")
	if err := buf.Commit(0, 1); err != nil {
		t.Fatal(err)
	}
	want(1, 2, 3)
	want(10, 11)
	quiet("producer 2 not committed")
	if err := buf.Commit(2, 0); err != nil { // committed with no rows
		t.Fatal(err)
	}
	select {
	case g := <-batches:
		if !errors.Is(g.err, io.EOF) {
			t.Fatalf("after every producer committed: %v, %v; want io.EOF", g.ids, g.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the reader did not end after every producer committed")
	}
}

// A reader waiting for a commit returns when its context ends, and when
// the buffer is released.
func TestWaitingReaderStops(t *testing.T) {
	defer goleak.VerifyNone(t)
	buf := NewBuffer(&Exchange{Kind: Gather, Child: leaf{}}, Gather, 1, 1, exec.NewMemoryBudget(0))
	ctx, cancel := context.WithCancel(context.Background())
	r := buf.store.Open(0, 0)
	done := make(chan error)
	go func() { _, err := r.Next(ctx); done <- err }()
	time.Sleep(20 * time.Millisecond)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait: %v", err)
	}
	r.Close()
	r = buf.store.Open(0, 0)
	go func() { _, err := r.Next(context.Background()); done <- err }()
	time.Sleep(20 * time.Millisecond)
	buf.Release()
	if err := <-done; !errors.Is(err, io.EOF) {
		t.Fatalf("wait on a released buffer: %v", err)
	}
	r.Close()
}
