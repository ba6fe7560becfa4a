package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.uber.org/goleak"

	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/shuffle"
)

func explainPlan() (root exec.Node, hashSrc, bcastSrc exec.Node) {
	hashSrc = &genSource{PerTask: 100, Batch: 10, Keys: 7, Name: "Facts"}
	bcastSrc = &genSource{PerTask: 5, Batch: 5, Keys: 7, Name: "Dims"}
	root = &tagTask{Child: &concatNode{
		A: &shuffle.Exchange{Kind: shuffle.Hash, Child: hashSrc, Keys: []expr.Expr{genKeyCol()}, MaxParallelism: 16},
		B: &shuffle.Exchange{Kind: shuffle.Broadcast, Child: bcastSrc},
	}}
	return root, hashSrc, bcastSrc
}

func TestExplainPlanOnly(t *testing.T) {
	root, _, _ := explainPlan()
	g, err := BuildJobGraph(root)
	if err != nil {
		t.Fatal(err)
	}
	got := g.Explain()
	want := `Stage 3 (parallelism decided at run time) -> result <- reads Stage 1 [hash [key] by key group, 16 key groups], Stage 2 [broadcast]
  TagTask
    Concat
      Exchange(hash [key], 16 key groups) <- Stage 1
      Exchange(broadcast) <- Stage 2
Stage 2 (parallelism decided at run time) -> broadcast
  Dims
Stage 1 (parallelism decided at run time) -> hash [key] by key group, 16 key groups
  Facts
`
	if got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
}

