package runtime

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.uber.org/goleak"

	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/runtime/policy"
	"github.com/fsql-dev/fsql/shuffle"
	"github.com/fsql-dev/fsql/shuffle/keygroup"
)

var allShuffleModes = []ShuffleMode{AllExchangesBlocking, AllExchangesHybridFull, AllExchangesHybridSelective}

// TestHybridStartsConsumersWhenSlotsHoldBoth: a 3-task source gathered
// into the result stage, then a source -> gather -> single task ->
// gather chain. In hybrid modes a consumer starts while its producer
// runs only once the producer committed a task and when the free slots
// hold every queued attempt plus its own tasks (with 4 slots for the
// first plan, 5 for the chain's middle stage; never with one slot),
// else it waits as in blocking mode. The chain's last stage reads a
// one-task producer, which has nothing to read before it ends, so it is
// never pipelined. Every mode and slot count returns the same rows in
// the same order.
func TestHybridStartsConsumersWhenSlotsHoldBoth(t *testing.T) {
	defer goleak.VerifyNone(t)
	const perTask, tasks = 2000, 3
	gen := func() *genSource { return &genSource{PerTask: perTask, Batch: 250, Keys: 7, Work: time.Millisecond} }
	plans := map[string]struct {
		plan func() exec.Node
		// pipelined[slots] is how many stages start pipelined in hybrid
		// mode, -1 when that depends on timing (a consumer that does not
		// fit at first may fit once some producer tasks ended).
		pipelined map[int]int
	}{
		"gather": {
			plan:      func() exec.Node { return &shuffle.Exchange{Kind: shuffle.Gather, Child: gen()} },
			pipelined: map[int]int{1: 0, 2: -1, 3: -1, 4: 1, 8: 1},
		},
		"chain": {
			plan: func() exec.Node {
				mid := &tagTask{Child: &shuffle.Exchange{Kind: shuffle.Gather, Child: gen()}}
				return &shuffle.Exchange{Kind: shuffle.Gather, Child: mid}
			},
			pipelined: map[int]int{1: 0, 3: -1, 4: -1, 5: 1, 8: 1},
		},
	}
	for name, pl := range plans {
		for slots, wantPipelined := range pl.pipelined {
			for _, mode := range allShuffleModes {
				t.Run(fmt.Sprintf("%s/%d-slots/%s", name, slots, mode), func(t *testing.T) {
					mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
					defer mem.AssertSize(t, 0)
					budget := exec.NewMemoryBudget(0)
					out, e, err := runToEnd(t, pl.plan(), RunConfig{Parallelism: tasks, Slots: slots, Alloc: mem, Memory: budget, ShuffleMode: mode})
					if err != nil {
						t.Fatal(err)
					}
					next := int64(0)
					for _, b := range out {
						for _, id := range i64col(b, 0) {
							if id != next {
								t.Fatalf("row %d has id %d: rows lost, repeated or out of order", next, id)
							}
							next++
						}
					}
					xchgReleaseAll(out)
					if next != perTask*tasks {
						t.Fatalf("%d rows, want %d", next, perTask*tasks)
					}
					got := 0
					for _, r := range e.Graph().Stages {
						if len(r.Pipelined) == 0 {
							continue
						}
						got++
						for _, p := range r.Pipelined {
							if pr := e.Graph().Run(p); !r.Start.Before(pr.End) {
								t.Errorf("stage %d is marked pipelined but started %s after stage %d ended", r.Stage.ID, r.Start.Sub(pr.End), p.ID)
							}
						}
					}
					want := wantPipelined
					if !mode.Hybrid() {
						want = 0
					}
					if want >= 0 && got != want {
						t.Errorf("%d stages started pipelined, want %d", got, want)
					}
					if ex := e.Graph().Explain(nil); (got > 0) != strings.Contains(ex, "pipelined: started while Stage") {
						t.Errorf("EXPLAIN ANALYZE does not say which edges ran pipelined:\n%s", ex)
					}
					if budget.Used() != 0 {
						t.Errorf("budget holds %d after the run", budget.Used())
					}
				})
			}
		}
	}
}

