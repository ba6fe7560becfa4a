package runtime

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.uber.org/goleak"

	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/shuffle"
	"github.com/fsql-dev/fsql/shuffle/keygroup"
)

func genKeyCol() expr.Expr { return expr.NewColumn(1, arrow.PrimitiveTypes.Int64, "key") }

// runToEnd runs root to the end and returns the result batches.
func runToEnd(t *testing.T, root exec.Node, cfg RunConfig) ([]arrow.RecordBatch, *Execution, error) {
	t.Helper()
	e, err := Run(context.Background(), root, cfg)
	if err != nil {
		return nil, nil, err
	}
	var out []arrow.RecordBatch
	for {
		b, err := e.Next(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			for _, b := range out {
				b.Release()
			}
			e.Close()
			return nil, e, err
		}
		out = append(out, b)
	}
	e.Close()
	return out, e, nil
}

func xchgReleaseAll(bs []arrow.RecordBatch) {
	for _, b := range bs {
		b.Release()
	}
}

func i64col(b arrow.RecordBatch, i int) []int64 { return b.Column(i).(*array.Int64).Int64Values() }
func i32col(b arrow.RecordBatch, i int) []int32 { return b.Column(i).(*array.Int32).Int32Values() }

func TestHashExchangeEveryRowOnceInItsKeyGroupsTask(t *testing.T) {
	defer goleak.VerifyNone(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	budget := exec.NewMemoryBudget(0)
	const perTask, maxP, p = 10000, 16, 4
	src := &genSource{PerTask: perTask, Batch: 1000, Keys: 997}
	plan := &tagTask{Child: &shuffle.Exchange{Kind: shuffle.Hash, Child: src, Keys: []expr.Expr{genKeyCol()}, MaxParallelism: maxP}}
	stats := exec.NewQueryStats()
	out, e, err := runToEnd(t, plan, RunConfig{Parallelism: p, Slots: 2, Alloc: mem, Memory: budget, Stats: stats})
	if err != nil {
		t.Fatal(err)
	}
	defer xchgReleaseAll(out)
	// The producing stage is a scan-like stage, so it has p tasks too.
	total := p * perTask
	seen := make([]int, total)
	for _, b := range out {
		ids, keys, cons := i64col(b, 0), i64col(b, 1), i32col(b, 3)
		h := make([]uint32, b.NumRows())
		exec.HashColumns([]arrow.Array{b.Column(1)}, h)
		for i := range ids {
			seen[ids[i]]++
			if keys[i] != ids[i]%997 {
				t.Fatalf("row %d has key %d", ids[i], keys[i])
			}
			kg := keygroup.ForHash(h[i], maxP)
			if want := keygroup.OperatorIndex(kg, p, maxP); int(cons[i]) != want {
				t.Fatalf("id %d (key group %d) read by task %d, owner is task %d", ids[i], kg, cons[i], want)
			}
		}
		if b.NumRows() < 100 {
			t.Errorf("consumer batch of %d rows: small key-group slices were not coalesced", b.NumRows())
		}
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("id %d seen %d times", id, n)
		}
	}
	g := e.Graph()
	if len(g.Stages) != 2 || g.Stages[0].Parallelism != p || g.Result.Parallelism != p {
		t.Fatalf("stages: %d, parallelism %d/%d", len(g.Stages), g.Stages[0].Parallelism, g.Result.Parallelism)
	}
	buf := g.Stages[0].OutBuffer
	if buf.TotalRows() != int64(total) || buf.Subpartitions != maxP || buf.TotalBytes() <= 0 {
		t.Fatalf("exchange counters: rows %d subpartitions %d bytes %d", buf.TotalRows(), buf.Subpartitions, buf.TotalBytes())
	}
	if budget.Used() != 0 || budget.Peak() <= 0 {
		t.Fatalf("shuffle memory: used %d peak %d", budget.Used(), budget.Peak())
	}
	if got := stats.For(e.Graph().Job.NodeID(plan)).Rows.Load(); got != int64(total) {
		t.Fatalf("TagTask stats rows %d", got)
	}
	if got := stats.For(e.Graph().Job.NodeID(src)).Rows.Load(); got != int64(total) {
		t.Fatalf("source stats rows %d", got)
	}
}

