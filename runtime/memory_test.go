package runtime

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.uber.org/goleak"

	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/shuffle"
)

// TestShuffleChargesRowsOnce: 32,768 rows through a 2-key-group hash
// exchange into a gather. Each exchange is charged within 1.2x of the
// rows' own size (8+8+4 bytes a row), although the gather stores slices
// of the hash exchange's batches (a slice is charged for the rows it
// references, not for the buffers it shares); the budget's peak is at
// most both exchanges' share, and everything is given back.
func TestShuffleChargesRowsOnce(t *testing.T) {
	defer goleak.VerifyNone(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	budget := exec.NewMemoryBudget(0)
	const perTask, tasks = 16384, 2
	src := &genSource{PerTask: perTask, Batch: 1024, Keys: 1000}
	hash := &shuffle.Exchange{Kind: shuffle.Hash, Child: src, Keys: []expr.Expr{genKeyCol()}, MaxParallelism: 2}
	plan := &shuffle.Exchange{Kind: shuffle.Gather, Child: hash}
	out, e, err := runToEnd(t, plan, RunConfig{Parallelism: tasks, Slots: 2, Alloc: mem, Memory: budget})
	if err != nil {
		t.Fatal(err)
	}
	var rows int64
	for _, b := range out {
		rows += b.NumRows()
	}
	xchgReleaseAll(out)
	const rowBytes = perTask * tasks * (8 + 8 + 4)
	if rows != perTask*tasks {
		t.Fatalf("%d rows", rows)
	}
	g := e.Graph()
	for _, st := range g.Stages[:2] {
		got := st.OutBuffer.TotalBytes()
		if float64(got) > 1.2*rowBytes || got < rowBytes {
			t.Errorf("%s charged %d bytes for %d bytes of rows (%.2fx)", st.Stage.Output, got, rowBytes, float64(got)/rowBytes)
		}
	}
	if peak := budget.Peak(); float64(peak) > 1.2*2*rowBytes {
		t.Errorf("budget peak %d for two exchanges of %d bytes of rows each", peak, rowBytes)
	}
	if budget.Used() != 0 {
		t.Errorf("budget holds %d after the run", budget.Used())
	}
}
