package shuffle

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/spill"
)

// spillFiles lists the data files (not the lock) in m's folders.
func spillFiles(t *testing.T, m *spill.Manager) []string {
	t.Helper()
	var out []string
	for _, dir := range m.Folders() {
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if filepath.Ext(e.Name()) == ".arrow" {
				out = append(out, e.Name())
			}
		}
	}
	return out
}

// readAllTasks reads every consumer task's share of buf and returns the
// v column of each task, in the order read.
func readAllTasks(t *testing.T, buf *Buffer, tasks int, mem memory.Allocator) [][]int64 {
	t.Helper()
	out := make([][]int64, tasks)
	for task := 0; task < tasks; task++ {
		r := OpenReader(buf, 7, task, tasks, mem)
		for {
			b, err := r.Next(context.Background())
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				r.Close()
				t.Fatal(err)
			}
			out[task] = append(out[task], b.Column(0).(*array.Int64).Int64Values()...)
			b.Release()
		}
		r.Close()
	}
	return out
}

// TestBufferSpillsUnderTightBudget: a hash exchange's output outgrows a
// budget far smaller than it; committed batches are evicted to disk when
// another reservation needs the room, writes that find none go to disk
// themselves, and every consumer task reads exactly its key groups'
// rows, in the same order as from memory, as often as it likes. A
// discarded attempt's spilled rows are never read; the counters say what
// was spilled, and release removes every file and gives back every byte.
func TestBufferSpillsUnderTightBudget(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	const producers, tasks, perProducer = 3, 4, 6 * exec.BatchSize
	ex := &Exchange{Kind: Hash, Keys: []expr.Expr{expr.NewColumn(0, arrow.PrimitiveTypes.Int64, "v")}, Child: leaf{}}
	fill := func(buf *Buffer) {
		t.Helper()
		ctx := context.Background()
		for p := 0; p < producers; p++ {
			for attempt := 0; attempt < 2; attempt++ {
				w := buf.Writer(p, attempt, mem)
				for i := int64(0); i < perProducer; i += exec.BatchSize {
					from := int64(p)*perProducer + i
					if attempt == 0 {
						from += 1 << 40 // rows of a losing attempt: never read
					}
					if err := w.Write(ctx, coalesceTestBatch(mem, from, exec.BatchSize)); err != nil {
						t.Fatal(err)
					}
				}
				if err := w.Flush(ctx); err != nil {
					t.Fatal(err)
				}
				w.Close()
			}
			buf.Discard(p, 0)
			if err := buf.Commit(p, 1); err != nil {
				t.Fatal(err)
			}
		}
	}

	inMem := NewBuffer(ex, Hash, 16, producers, exec.NewMemoryBudget(0))
	fill(inMem)
	want := readAllTasks(t, inMem, tasks, mem)
	inMem.Release()

	budget := exec.NewMemoryBudget(256 << 10) // a few batches of the ~2 MiB written
	m := spill.NewManager(spill.Config{Dirs: []string{t.TempDir()}})
	defer m.Close()
	var stats exec.OperatorStats
	buf := NewBuffer(ex, Hash, 16, producers, budget)
	buf.Spill(m, mem, &stats)
	fill(buf)
	if budget.Used() > budget.Limit() {
		t.Fatalf("budget holds %d of %d", budget.Used(), budget.Limit())
	}
	// Another operator's reservation takes what the buffer still holds
	// in memory: the budget evicts it.
	if held := budget.Used(); held > 0 {
		if err := budget.Reserve("other", budget.Limit()-held/2); err != nil {
			t.Fatalf("a reservation the buffer's eviction makes room for: %v", err)
		}
		budget.Release(budget.Limit() - held/2)
	}
	for round := 0; round < 2; round++ { // a second consumer attempt reads it all again
		got := readAllTasks(t, buf, tasks, mem)
		total := 0
		for task := range got {
			if !slices.Equal(got[task], want[task]) {
				t.Fatalf("round %d task %d: %d rows read back, want the %d read from memory in the same order", round, task, len(got[task]), len(want[task]))
			}
			total += len(got[task])
		}
		if total != producers*perProducer {
			t.Fatalf("%d rows read, want %d", total, producers*perProducer)
		}
	}
	if stats.Spill.Files.Load() == 0 || stats.Spill.Rows.Load() < producers*perProducer/2 || stats.Spill.Bytes.Load() == 0 {
		t.Fatalf("spill counters: %d files, %d rows, %d bytes", stats.Spill.Files.Load(), stats.Spill.Rows.Load(), stats.Spill.Bytes.Load())
	}
	if len(spillFiles(t, m)) == 0 {
		t.Fatal("no spill file while the buffer holds spilled output")
	}
	buf.Release()
	if left := spillFiles(t, m); len(left) != 0 {
		t.Fatalf("release left %v", left)
	}
	if budget.Used() != 0 {
		t.Fatalf("budget holds %d after release", budget.Used())
	}
}

// TestBroadcastSpilledReadByEveryTask: every task of a broadcast
// consumer reads the whole spilled output.
func TestBroadcastSpilledReadByEveryTask(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	budget := exec.NewMemoryBudget(1) // nothing fits: every write goes to disk
	m := spill.NewManager(spill.Config{Dirs: []string{t.TempDir()}, Compression: spill.Zstd})
	defer m.Close()
	buf := NewBuffer(&Exchange{Kind: Broadcast, Child: leaf{}}, Broadcast, 1, 2, budget)
	buf.Spill(m, mem, nil)
	defer buf.Release()
	for p := 0; p < 2; p++ {
		w := buf.Writer(p, 0, mem)
		if err := w.Write(context.Background(), coalesceTestBatch(mem, int64(p)*5000, 5000)); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		w.Close()
		if err := buf.Commit(p, 0); err != nil {
			t.Fatal(err)
		}
	}
	for task, got := range readAllTasks(t, buf, 3, mem) {
		if len(got) != 10000 || got[0] != 0 || got[9999] != 9999 {
			t.Fatalf("task %d read %d rows", task, len(got))
		}
	}
	if budget.Used() != 0 {
		t.Fatalf("budget holds %d with everything on disk", budget.Used())
	}
}

// Without spilling the shuffle fails as before, naming itself.
func TestBufferWithoutSpillFails(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	buf := NewBuffer(&Exchange{Kind: Gather, Child: leaf{}}, Gather, 1, 1, exec.NewMemoryBudget(1))
	defer buf.Release()
	w := buf.Writer(0, 0, mem)
	defer w.Close()
	err := w.Write(context.Background(), coalesceTestBatch(mem, 0, exec.BatchSize))
	if !errors.Is(err, exec.ErrResourcesExhausted) {
		t.Fatalf("want resources exhausted, got %v", err)
	}
}