func TestBroadcastEveryConsumerReadsEverything(t *testing.T) {
	defer goleak.VerifyNone(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	budget := exec.NewMemoryBudget(0)
	const p = 3
	probe := &genSource{PerTask: 100, Batch: 50, Keys: 10, Name: "Probe"}
	build := &genSource{PerTask: 500, Batch: 128, Keys: 10, Name: "Build"}
	plan := &tagTask{Child: &concatNode{A: probe, B: &shuffle.Exchange{Kind: shuffle.Broadcast, Child: build}}}
	out, _, err := runToEnd(t, plan, RunConfig{Parallelism: p, Slots: 2, Alloc: mem, Memory: budget})
	if err != nil {
		t.Fatal(err)
	}
	defer xchgReleaseAll(out)
	probeSeen := map[int64]int{}
	buildSeen := map[[2]int64]int{} // (id, consumer)
	for _, b := range out {
		ids, cons := i64col(b, 0), i32col(b, 3)
		for i := range ids {
			if ids[i] < p*100 && b.NumRows() <= 50 {
				probeSeen[ids[i]]++
			} else {
				buildSeen[[2]int64{ids[i], int64(cons[i])}]++
			}
		}
	}
	if len(probeSeen) != p*100 {
		t.Fatalf("probe rows %d", len(probeSeen))
	}
	for id := int64(0); id < p*500; id++ {
		for c := int64(0); c < p; c++ {
			if buildSeen[[2]int64{id, c}] != 1 {
				t.Fatalf("build id %d read %d times by consumer %d", id, buildSeen[[2]int64{id, c}], c)
			}
		}
	}
	if budget.Used() != 0 {
		t.Fatalf("shuffle memory still held: %d", budget.Used())
	}
}

func TestGatherRunsOneTask(t *testing.T) {
	defer goleak.VerifyNone(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	src := &genSource{PerTask: 1000, Batch: 100, Keys: 10}
	plan := &tagTask{Child: &shuffle.Exchange{Kind: shuffle.Gather, Child: src}}
	out, e, err := runToEnd(t, plan, RunConfig{Parallelism: 4, Slots: 4, Alloc: mem})
	if err != nil {
		t.Fatal(err)
	}
	defer xchgReleaseAll(out)
	var rows int64
	for _, b := range out {
		rows += b.NumRows()
		for _, c := range i32col(b, 3) {
			if c != 0 {
				t.Fatalf("gathered row read by task %d", c)
			}
		}
	}
	if rows != 4000 || e.Graph().Result.Parallelism != 1 || len(e.Graph().Result.Tasks) != 1 {
		t.Fatalf("rows %d, result parallelism %d", rows, e.Graph().Result.Parallelism)
	}
}

func TestSingleTaskLeafAndBroadcastOnlyStages(t *testing.T) {
	defer goleak.VerifyNone(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	// A constant leaf: one task, so its rows are not repeated.
	vals := &genSource{PerTask: 10, Batch: 10, Keys: 3, Single: true}
	out, e, err := runToEnd(t, vals, RunConfig{Parallelism: 4, Alloc: mem})
	if err != nil {
		t.Fatal(err)
	}
	var rows int64
	for _, b := range out {
		rows += b.NumRows()
	}
	xchgReleaseAll(out)
	if rows != 10 || e.Graph().Result.Parallelism != 1 {
		t.Fatalf("rows %d parallelism %d", rows, e.Graph().Result.Parallelism)
	}
	// A stage fed only by a broadcast: one task.
	plan := &shuffle.Exchange{Kind: shuffle.Broadcast, Child: &genSource{PerTask: 10, Batch: 10, Keys: 3}}
	out, e, err = runToEnd(t, plan, RunConfig{Parallelism: 4, Alloc: mem})
	if err != nil {
		t.Fatal(err)
	}
	rows = 0
	for _, b := range out {
		rows += b.NumRows()
	}
	xchgReleaseAll(out)
	if rows != 40 || e.Graph().Result.Parallelism != 1 {
		t.Fatalf("rows %d parallelism %d", rows, e.Graph().Result.Parallelism)
	}
}

func TestManyStagesOneSlot(t *testing.T) {
	defer goleak.VerifyNone(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var n exec.Node = &genSource{PerTask: 2000, Batch: 300, Keys: 50}
	for i := 0; i < 6; i++ {
		n = &shuffle.Exchange{Kind: shuffle.Hash, Child: n, Keys: []expr.Expr{genKeyCol()}, MaxParallelism: 8}
	}
	n = &shuffle.Exchange{Kind: shuffle.Broadcast, Child: n}
	// Result stage: probe source (3 tasks) + broadcast; more tasks than slots.
	plan := &concatNode{A: &genSource{PerTask: 1, Batch: 1, Keys: 1}, B: n}
	done := make(chan struct{})
	var out []arrow.RecordBatch
	var e *Execution
	var err error
	go func() {
		defer close(done)
		out, e, err = runToEnd(t, plan, RunConfig{Parallelism: 3, Slots: 1, Alloc: mem})
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("slots=1 with 8 stages did not finish: deadlock?")
	}
	if err != nil {
		t.Fatal(err)
	}
	var rows int64
	for _, b := range out {
		rows += b.NumRows()
	}
	xchgReleaseAll(out)
	if want := int64(3 + 3*3*2000); rows != want {
		t.Fatalf("rows %d, want %d", rows, want)
	}
	if len(e.Graph().Stages) != 8 {
		t.Fatalf("%d stages", len(e.Graph().Stages))
	}
}

func TestTaskPanicBecomesInternalError(t *testing.T) {
	defer goleak.VerifyNone(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	budget := exec.NewMemoryBudget(0)
	src := &genSource{PerTask: 100000, Batch: 100, Keys: 10, Panic: true, FailTask: 2, FailAt: 3}
	plan := &shuffle.Exchange{Kind: shuffle.Hash, Child: src, Keys: []expr.Expr{genKeyCol()}}
	_, _, err := runToEnd(t, plan, RunConfig{Parallelism: 4, Slots: 4, Alloc: mem, Memory: budget})
	if !errors.Is(err, exec.ErrInternal) {
		t.Fatalf("want exec.ErrInternal, got %v", err)
	}
	for _, want := range []string{"stage 1 task 2 panicked", "boom in genSource", "goroutine"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("error lacks %q: %v", want, err)
		}
	}
	if budget.Used() != 0 {
		t.Fatalf("shuffle memory still held: %d", budget.Used())
	}
}

func TestTaskErrorCancelsOthers(t *testing.T) {
	defer goleak.VerifyNone(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	budget := exec.NewMemoryBudget(0)
	// Tasks 0, 1, 3 never end on their own; task 2 fails at its 5th batch.
	src := &genSource{Batch: 100, Keys: 10, Infinite: true, Fail: true, FailTask: 2, FailAt: 5}
	plan := &tagTask{Child: &shuffle.Exchange{Kind: shuffle.Hash, Child: src, Keys: []expr.Expr{genKeyCol()}}}
	start := time.Now()
	_, _, err := runToEnd(t, plan, RunConfig{Parallelism: 4, Slots: 4, Alloc: mem, Memory: budget})
	if !errors.Is(err, errTestFail) || !errors.Is(err, exec.ErrExecution) {
		t.Fatalf("want the injected failure, got %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("took %v to stop", d)
	}
	if budget.Used() != 0 {
		t.Fatalf("shuffle memory still held: %d", budget.Used())
	}
}

func TestCancelMidRun(t *testing.T) {
	defer goleak.VerifyNone(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	src := &genSource{Batch: 100, Keys: 10, Infinite: true}
	// Both stages run: the first never ends, so cancel while it runs.
	plan := &shuffle.Exchange{Kind: shuffle.Hash, Child: src, Keys: []expr.Expr{genKeyCol()}}
	ctx, cancel := context.WithCancel(context.Background())
	e, err := Run(ctx, plan, RunConfig{Parallelism: 2, Slots: 2, Alloc: mem})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(50 * time.Millisecond)
		cancel()
	}()
	_, err = e.Next(context.Background())
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
	e.Close()
}

func TestEarlyCloseOfResult(t *testing.T) {
	defer goleak.VerifyNone(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	budget := exec.NewMemoryBudget(0)
	// The result stage reads a finished exchange and an endless source.
	plan := &concatNode{
		A: &shuffle.Exchange{Kind: shuffle.Hash, Child: &genSource{PerTask: 5000, Batch: 500, Keys: 100}, Keys: []expr.Expr{genKeyCol()}},
		B: &genSource{Batch: 100, Keys: 10, Infinite: true},
	}
	e, err := Run(context.Background(), plan, RunConfig{Parallelism: 3, Slots: 2, Alloc: mem, Memory: budget})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		b, err := e.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		b.Release()
	}
	e.Close()
	e.Close()
	if _, err := e.Next(context.Background()); err == nil {
		t.Fatal("Next after Close succeeded")
	}
	if budget.Used() != 0 {
		t.Fatalf("shuffle memory still held: %d", budget.Used())
	}
}

func TestMemoryBudgetExhaustedByShuffle(t *testing.T) {
	defer goleak.VerifyNone(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	budget := exec.NewMemoryBudget(64 << 10)
	src := &genSource{PerTask: 50000, Batch: 1000, Keys: 1000}
	plan := &shuffle.Exchange{Kind: shuffle.Hash, Child: src, Keys: []expr.Expr{genKeyCol()}}
	_, _, err := runToEnd(t, plan, RunConfig{Parallelism: 2, Slots: 2, Alloc: mem, Memory: budget})
	if !errors.Is(err, exec.ErrResourcesExhausted) || !strings.Contains(err.Error(), "shuffle") {
		t.Fatalf("want exec.ErrResourcesExhausted from shuffle, got %v", err)
	}
	if budget.Used() != 0 {
		t.Fatalf("memory still held: %d", budget.Used())
	}
}

func TestParallelismAboveKeyGroupsIsAnError(t *testing.T) {
	defer goleak.VerifyNone(t)
	src := &genSource{PerTask: 10, Batch: 10, Keys: 10}
	plan := &shuffle.Exchange{Kind: shuffle.Hash, Child: src, Keys: []expr.Expr{genKeyCol()}, MaxParallelism: 4}
	_, _, err := runToEnd(t, plan, RunConfig{Parallelism: 8, Slots: 2})
	if !errors.Is(err, exec.ErrPlan) || !strings.Contains(err.Error(), "parallelism 8 is above the max parallelism (number of key groups) 4") {
		t.Fatalf("got %v", err)
	}
	_, err = Run(context.Background(), &shuffle.Exchange{Kind: shuffle.Hash, Child: src, Keys: []expr.Expr{genKeyCol()}, MaxParallelism: 40000}, RunConfig{})
	if !errors.Is(err, exec.ErrPlan) {
		t.Fatalf("max parallelism 40000: got %v", err)
	}
}
