package runtime

import (
	"fmt"
	"reflect"
	"sort"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.uber.org/goleak"

	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/shuffle"
)

// twinModes are the two ways a task runs as two attempts: the first is
// cancelled mid-way (after 2 of its batches) and the second finishes; or
// both finish and the second is discarded.
var twinModes = []struct {
	name  string
	fault AttemptFault
}{
	{"first cancelled mid-way", AttemptFault{Twin: true, CancelAfter: 2}},
	{"both finish", AttemptFault{Twin: true, BothFinish: true}},
}

// runRows runs plan and returns its result rows as sorted strings of
// (id, key, producer[, consumer]) and the run's graph, checking that no
// buffer or budget byte is left.
func runRows(t *testing.T, plan exec.Node, cfg RunConfig) ([]string, *ExecutionGraph) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	budget := exec.NewMemoryBudget(0)
	cfg.Alloc, cfg.Memory = mem, budget
	out, e, err := runToEnd(t, plan, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, b := range out {
		for i := 0; i < int(b.NumRows()); i++ {
			r := fmt.Sprint(i64col(b, 0)[i], i64col(b, 1)[i], i32col(b, 2)[i])
			if b.NumCols() > 3 {
				r += fmt.Sprint(" ", i32col(b, 3)[i])
			}
			rows = append(rows, r)
		}
	}
	xchgReleaseAll(out)
	sort.Strings(rows)
	if budget.Used() != 0 {
		t.Fatalf("budget holds %d bytes after the run", budget.Used())
	}
	return rows, e.Graph()
}

// checkTwin checks that task of stage ran as two attempts of which one
// was committed and the other cancelled or discarded as the mode says.
func checkTwin(t *testing.T, g *ExecutionGraph, stage, task int, fault AttemptFault) {
	t.Helper()
	var r *StageRun
	for _, sr := range g.Stages {
		if sr.Stage.ID == stage {
			r = sr
		}
	}
	tr := r.Tasks[task]
	if len(tr.Attempts) != 2 || tr.Committed == nil {
		t.Fatalf("stage %d task %d: %d attempts, committed %v", stage, task, len(tr.Attempts), tr.Committed)
	}
	a0, a1 := tr.Attempts[0], tr.Attempts[1]
	if fault.CancelAfter > 0 {
		if a0.State() != Cancelled || a0.Rows == 0 || tr.Committed != a1 || a1.State() != Finished {
			t.Fatalf("attempt 0 %s after %d rows, attempt 1 %s; committed #%d", a0.State(), a0.Rows, a1.State(), tr.Committed.Number)
		}
		return
	}
	if a0.State() != Finished || a1.State() != Finished || tr.Committed != a0 {
		t.Fatalf("attempts %s and %s, committed #%d; want both finished, the first committed", a0.State(), a1.State(), tr.Committed.Number)
	}
}

