package exec

import (
	"context"
	"errors"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/exec/expr"
)

// gatedSource is a build input that counts the batches it hands out,
// can wait on gate before its first batch and fail after it.
type gatedSource struct {
	*opSource
	gate  chan struct{} // nil: no wait
	fail  error         // returned after the first batch
	reads *atomic.Int64
}

func (g *gatedSource) Open(tc *TaskContext, in []Stream) (Stream, error) {
	s, err := g.opSource.Open(tc, in)
	if err != nil {
		return nil, err
	}
	return &gatedStream{s: s, g: g}, nil
}

type gatedStream struct {
	s Stream
	g *gatedSource
	n int
}

func (s *gatedStream) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if s.n == 0 && s.g.gate != nil {
		select {
		case <-s.g.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if s.n == 1 && s.g.fail != nil {
		return nil, s.g.fail
	}
	b, err := s.s.Next(ctx)
	if err == nil {
		s.n++
		s.g.reads.Add(1)
	}
	return b, err
}

func (s *gatedStream) Close() { s.s.Close() }

// sharedJoin is a string-keyed inner join whose build input is src.
func sharedJoin(t *testing.T, build Node) *HashJoin {
	return &HashJoin{Type: InnerJoin, Build: build, Probe: probeRows(t),
		BuildKeys: []expr.Expr{col(1, tStr)}, ProbeKeys: []expr.Expr{col(1, tStr)}}
}

func sharedBuildRows(t *testing.T) *opSource {
	return buildRows(t, []any{1, "p1"}, []any{2, "p2"}, []any{3, "p2"}, []any{4, "x"})
}

// runTask runs j as one task of a stage that shares sb.
func runTask(ctx context.Context, alloc memory.Allocator, budget *MemoryBudget, sb *SharedBuild, j Node) ([]string, error) {
	tc := &TaskContext{Alloc: alloc, Memory: budget, Parallelism: 2, SharedBuild: sb}
	s, err := openTree(tc, j)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	var out []string
	for {
		b, err := s.Next(ctx)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, renderRows(b)...)
		b.Release()
	}
}

var sharedWant = []string{"1|p1|1|p1", "2|p2|2|p2", "2|p2|3|p2"}

func TestSharedBuildBuiltOnce(t *testing.T) {
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer alloc.AssertSize(t, 0)
	budget := NewMemoryBudget(0)
	sb := NewSharedBuild(budget, "test join")
	var reads atomic.Int64
	j := sharedJoin(t, &gatedSource{opSource: sharedBuildRows(t), reads: &reads})
	for task := 0; task < 3; task++ {
		rows, err := runTask(context.Background(), alloc, budget, sb, j)
		if err != nil {
			t.Fatal(err)
		}
		wantSet(t, rows, sharedWant...)
	}
	if sb.Builds() != 1 || reads.Load() != 2 {
		t.Fatalf("%d builds, %d build batches read: want 1 build of 2 batches", sb.Builds(), reads.Load())
	}
	if budget.Used() == 0 {
		t.Fatal("the shared table is not charged to the budget while the stage runs")
	}
	sb.Close()
	if budget.Used() != 0 {
		t.Fatalf("%d bytes held after the stage ended", budget.Used())
	}
}

// The first attempt to build fails: the next builds it and gets the rows.
func TestSharedBuildBuilderFails(t *testing.T) {
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer alloc.AssertSize(t, 0)
	budget := NewMemoryBudget(0)
	sb := NewSharedBuild(budget, "test join")
	var reads atomic.Int64
	boom := errors.New("worker lost")
	_, err := runTask(context.Background(), alloc, budget, sb, sharedJoin(t, &gatedSource{opSource: sharedBuildRows(t), fail: boom, reads: &reads}))
	if !errors.Is(err, boom) {
		t.Fatalf("the failing build: %v", err)
	}
	rows, err := runTask(context.Background(), alloc, budget, sb, sharedJoin(t, &gatedSource{opSource: sharedBuildRows(t), reads: &reads}))
	if err != nil {
		t.Fatal(err)
	}
	wantSet(t, rows, sharedWant...)
	if sb.Builds() != 2 {
		t.Fatalf("%d builds, want 2 (the failed one and its successor)", sb.Builds())
	}
	sb.Close()
	if budget.Used() != 0 {
		t.Fatalf("%d bytes held after the stage ended", budget.Used())
	}
}

// A task waiting for another's build stops when cancelled; the builder,
// cancelled too, leaves the build to the next attempt, which finds the
// table; closing the stage frees it.
func TestSharedBuildCancelled(t *testing.T) {
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer alloc.AssertSize(t, 0)
	budget := NewMemoryBudget(0)
	sb := NewSharedBuild(budget, "test join")
	var reads atomic.Int64
	gate := make(chan struct{})
	j := sharedJoin(t, &gatedSource{opSource: sharedBuildRows(t), gate: gate, reads: &reads})
	bctx, cancelBuilder := context.WithCancel(context.Background())
	built := make(chan error, 1)
	go func() {
		_, err := runTask(bctx, alloc, budget, sb, j)
		built <- err
	}()
	for sb.Builds() == 0 {
		time.Sleep(time.Millisecond)
	}
	wctx, cancelWaiter := context.WithCancel(context.Background())
	waited := make(chan error, 1)
	go func() {
		_, err := runTask(wctx, alloc, budget, sb, sharedJoin(t, sharedBuildRows(t)))
		waited <- err
	}()
	cancelWaiter()
	if err := <-waited; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled waiter: %v", err)
	}
	cancelBuilder()
	if err := <-built; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled builder: %v", err)
	}
	close(gate)
	rows, err := runTask(context.Background(), alloc, budget, sb, j)
	if err != nil {
		t.Fatal(err)
	}
	wantSet(t, rows, sharedWant...)
	if sb.Builds() != 2 {
		t.Fatalf("%d builds, want 2", sb.Builds())
	}
	sb.Close()
	if budget.Used() != 0 {
		t.Fatalf("%d bytes held after the stage ended", budget.Used())
	}
}
