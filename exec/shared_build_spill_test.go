package exec

import (
	"context"
	"errors"
	"io"
	"math/rand"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/spill"
)

// sharedSpillBudget makes each of two task slots a quota of 160 KB: the
// 6,000-row build side (about 480 KB with its table) spills, and each of
// its 16 partitions (about 30 KB) fits a task's share alone, so no
// partition is split again.
const sharedSpillBudget = 320 << 10

// spillTask runs j as task of a stage sharing sb, with spill files in m
// and the stage's operator counters op; it returns the rows or the error.
func spillTask(ctx context.Context, alloc memory.Allocator, budget *MemoryBudget, m *spill.Manager, op *OperatorStats, sb *SharedBuild, j Node) ([]string, error) {
	tc := &TaskContext{Alloc: alloc, Memory: budget, Parallelism: 3, SharedBuild: sb, Spill: m, Op: op}
	s, err := openTree(tc, j)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	var out []string
	for {
		b, err := s.Next(ctx)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, renderRows(b)...)
		b.Release()
	}
}

// spillFilesIn lists the spill files (not the lock) in m's folders.
func spillFilesIn(m *spill.Manager) []string {
	var out []string
	for _, f := range m.Folders() {
		ents, _ := os.ReadDir(f)
		for _, e := range ents {
			if e.Name() != "owner.lock" {
				out = append(out, e.Name())
			}
		}
	}
	return out
}

// The tasks of a stage whose broadcast build side spills share it: one
// task reads, partitions and writes it, the others read its partition
// files, each writing only its own probe rows; every task's answer is
// the in-memory one, for every join type that shares a build; the files
// go when the stage ends.
func TestSharedBuildSpilledOnce(t *testing.T) {
	r := rand.New(rand.NewSource(22))
	const buildRows, probeRows, tasks = 6000, 1000, 3
	brows := joinSpillRows(r, buildRows, 3000, 0, true)
	probes := make([]*opSource, tasks)
	for i := range probes {
		probes[i] = &opSource{schema: spillProbeSchema, rows: joinSpillRows(r, probeRows, 3500, 0, true), per: 250, t: t}
	}
	for _, typ := range []JoinType{InnerJoin, LeftJoin, SemiJoin, AntiJoin, NullAwareAntiJoin, MarkJoin} {
		for _, key := range []string{"int", "string"} {
			t.Run(typ.String()+"/"+key, func(t *testing.T) {
				alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer alloc.AssertSize(t, 0)
				m := spill.NewManager(spill.Config{Dirs: []string{t.TempDir()}})
				defer m.Close()
				budget := NewMemoryBudget(sharedSpillBudget)
				budget.SetSlots(2)
				sb := NewSharedBuild(budget, "test join")
				op := &OperatorStats{}
				var reads atomic.Int64
				plain := &opSource{schema: spillBuildSchema, rows: brows, per: 500, t: t}
				counted := &gatedSource{opSource: plain, reads: &reads}
				join := func(build, probe Node) *HashJoin {
					j := &HashJoin{Type: typ, Build: build, Probe: probe,
						BuildKeys: []expr.Expr{col(0, tInt64)}, ProbeKeys: []expr.Expr{col(0, tInt32)}}
					if key == "string" {
						j.BuildKeys, j.ProbeKeys = []expr.Expr{col(1, tStr)}, []expr.Expr{col(1, tStr)}
					}
					return j
				}
				for i, probe := range probes {
					want := sorted(runRows(t, join(plain, probe)))
					got, err := spillTask(context.Background(), alloc, budget, m, op, sb, join(counted, probe))
					if err != nil {
						t.Fatalf("task %d: %v", i, err)
					}
					if !slices.Equal(sorted(got), want) {
						t.Fatalf("task %d: %d rows differ from the %d in memory", i, len(got), len(want))
					}
				}
				if sb.Builds() != 1 || op.SharedBuilt.Load() != 1 || op.SharedBorrowed.Load() != tasks-1 {
					t.Fatalf("%d builds, %d built, %d borrowed: want one build shared by %d tasks", sb.Builds(), op.SharedBuilt.Load(), op.SharedBorrowed.Load(), tasks)
				}
				if n := reads.Load(); n > buildRows/500 {
					t.Fatalf("%d build batches read: the build side (%d batches) was read more than once", n, buildRows/500)
				}
				st := &op.Spill
				t.Logf("%d files, %d rows, %d bytes, %d passes", st.Files.Load(), st.Rows.Load(), st.Bytes.Load(), st.Passes.Load())
				if typ != NullAwareAntiJoin {
					// One build file written once, one probe file per
					// task; per task, the build's spilled partitions
					// alone would be about 3 x 5,000 rows.
					if st.Files.Load() != 1+tasks || st.Rows.Load() > buildRows+tasks*probeRows || st.Rows.Load() < buildRows/2 {
						t.Fatalf("spilled %d files, %d rows: want 1 build file and %d probe files, at most %d rows", st.Files.Load(), st.Rows.Load(), tasks, buildRows+tasks*probeRows)
					}
				}
				if typ != NullAwareAntiJoin && len(spillFilesIn(m)) == 0 {
					t.Fatal("the shared partitions went before the stage ended")
				}
				sb.Close()
				if left := spillFilesIn(m); len(left) != 0 {
					t.Fatalf("the stage ended, but %v are left", left)
				}
				if u := budget.Used(); u != 0 {
					t.Fatalf("%d bytes held after the stage ended", u)
				}
				if p := budget.Peak(); p > sharedSpillBudget {
					t.Fatalf("peak %d past the budget %d", p, sharedSpillBudget)
				}
			})
		}
	}
}