// TestHybridJoinWaitsForItsBuild: a shuffled join reads its build side
// whole before it probes. The build side's task 2 runs long after its
// other tasks committed, with slots to spare; in hybrid mode the join
// stage still does not start before the build side finished (it would
// only hold slots), and the answer is blocking mode's. readWhole tells
// the build input from the probe input.
func TestHybridJoinWaitsForItsBuild(t *testing.T) {
	defer goleak.VerifyNone(t)
	plan := func() *exec.HashJoin {
		probe := &genSource{PerTask: 500, Batch: 125, Keys: 7, Work: time.Millisecond}
		build := &genSource{PerTask: 20, Batch: 5, Keys: 7, Work: 5 * time.Millisecond, HotTask: 2, HotWork: 60 * time.Millisecond}
		hash := func(n exec.Node) *shuffle.Exchange {
			return &shuffle.Exchange{Kind: shuffle.Hash, Child: n, Keys: []expr.Expr{genKeyCol()}, MaxParallelism: 8}
		}
		return &exec.HashJoin{Type: exec.InnerJoin, Probe: hash(probe), Build: hash(build),
			ProbeKeys: []expr.Expr{genKeyCol()}, BuildKeys: []expr.Expr{genKeyCol()}}
	}
	hj := plan()
	g, err := BuildJobGraph(hj)
	if err != nil {
		t.Fatal(err)
	}
	whole := (&scheduler{}).readWhole(g.Result)
	if len(whole) != 1 || !whole[hj.Build.(*shuffle.Exchange)] {
		t.Fatalf("readWhole %v, want the build side %s only", whole, hj.Build)
	}
	count := func(mode ShuffleMode) (int64, *ExecutionGraph) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		out, e, err := runToEnd(t, plan(), RunConfig{Parallelism: 4, Slots: 8, Alloc: mem, Memory: exec.NewMemoryBudget(0), ShuffleMode: mode})
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		for _, b := range out {
			n += b.NumRows()
		}
		xchgReleaseAll(out)
		return n, e.Graph()
	}
	want, _ := count(AllExchangesBlocking)
	for _, mode := range []ShuffleMode{AllExchangesHybridFull, AllExchangesHybridSelective} {
		got, eg := count(mode)
		if got != want {
			t.Fatalf("%s: %d join rows, want %d", mode, got, want)
		}
		join := eg.Result
		whole := (&scheduler{}).readWhole(join.Stage)
		for i, ex := range join.Stage.Inputs {
			if whole[ex] && join.Start.Before(eg.Run(join.Stage.Producers[i]).End) {
				t.Errorf("%s: the join stage started %s before its build side finished:\n%s", mode, eg.Run(join.Stage.Producers[i]).End.Sub(join.Start), eg.Explain(nil))
			}
		}
	}
}

// TestHybridCancelWhilePipelined: the result stage reads an endless
// source's gather while the source runs; closing the query after the
// first batches stops every attempt, waiting readers included, and
// leaks no goroutine, buffer or budget.
func TestHybridCancelWhilePipelined(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, mode := range []ShuffleMode{AllExchangesHybridFull, AllExchangesHybridSelective} {
		t.Run(mode.String(), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			budget := exec.NewMemoryBudget(0)
			// Task 0 ends, so its commit reaches the result; tasks 1 and 2
			// never end, so the result's reader waits at producer 1.
			src := &genSource{PerTask: 4 * exec.BatchSize, Batch: 1024, Keys: 3}
			endless := &genSource{PerTask: 1000, Batch: 100, Keys: 3, Infinite: true, Work: time.Millisecond}
			plan := &shuffle.Exchange{Kind: shuffle.Gather, Child: &firstTaskEnds{ends: src, rest: endless}}
			e, err := Run(context.Background(), plan, RunConfig{Parallelism: 3, Slots: 4, Alloc: mem, Memory: budget, ShuffleMode: mode})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			for i := 0; i < 3; i++ {
				b, err := e.Next(ctx)
				if err != nil {
					t.Fatalf("batch %d: %v", i, err)
				}
				b.Release()
			}
			e.Close()
			if len(e.Graph().Result.Pipelined) == 0 {
				t.Fatal("the result stage did not start pipelined")
			}
			if budget.Used() != 0 {
				t.Errorf("budget holds %d after Close", budget.Used())
			}
		})
	}
}