// TestTwoAttemptsEveryExchangeKind: for a hash, broadcast, gather and
// forward exchange, a producer task run as two attempts (one cancelled
// mid-way, or both finishing and one discarded) gives the same answer as
// one attempt, and leaks neither buffers nor budget nor goroutines.
func TestTwoAttemptsEveryExchangeKind(t *testing.T) {
	defer goleak.VerifyNone(t)
	src := func(name string) *genSource { return &genSource{PerTask: 5000, Batch: 500, Keys: 97, Name: name} }
	plans := []struct {
		kind string
		plan func() exec.Node
	}{
		{"hash", func() exec.Node {
			return &tagTask{Child: &shuffle.Exchange{Kind: shuffle.Hash, Child: src("S"), Keys: []expr.Expr{genKeyCol()}, MaxParallelism: 8}}
		}},
		{"broadcast", func() exec.Node {
			return &tagTask{Child: &concatNode{A: &genSource{PerTask: 10, Batch: 10, Keys: 3}, B: &shuffle.Exchange{Kind: shuffle.Broadcast, Child: src("B")}}}
		}},
		{"gather", func() exec.Node {
			return &tagTask{Child: &shuffle.Exchange{Kind: shuffle.Gather, Child: src("S")}}
		}},
		{"forward", func() exec.Node {
			return &tagTask{Child: &shuffle.Exchange{Kind: shuffle.Forward, Child: src("S")}}
		}},
	}
	for _, pl := range plans {
		want, wg := runRows(t, pl.plan(), RunConfig{Parallelism: 3, Slots: 1})
		if len(want) == 0 {
			t.Fatalf("%s: no rows", pl.kind)
		}
		if pl.kind == "forward" && wg.Result.Parallelism != 3 {
			t.Fatalf("forward: consumer ran %d tasks, want the producer's 3", wg.Result.Parallelism)
		}
		for _, m := range twinModes {
			fault := m.fault
			cfg := RunConfig{Parallelism: 3, Slots: 1, Faults: &Faults{Attempt: func(stage, task, attempt int) AttemptFault {
				if stage == 1 && task == 1 && attempt == 0 {
					return fault
				}
				return AttemptFault{}
			}}}
			got, g := runRows(t, pl.plan(), cfg)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s, %s: %d rows, want %d (same as one attempt)", pl.kind, m.name, len(got), len(want))
			}
			checkTwin(t, g, 1, 1, fault)
			// With free slots the two attempts race; whichever wins, the
			// answer is the same.
			cfg.Slots = 4
			if got, _ := runRows(t, pl.plan(), cfg); !reflect.DeepEqual(got, want) {
				t.Errorf("%s, %s, concurrent attempts: %d rows, want %d", pl.kind, m.name, len(got), len(want))
			}
		}
	}
}

// TestResultStageRunsOneAttempt: the result stage streams rows to the
// caller and cannot take them back, so a fault asking for twins there is
// not honoured.
func TestResultStageRunsOneAttempt(t *testing.T) {
	defer goleak.VerifyNone(t)
	plan := &tagTask{Child: &shuffle.Exchange{Kind: shuffle.Gather, Child: &genSource{PerTask: 100, Batch: 10, Keys: 3}}}
	_, g := runRows(t, plan, RunConfig{Parallelism: 2, Slots: 2, Faults: &Faults{Attempt: func(_, _, attempt int) AttemptFault {
		if attempt > 0 {
			return AttemptFault{}
		}
		return AttemptFault{Twin: true, CancelAfter: 1}
	}}})
	for _, tr := range g.Result.Tasks {
		if len(tr.Attempts) != 1 || tr.Committed != tr.Attempts[0] {
			t.Fatalf("result task %d ran %d attempts", tr.Index, len(tr.Attempts))
		}
	}
	for _, tr := range g.Stages[0].Tasks {
		if len(tr.Attempts) != 2 {
			t.Fatalf("producer task %d ran %d attempts, want 2", tr.Index, len(tr.Attempts))
		}
	}
}

// TestWorkerPool: attempts are placed on the slots of several workers
// and each records where it ran; every worker gets work.
func TestWorkerPool(t *testing.T) {
	defer goleak.VerifyNone(t)
	plan := &tagTask{Child: &shuffle.Exchange{Kind: shuffle.Hash, Child: &genSource{PerTask: 2000, Batch: 100, Keys: 50}, Keys: []expr.Expr{genKeyCol()}, MaxParallelism: 8}}
	workers := NewLocalPool(3, 2)
	_, g := runRows(t, plan, RunConfig{Parallelism: 6, Workers: workers})
	seen := map[string]bool{}
	for _, r := range g.Stages {
		for _, tr := range r.Tasks {
			a := tr.Committed
			if a == nil || a.Worker == "" || a.Slot < 0 || a.Slot >= 2 {
				t.Fatalf("stage %d task %d: committed attempt %+v", r.Stage.ID, tr.Index, a)
			}
			seen[a.Worker] = true
		}
	}
	if len(seen) != 3 {
		t.Fatalf("attempts ran on %v, want all of tm-0, tm-1, tm-2", seen)
	}
	if w := workers[1]; w.ID() != "tm-1" || w.Slots() != 2 || w.Labels()["host"] == "" {
		t.Fatalf("worker %s: %d slots, labels %v", w.ID(), w.Slots(), w.Labels())
	}
}
