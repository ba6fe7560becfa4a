package runtime

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.uber.org/goleak"

	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/shuffle"
)

func TestBuildJobGraphShapes(t *testing.T) {
	a := &genSource{Name: "A"}
	b := &genSource{Name: "B"}
	exA := &shuffle.Exchange{Kind: shuffle.Hash, Child: a, Keys: []expr.Expr{genKeyCol()}}
	exB := &shuffle.Exchange{Kind: shuffle.Broadcast, Child: b}
	// exA is read twice (one stage, two reads); exB once, below a gather.
	gather := &shuffle.Exchange{Kind: shuffle.Gather, Child: &concatNode{A: exA, B: exB}}
	root := &concatNode{A: gather, B: exA}
	g, err := BuildJobGraph(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Stages) != 4 {
		t.Fatalf("%d stages", len(g.Stages))
	}
	sa, sb, sg, sr := g.Stages[0], g.Stages[1], g.Stages[2], g.Stages[3]
	if sa.Root != a || sb.Root != b || sr != g.Result || sr.Root != root || sg.Output != gather {
		t.Fatal("stages cut in the wrong places")
	}
	if sa.ID != 1 || sr.ID != 4 {
		t.Fatalf("ids %d..%d", sa.ID, sr.ID)
	}
	if len(sa.Consumers) != 2 || sa.Consumers[0] != sg || sa.Consumers[1] != sr {
		t.Fatalf("stage A consumers: %v", sa.Consumers)
	}
	if len(sr.Inputs) != 2 || sr.Producers[0] != sg || sr.Producers[1] != sa {
		t.Fatal("result stage inputs wrong")
	}
	if !needsSingleTask(sr) || needsSingleTask(sa) || needsSingleTask(sg) {
		t.Fatal("single-task decisions wrong")
	}
	if _, err := BuildJobGraph(nil); !errors.Is(err, exec.ErrInternal) {
		t.Fatalf("nil plan: %v", err)
	}
}

// TestSharedExchangeAndDependsOn runs a graph where one exchange feeds two
// stages (its buffer is released after the second reader), and checks
// that a DependsOn cycle is refused and the graph runs again.
func TestSharedExchangeAndDependsOn(t *testing.T) {
	defer goleak.VerifyNone(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	budget := exec.NewMemoryBudget(0)
	first := &genSource{PerTask: 100, Batch: 10, Keys: 5, Name: "First"}
	second := &genSource{PerTask: 200, Batch: 10, Keys: 5, Name: "Second"}
	shared := &shuffle.Exchange{Kind: shuffle.Hash, Child: first, Keys: []expr.Expr{genKeyCol()}, MaxParallelism: 8}
	left := &shuffle.Exchange{Kind: shuffle.Gather, Child: &concatNode{A: shared, B: second}}
	root := &concatNode{A: left, B: shared}
	g, err := BuildJobGraph(root)
	if err != nil {
		t.Fatal(err)
	}
	sFirst, sLeft := g.Stages[0], g.Stages[1]
	if sFirst.Root != first || sLeft.Output != left {
		t.Fatal("unexpected cut")
	}
	// A cycle is refused before anything runs.
	sFirst.DependsOn = []*Stage{sLeft}
	if _, err := RunGraph(context.Background(), g, RunConfig{Alloc: mem}); !errors.Is(err, errs.Internal) {
		t.Fatalf("cycle: %v", err)
	}
	sFirst.DependsOn = nil
	e, err := RunGraph(context.Background(), g, RunConfig{Parallelism: 2, Slots: 1, Alloc: mem, Memory: budget})
	if err != nil {
		t.Fatal(err)
	}
	var rows int64
	for {
		b, err := e.Next(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		rows += b.NumRows()
		b.Release()
	}
	e.Close()
	// Result = gather(shared + second) + shared again.
	if want := int64(2*100 + 2*200 + 2*100); rows != want {
		t.Fatalf("rows %d, want %d", rows, want)
	}
	if budget.Used() != 0 {
		t.Fatalf("shuffle memory held: %d", budget.Used())
	}
	// The job graph is immutable: it runs again, twice at once, with the
	// same answer.
	var wg sync.WaitGroup
	again := make([]int64, 2)
	for i := range again {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e, err := RunGraph(context.Background(), g, RunConfig{Parallelism: 2, Slots: 2, Alloc: mem, Memory: budget})
			if err != nil {
				t.Error(err)
				return
			}
			defer e.Close()
			for {
				b, err := e.Next(context.Background())
				if err != nil {
					if !errors.Is(err, io.EOF) {
						t.Error(err)
					}
					return
				}
				again[i] += b.NumRows()
				b.Release()
			}
		}()
	}
	wg.Wait()
	if again[0] != rows || again[1] != rows {
		t.Fatalf("reruns gave %v rows, the first run %d", again, rows)
	}
}

// TestDependsOnOrdersStages: the scan stage starts only after the stage it
// depends on finished, though no data flows between them.
func TestDependsOnOrdersStages(t *testing.T) {
	defer goleak.VerifyNone(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	collector := &genSource{PerTask: 100, Batch: 10, Keys: 5, Name: "Collector"}
	scan := &genSource{PerTask: 100, Batch: 10, Keys: 5, Name: "Scan"}
	root := &concatNode{
		A: &shuffle.Exchange{Kind: shuffle.Broadcast, Child: collector},
		B: &shuffle.Exchange{Kind: shuffle.Hash, Child: scan, Keys: []expr.Expr{genKeyCol()}},
	}
	g, err := BuildJobGraph(root)
	if err != nil {
		t.Fatal(err)
	}
	sCollector, sScan := g.Stages[0], g.Stages[1]
	sScan.DependsOn = []*Stage{sCollector}
	e, err := RunGraph(context.Background(), g, RunConfig{Parallelism: 2, Slots: 4, Alloc: mem})
	if err != nil {
		t.Fatal(err)
	}
	for {
		b, err := e.Next(context.Background())
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
			break
		}
		b.Release()
	}
	e.Close()
	rScan, rCollector := e.Graph().Run(sScan), e.Graph().Run(sCollector)
	if rScan.Start.Before(rCollector.End) {
		t.Fatalf("scan stage started %v before the collector ended", rCollector.End.Sub(rScan.Start))
	}
}
