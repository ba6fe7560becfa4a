package runtime

import (
	goruntime "runtime"
	"sort"
	"testing"

	"go.uber.org/goleak"

	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/shuffle"
)

// TestAttemptsStartInPlacedOrder: on each worker, attempts begin in the
// order the scheduler placed them. With one P the outcome of Go's
// scheduling is fixed: a goroutine per attempt that ran its own attempt
// began the one placed last first (the newest goroutine takes the P's
// runnext slot), so the first task of the stage, placed first, waited for
// the last.
func TestAttemptsStartInPlacedOrder(t *testing.T) {
	defer goleak.VerifyNone(t)
	defer goruntime.GOMAXPROCS(goruntime.GOMAXPROCS(1))
	plan := &tagTask{Child: &shuffle.Exchange{Kind: shuffle.Hash, Child: &genSource{PerTask: 500, Batch: 100, Keys: 20}, Keys: []expr.Expr{genKeyCol()}, MaxParallelism: 8}}
	for _, workers := range [][]Worker{NewLocalPool(1, 6), NewLocalPool(2, 3)} {
		_, g := runRows(t, plan, RunConfig{Parallelism: 6, Workers: workers})
		byWorker := map[string][]*Attempt{}
		for _, r := range g.Stages {
			for _, tr := range r.Tasks {
				for _, a := range tr.Attempts {
					if a.started.Load() == 0 || a.placed.IsZero() {
						t.Fatalf("stage %d task %d attempt %d: placed %v, started %d", r.Stage.ID, tr.Index, a.Number, a.placed, a.started.Load())
					}
					byWorker[a.Worker] = append(byWorker[a.Worker], a)
				}
			}
		}
		for w, as := range byWorker {
			sort.SliceStable(as, func(i, j int) bool { return as[i].placed.Before(as[j].placed) })
			for i := 1; i < len(as); i++ {
				if as[i].started.Load() < as[i-1].started.Load() {
					t.Fatalf("%s (%d workers): stage %d task %d, placed after stage %d task %d, started before it", w, len(workers),
						as[i].Task.Stage.Stage.ID, as[i].Task.Index, as[i-1].Task.Stage.Stage.ID, as[i-1].Task.Index)
				}
			}
		}
	}
}