// TestHybridProducerRetryAfterConsumerRead: a producer task's first
// attempt fails (retryably) after the pipelined consumer began reading
// the output of tasks committed before it; the consumer reads only the
// retry's committed output, so every row arrives once.
func TestHybridProducerRetryAfterConsumerRead(t *testing.T) {
	defer goleak.VerifyNone(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	src := &genSource{PerTask: 2000, Batch: 100, Keys: 3, Work: time.Millisecond, Fail: true, Retryable: true, FailTask: 2, FailAt: 15}
	plan := &shuffle.Exchange{Kind: shuffle.Gather, Child: src}
	out, e, err := runToEnd(t, plan, RunConfig{Parallelism: 3, Slots: 4, Alloc: mem, ShuffleMode: AllExchangesHybridFull, Restart: policy.RestartConfig{Attempts: 2}})
	if err != nil {
		t.Fatal(err)
	}
	defer xchgReleaseAll(out)
	next := int64(0)
	for _, b := range out {
		for _, id := range i64col(b, 0) {
			if id != next {
				t.Fatalf("row %d has id %d", next, id)
			}
			next++
		}
	}
	if next != 6000 {
		t.Fatalf("%d rows, want 6000", next)
	}
	g := e.Graph()
	if len(g.Result.Pipelined) == 0 {
		t.Fatal("the result stage did not start pipelined")
	}
	if n := len(g.Stages[0].Tasks[2].Attempts); n != 2 {
		t.Fatalf("task 2 ran %d attempts, want the failed one and its retry", n)
	}
}

// firstTaskEnds runs ends in task 0 and rest in every other task.
type firstTaskEnds struct{ ends, rest exec.Node }

func (f *firstTaskEnds) Schema() *arrow.Schema { return f.ends.Schema() }
func (f *firstTaskEnds) Children() []exec.Node { return nil }
func (f *firstTaskEnds) String() string        { return "FirstTaskEnds" }
func (f *firstTaskEnds) Open(tc *exec.TaskContext, in []exec.Stream) (exec.Stream, error) {
	if tc.Task == 0 {
		return f.ends.Open(tc, in)
	}
	return f.rest.Open(tc, in)
}

func TestParseShuffleMode(t *testing.T) {
	for _, m := range allShuffleModes {
		got, err := ParseShuffleMode(strings.ToLower(m.String()))
		if err != nil || got != m {
			t.Errorf("ParseShuffleMode(%q) = %v, %v", strings.ToLower(m.String()), got, err)
		}
	}
	if _, err := ParseShuffleMode("PIPELINED"); err == nil || !strings.Contains(err.Error(), "ALL_EXCHANGES_HYBRID_FULL") {
		t.Errorf("unknown mode: %v", err)
	}
}

// TestHybridHashEdgePipelined: a stage reading a hash exchange starts
// while its producers run when the slots hold both (never with one
// slot). With adaptive parallelism off its task count is the run's, with
// count-based ranges; with it on, it waits for a first committed
// producer task and decides from the committed bytes scaled by the
// producers' progress, balancing its ranges by them. Either way every
// row is read once, by the task owning its key group, also when a
// producer attempt fails after the consumer began reading and is
// retried; EXPLAIN ANALYZE says how the parallelism was decided.
func TestHybridHashEdgePipelined(t *testing.T) {
	defer goleak.VerifyNone(t)
	const perTask, tasks, maxP = 3000, 3, 16
	for _, c := range []struct {
		name     string
		slots    int
		adaptive bool
		fail     bool
		want     bool // the hash consumer starts pipelined
		explain  string
	}{
		{"one-slot", 1, false, false, false, ""},
		{"fixed", 8, false, false, true, "[hash: parallelism.default, count-based key-group ranges (adaptive off)]"},
		{"fixed-retry", 8, false, true, true, "[hash: parallelism.default"},
		{"adaptive", 8, true, false, true, "scaled to"},
		{"adaptive-retry", 8, true, true, true, "committed by"},
	} {
		for _, mode := range []ShuffleMode{AllExchangesBlocking, AllExchangesHybridFull} {
			t.Run(c.name+"/"+mode.String(), func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				budget := exec.NewMemoryBudget(0)
				// Task 0 ends first (its sample commits early); the others
				// take longer.
				src := &genSource{PerTask: perTask, Batch: 100, Keys: 101, Work: 2 * time.Millisecond, Sized: true}
				if c.fail {
					src.Fail, src.Retryable, src.FailTask, src.FailAt = true, true, 2, 20
				}
				fast := &genSource{PerTask: perTask, Batch: 1000, Keys: 101, Sized: true}
				leaf := &sizedFirstTaskEnds{firstTaskEnds{ends: fast, rest: src}, tasks * perTask * genRowBytes}
				hashed := &shuffle.Exchange{Kind: shuffle.Hash, Child: leaf, Keys: []expr.Expr{genKeyCol()}, MaxParallelism: maxP}
				consumer := &tagTask{Child: hashed}
				plan := &shuffle.Exchange{Kind: shuffle.Gather, Child: consumer}
				cfg := RunConfig{Parallelism: tasks, Slots: c.slots, Alloc: mem, Memory: budget, ShuffleMode: mode, Restart: policy.RestartConfig{Attempts: 2}}
				if c.adaptive {
					cfg.Adaptive = policy.DefaultAdaptiveConfig()
					cfg.Adaptive.BroadcastThreshold = 0
					cfg.Adaptive.MinBytesPerTask = -1 // tasks by bytes only: 3 for the source
					cfg.Adaptive.BytesPerTask = 64 << 10
				}
				out, e, err := runToEnd(t, plan, cfg)
				if err != nil {
					t.Fatal(err)
				}
				defer xchgReleaseAll(out)
				g := e.Graph()
				var cr *StageRun
				for _, r := range g.Stages {
					if r.Stage.Output == plan {
						cr = r
					}
				}
				p := cr.Parallelism
				seen := make([]int, tasks*perTask)
				owner := map[int64]int32{}
				for _, b := range out {
					ids, keys, cons := i64col(b, 0), i64col(b, 1), i32col(b, 3)
					h := make([]uint32, b.NumRows())
					exec.HashColumns([]arrow.Array{b.Column(1)}, h)
					for i := range ids {
						seen[ids[i]]++
						if o, ok := owner[keys[i]]; ok && o != cons[i] {
							t.Fatalf("key %d read by tasks %d and %d", keys[i], o, cons[i])
						}
						owner[keys[i]] = cons[i]
						if !c.adaptive {
							kg := keygroup.ForHash(h[i], maxP)
							if want := keygroup.OperatorIndex(kg, p, maxP); int(cons[i]) != want {
								t.Fatalf("id %d (key group %d) read by task %d, owner is task %d", ids[i], kg, cons[i], want)
							}
						}
					}
				}
				for id, n := range seen {
					if n != 1 {
						t.Fatalf("id %d seen %d times", id, n)
					}
				}
				pipelined := len(cr.Pipelined) > 0
				if want := c.want && mode.Hybrid(); pipelined != want {
					t.Fatalf("hash consumer pipelined: %v, want %v\n%s", pipelined, want, g.Explain(nil))
				}
				ex := g.Explain(nil)
				if testing.Verbose() && pipelined && c.adaptive && !c.fail {
					t.Log(ex)
				}
				if pipelined && !strings.Contains(ex, c.explain) {
					t.Errorf("EXPLAIN ANALYZE does not say how the parallelism was decided (%q):\n%s", c.explain, ex)
				}
				if c.fail && len(g.Stages[0].Tasks[2].Attempts) != 2 {
					t.Errorf("task 2 ran %d attempts, want the failed one and its retry", len(g.Stages[0].Tasks[2].Attempts))
				}
				if budget.Used() != 0 {
					t.Errorf("budget holds %d after the run", budget.Used())
				}
			})
		}
	}
}

