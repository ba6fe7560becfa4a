package runtime

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.uber.org/goleak"

	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/shuffle"
)

// TestProgressWhileRunning reads Progress while a run is held back by an
// unread result: the producer stage finishes, the result stage started
// and is not finished; after the last batch every stage is done.
func TestProgressWhileRunning(t *testing.T) {
	defer goleak.VerifyNone(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	src := &genSource{PerTask: 20000, Batch: 100, Keys: 50}
	plan := &shuffle.Exchange{Kind: shuffle.Hash, Child: src, Keys: []expr.Expr{genKeyCol()}, MaxParallelism: 8}
	e, err := Run(context.Background(), plan, RunConfig{Parallelism: 2, Slots: 4, Alloc: mem})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if got := len(e.Progress().Stages); got != 2 {
		t.Fatalf("%d stages in the progress, want 2", got)
	}
	deadline := time.Now().Add(20 * time.Second)
	var p Progress
	for {
		p = e.Progress()
		if p.Stages[0].Finished {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("producer stage never finished: %+v", p)
		}
		time.Sleep(5 * time.Millisecond)
	}
	prod, res := p.Stages[0], p.Stages[1]
	if prod.Tasks != 2 || prod.TasksDone != 2 || !prod.Started {
		t.Errorf("producer stage %+v, want 2 of 2 tasks done", prod)
	}
	// The result stage's tasks wait on the unread result channel (it holds
	// one batch; 40,000 rows are 400 batches).
	if !res.Started || res.Finished || res.TasksDone == res.Tasks {
		t.Errorf("result stage %+v, want started and not finished", res)
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
	for _, st := range e.Progress().Stages {
		if !st.Finished || st.Tasks == 0 || st.TasksDone != st.Tasks {
			t.Errorf("after the run: stage %+v, want every task done", st)
		}
	}
}
