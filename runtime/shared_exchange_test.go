package runtime

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.uber.org/goleak"

	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/runtime/policy"
	"github.com/fsql-dev/fsql/shuffle"
)

// TestSharedForwardExchange: one producer stage (a forward exchange with
// two parents, as the planner builds a shared subplan) is read by two
// consumer stages, the result stage directly and a stage that hashes it
// again. Every row arrives once through each, in every shuffle mode,
// also when a consumer attempt fails after reading and is retried (the
// output is kept until every consumer finished); memory goes back.
func TestSharedForwardExchange(t *testing.T) {
	for _, mode := range allShuffleModes {
		for _, fail := range []bool{false, true} {
			t.Run(mode.String(), func(t *testing.T) {
				defer goleak.VerifyNone(t)
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				budget := exec.NewMemoryBudget(0)
				const p, perTask = 3, 1000
				src := &genSource{PerTask: perTask, Batch: 100, Keys: 7, Sized: true}
				shared := &shuffle.Exchange{Kind: shuffle.Forward, Child: src}
				rehashed := &shuffle.Exchange{Kind: shuffle.Hash, Child: shared, Keys: []expr.Expr{genKeyCol()}, MaxParallelism: 16}
				plan := &concatNode{A: shared, B: rehashed}
				cfg := RunConfig{Parallelism: p, Slots: 2, Alloc: mem, Memory: budget, ShuffleMode: mode, Restart: policy.RestartConfig{Attempts: 2}}
				g, err := BuildJobGraph(plan)
				if err != nil {
					t.Fatal(err)
				}
				if len(g.Stages) != 3 {
					t.Fatalf("%d stages, want the shared producer, the rehash and the result", len(g.Stages))
				}
				if fail {
					// The rehashing stage's first task fails once, after
					// reading the shared output.
					rehash := g.Stages[1].ID
					cfg.Faults = &Faults{Attempt: func(stage, task, attempt int) AttemptFault {
						if stage == rehash && task == 0 && attempt == 0 {
							return AttemptFault{FailAtEnd: true}
						}
						return AttemptFault{}
					}}
				}
				out, e, err := runToEnd(t, plan, cfg)
				if err != nil {
					t.Fatal(err)
				}
				defer xchgReleaseAll(out)
				seen := map[int64]int{}
				for _, b := range out {
					for _, id := range i64col(b, 0) {
						seen[id]++
					}
				}
				for id := int64(0); id < p*perTask; id++ {
					if seen[id] != 2 {
						t.Fatalf("id %d arrived %d times, want 2 (fail=%v)", id, seen[id], fail)
					}
				}
				if len(seen) != p*perTask {
					t.Fatalf("%d ids, want %d", len(seen), p*perTask)
				}
				if n := len(e.Graph().Stages[1].Tasks[0].Attempts); fail && n != 2 {
					t.Fatalf("the failing consumer task ran %d attempts, want 2", n)
				}
				if budget.Used() != 0 {
					t.Fatalf("shuffle memory still held: %d", budget.Used())
				}
			})
		}
	}
}