// sizedFirstTaskEnds is firstTaskEnds reporting its stage's input bytes,
// as a scan does, so adaptive parallelism sizes its stage.
type sizedFirstTaskEnds struct {
	firstTaskEnds
	bytes int64
}

func (f *sizedFirstTaskEnds) SourceSize(context.Context, *exec.TaskContext) (int64, int, error) {
	return f.bytes, 3, nil
}

// TestSelectiveReleasesAsConsumersCommit: in selective mode an exchange's
// output goes as its consumer tasks commit (before the stage ends: by
// then every byte went back), in full mode it stays until the consumer
// stage finished; rows are the same either way.
func TestSelectiveReleasesAsConsumersCommit(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, mode := range []ShuffleMode{AllExchangesHybridFull, AllExchangesHybridSelective} {
		t.Run(mode.String(), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			src := &genSource{PerTask: 4000, Batch: 500, Keys: 97}
			hashed := &shuffle.Exchange{Kind: shuffle.Hash, Child: src, Keys: []expr.Expr{genKeyCol()}, MaxParallelism: 16}
			plan := &shuffle.Exchange{Kind: shuffle.Gather, Child: &tagTask{Child: hashed}}
			out, e, err := runToEnd(t, plan, RunConfig{Parallelism: 3, Slots: 4, Alloc: mem, Memory: exec.NewMemoryBudget(0), ShuffleMode: mode})
			if err != nil {
				t.Fatal(err)
			}
			rows := int64(0)
			for _, b := range out {
				rows += b.NumRows()
			}
			xchgReleaseAll(out)
			if rows != 12000 {
				t.Fatalf("%d rows, want 12000", rows)
			}
			buf := e.Graph().Stages[0].OutBuffer
			early := buf.ReleasedEarly()
			if mode == AllExchangesHybridSelective && early != buf.TotalBytes() || mode == AllExchangesHybridFull && early != 0 {
				t.Fatalf("released %d of %d bytes as consumer tasks committed", early, buf.TotalBytes())
			}
		})
	}
}