// Cancelling a shared build while it spills leaves no file and lets the
// next attempt build; cancelling a task that probes a spilled shared
// build removes its own files and keeps the shared ones for the others;
// the stage's end removes those.
func TestSharedBuildSpillCancelled(t *testing.T) {
	r := rand.New(rand.NewSource(23))
	// 48 batches, whose spilled partitions' rows make records of their
	// own before the build side ends.
	brows := joinSpillRows(r, 24000, 12000, 0, false)
	prows := joinSpillRows(r, 1000, 3500, 0, false)
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer alloc.AssertSize(t, 0)
	m := spill.NewManager(spill.Config{Dirs: []string{t.TempDir()}})
	defer m.Close()
	budget := NewMemoryBudget(sharedSpillBudget)
	budget.SetSlots(2)
	sb := NewSharedBuild(budget, "test join")
	op := &OperatorStats{}
	var build, probe Node = &opSource{schema: spillBuildSchema, rows: brows, per: 500, t: t}, &opSource{schema: spillProbeSchema, rows: prows, per: 250, t: t}
	join := func(build, probe Node) *HashJoin {
		return &HashJoin{Type: LeftJoin, Build: build, Probe: probe,
			BuildKeys: []expr.Expr{col(0, tInt64)}, ProbeKeys: []expr.Expr{col(0, tInt32)}}
	}
	want := sorted(runRows(t, join(build, probe)))

	// The builder is cancelled after 40 of its 48 build batches, well
	// into its spill.
	ctx, cancel := context.WithCancel(context.Background())
	_, err := spillTask(ctx, alloc, budget, m, op, sb, join(&cancelAfter{Node: build, after: 40, cancel: cancel}, probe))
	cancel()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled builder: %v", err)
	}
	if m.Stats().Files == 0 {
		t.Fatal("the build had not spilled before the cancellation")
	}
	if left := spillFilesIn(m); len(left) != 0 {
		t.Fatalf("the cancelled build left %v", left)
	}
	if u := budget.Used(); u != 0 {
		t.Fatalf("%d bytes held after the cancelled build", u)
	}

	// The next attempt builds and shares it.
	got, err := spillTask(context.Background(), alloc, budget, m, op, sb, join(build, probe))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sorted(got), want) {
		t.Fatalf("%d rows differ from the %d in memory", len(got), len(want))
	}
	shared := spillFilesIn(m)
	if len(shared) != 1 || !strings.Contains(shared[0], "join-build") {
		t.Fatalf("after the builder: %v, want the shared build file alone", shared)
	}

	// A borrower cancelled while it writes its probe rows.
	ctx, cancel = context.WithCancel(context.Background())
	_, err = spillTask(ctx, alloc, budget, m, op, sb, join(build, &cancelAfter{Node: probe, after: 3, cancel: cancel}))
	cancel()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled borrower: %v", err)
	}
	if left := spillFilesIn(m); !slices.Equal(left, shared) {
		t.Fatalf("after the cancelled borrower: %v, want %v", left, shared)
	}

	// Another borrower gets the answer from the shared files.
	got, err = spillTask(context.Background(), alloc, budget, m, op, sb, join(build, probe))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sorted(got), want) {
		t.Fatalf("borrower: %d rows differ from the %d in memory", len(got), len(want))
	}
	if sb.Builds() != 2 || op.SharedBorrowed.Load() != 2 {
		t.Fatalf("%d builds, %d borrowed: want the cancelled build and one shared by the 3 tasks after it", sb.Builds(), op.SharedBorrowed.Load())
	}
	sb.Close()
	if left := spillFilesIn(m); len(left) != 0 {
		t.Fatalf("the stage ended, but %v are left", left)
	}
	if u := budget.Used(); u != 0 {
		t.Fatalf("%d bytes held after the stage ended", u)
	}
}
