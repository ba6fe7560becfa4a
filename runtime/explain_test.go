package runtime

import (
	"context"
	"errors"
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
	got := Explain(root, nil, nil)
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
	for i, st := range g.Stages {
		st.Parallelism = 2
		if st.Output != nil && st.Output.Kind == shuffle.Broadcast {
			st.Parallelism = 1
		}
		st.Start, st.End = t0, t0.Add(time.Duration(i+1)*1500*time.Microsecond)
		for k := 0; k < st.Parallelism; k++ {
			task := &Task{Stage: st, Index: k}
			task.Attempts = []*Attempt{{Task: task, Start: t0, End: t0.Add(time.Duration(k+1) * time.Millisecond)}}
			st.Tasks = append(st.Tasks, task)
		}
		st.rows.Store(int64(100 * (i + 1)))
		st.bytes.Store(int64(3000 * (i + 1)))
	}
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
	got := Explain(root, stats, g)
	want := `Stage 3 (parallelism 2) -> result <- reads Stage 1 [hash [key] by key group, 16 key groups], Stage 2 [broadcast]
  tasks=2 time=4.5ms rows=300 bytes=8.8KiB slowest-task=2ms
  TagTask  [rows=210 batches=4 bytes=4.9KiB time=3ms]
    Concat  [rows=0 batches=0 bytes=0B time=0s]
      Exchange(hash [key], 16 key groups) <- Stage 1  [rows=0 batches=0 bytes=0B time=0s]
      Exchange(broadcast) <- Stage 2  [rows=0 batches=0 bytes=0B time=0s]
Stage 2 (parallelism 1) -> broadcast
  tasks=1 time=3ms rows=200 bytes=5.9KiB
  Dims  [rows=5 batches=1 bytes=100B time=30µs]
Stage 1 (parallelism 2) -> hash [key] by key group, 16 key groups
  tasks=2 time=1.5ms rows=100 bytes=2.9KiB slowest-task=2ms
  Facts  [rows=200 batches=20 bytes=4.0KiB time=2ms bytes_read=12345 files=3 files_pruned=1 row_groups=5/8]
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
	got := Explain(root, stats, e.Graph())
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
	} {
		if !strings.Contains(got, want) {
			t.Errorf("EXPLAIN ANALYZE lacks %q:\n%s", want, got)
		}
	}
}