// TestExplainAnalyzeGolden fills the counters by hand so the text is
// fixed, then checks it byte for byte.
func TestExplainAnalyzeGolden(t *testing.T) {
	root, facts, dims := explainPlan()
	g, err := BuildJobGraph(root)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	eg := newExecutionGraph(g)
	for i, r := range eg.Stages {
		r.Parallelism = 2
		if r.Stage.Output != nil && r.Stage.Output.Kind == shuffle.Broadcast {
			r.Parallelism = 1
		}
		r.Start, r.End = t0, t0.Add(time.Duration(i+1)*1500*time.Microsecond)
		for k := 0; k < r.Parallelism; k++ {
			task := &TaskRun{Stage: r, Index: k, InputBytes: 2048}
			att := &Attempt{Task: task, Worker: fmt.Sprintf("tm-%d", k%2), Slot: 0, Start: t0, End: t0.Add(time.Duration(k+1) * time.Millisecond), state: Finished}
			att.InputBytes.Store(2048)
			task.Attempts, task.Committed = []*Attempt{att}, att
			r.Tasks = append(r.Tasks, task)
		}
		r.rows = int64(100 * (i + 1))
		r.bytes = int64(3000 * (i + 1))
	}
	// Task 1 of the result stage ran three times: attempt 0 failed, its
	// retry was slow and lost to a speculative copy.
	res := eg.Result.Tasks[1]
	failed := &Attempt{Task: res, Number: 0, Worker: "tm-1", Slot: 0, Start: t0, End: t0.Add(200 * time.Microsecond), state: Failed,
		Err: fmt.Errorf("%w: lost\nstack", ErrInjectedFault)}
	lost := &Attempt{Task: res, Number: 1, Kind: RetryAttempt, Why: "retry of attempt 0, which failed on tm-1: attempt failed by an injected fault: lost", Worker: "tm-0", Slot: 1,
		Start: t0.Add(300 * time.Microsecond), End: t0.Add(4 * time.Millisecond), state: Cancelled, Slow: "ran 3ms, past its baseline 1ms (the lower bound)"}
	lost.InputBytes.Store(512)
	lost.stopped.Store(true)
	won := res.Attempts[0]
	won.Number, won.Kind, won.Why, won.Start = 2, SpeculativeAttempt, "speculative copy of attempt 1 on tm-0, which ran 3ms", t0.Add(time.Millisecond)
	res.Attempts = []*Attempt{failed, lost, won}
	eg.Blocked = []BlockedWorker{{Worker: "tm-0", At: t0.Add(3 * time.Millisecond), Until: t0.Add(time.Minute), Renewals: 2, Why: "attempt 1 of stage 3 task 1 ran 3ms"}}
	stats := exec.NewQueryStats()
	set := func(n exec.Node, rows, batches, bytes int64, d time.Duration) {
		s := stats.For(g.NodeID(n))
		s.Rows.Store(rows)
		s.Batches.Store(batches)
		s.Bytes.Store(bytes)
		s.Nanos.Store(int64(d))
	}
	set(facts, 200, 20, 4096, 2*time.Millisecond)
	set(dims, 5, 1, 100, 30*time.Microsecond)
	set(root, 210, 4, 5000, 3*time.Millisecond)
	// Facts stands in for a scan of an unpartitioned table.
	sc := &stats.For(g.NodeID(facts)).Scan
	sc.Start(false, false)
	sc.BytesRead.Store(12345)
	sc.Files.Store(3)
	sc.FilesPruned.Store(1)
	sc.RowGroupsTotal.Store(8)
	sc.RowGroupsKept.Store(5)
	got := eg.Explain(stats)
	want := `Stage 3 (parallelism 2) -> result <- reads Stage 1 [hash [key] by key group, 16 key groups], Stage 2 [broadcast]
  tasks=2 time=4.5ms rows=300 bytes=8.8KiB slowest-task=1ms
  attempts on workers: tm-0 (2), tm-1 (2)
  task 0 (input 2.0KiB): attempt 0 on tm-0 slot 0, start +0s, ran 1ms, read 2.0KiB, committed
  task 1 (input 2.0KiB):
    attempt 0 on tm-1 slot 0, start +0s, ran 200µs, read 0B, failed: attempt failed by an injected fault: lost
    attempt 1 on tm-0 slot 1, start +300µs, ran 3.7ms, read 512B, cancelled (attempt 2 won); retry of attempt 0, which failed on tm-1: attempt failed by an injected fault: lost; slow: ran 3ms, past its baseline 1ms (the lower bound)
    attempt 2 on tm-1 slot 0, start +1ms, ran 1ms, read 2.0KiB, committed; speculative copy of attempt 1 on tm-0, which ran 3ms
  TagTask  [rows=210 batches=4 bytes=4.9KiB time=3ms]
    Concat  [rows=0 batches=0 bytes=0B time=0s]
      Exchange(hash [key], 16 key groups) <- Stage 1  [rows=0 batches=0 bytes=0B time=0s]
      Exchange(broadcast) <- Stage 2  [rows=0 batches=0 bytes=0B time=0s]
Stage 2 (parallelism 1) -> broadcast
  tasks=1 time=3ms rows=200 bytes=5.9KiB
  attempts on workers: tm-0 (1)
  task 0 (input 2.0KiB): attempt 0 on tm-0 slot 0, start +0s, ran 1ms, read 2.0KiB, committed
  Dims  [rows=5 batches=1 bytes=100B time=30µs]
Stage 1 (parallelism 2) -> hash [key] by key group, 16 key groups
  tasks=2 time=1.5ms rows=100 bytes=2.9KiB slowest-task=2ms
  attempts on workers: tm-0 (1), tm-1 (1)
  task 0 (input 2.0KiB): attempt 0 on tm-0 slot 0, start +0s, ran 1ms, read 2.0KiB, committed
  task 1 (input 2.0KiB): attempt 0 on tm-1 slot 0, start +0s, ran 2ms, read 2.0KiB, committed
  Facts  [rows=200 batches=20 bytes=4.0KiB time=2ms bytes_read=12345 files=3 files_pruned=1 row_groups=5/8]
Blocklisted workers
  tm-0: from +3ms until +1m0s (renewed 2 times); attempt 1 of stage 3 task 1 ran 3ms
`
	if got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
}

// TestExplainAfterRun checks EXPLAIN ANALYZE of a real run carries the
// run's numbers.
func TestExplainAfterRun(t *testing.T) {
	defer goleak.VerifyNone(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	root, _, _ := explainPlan()
	stats := exec.NewQueryStats()
	e, err := Run(context.Background(), root, RunConfig{Parallelism: 2, Slots: 2, Alloc: mem, Stats: stats})
	if err != nil {
		t.Fatal(err)
	}
	for {
		b, err := e.Next(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b.Release()
	}
	e.Close()
	got := e.Graph().Explain(stats)
	for _, want := range []string{
		"Stage 3 (parallelism 2) -> result <- reads Stage 1 [hash [key] by key group, 16 key groups], Stage 2 [broadcast]",
		"Stage 2 (parallelism 2) -> broadcast",
		"Stage 1 (parallelism 2) -> hash [key] by key group, 16 key groups",
		"  tasks=2 ",
		"  TagTask  [rows=220 ",
		"  Facts  [rows=200 ",
		"  Dims  [rows=10 ",
		"Exchange(broadcast) <- Stage 2  [rows=20 ",
		"Exchange(hash [key], 16 key groups) <- Stage 1  [rows=200 ",
		"shuffled=",
		"attempts on workers: tm-0 (2)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("EXPLAIN ANALYZE lacks %q:\n%s", want, got)
		}
	}
}
