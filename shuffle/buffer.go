package shuffle

import (
	"fmt"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/shuffle/keygroup"
	"github.com/fsql-dev/fsql/spill"
)

// Buffer is the run-time side of one Exchange: its store, how it routes
// rows this run, its key-group count, the memory it holds and what every
// producer task's committed attempt wrote to every subpartition (the
// adaptive scheduler sizes consumer stages from these counters).
//
// Attempts write through their own Writer into their own staging; the
// runtime then commits one attempt per producer task (its rows and bytes
// per subpartition are merged into the counters then) and discards the
// others (their batches released, their memory given back). Counters and
// readers only ever see committed output.
type Buffer struct {
	Exchange *Exchange
	// Subpartitions is the number of key groups of a hash exchange, else 1.
	Subpartitions int
	// Producers is the producer stage's task count.
	Producers int

	kind   Kind // the routing this run: the exchange's, or Forward once switched
	store  *memStore
	budget *exec.MemoryBudget
	// unevict takes the store off the budget's evictors (spilling on).
	unevict func()

	mu       sync.Mutex
	rows     [][]int64 // committed, [producer][sub]
	bytes    [][]int64
	attempts map[attemptKey]*attemptOutput
	released bool
	// slices is what each task of a consumer stage reads, by stage ID and
	// task; a stage without an entry reads Flink's count-based range.
	slices map[int][][]keygroup.Slice
	// selective is the number of consumer stages when output is released
	// as its readers commit (0: kept until the buffer is released); need
	// counts, per consumer stage, the tasks still to commit that read
	// each producer's subpartition (selective.go).
	selective int
	need      map[int][][]int32
}

// attemptOutput is what one attempt wrote so far, counted per
// subpartition.
type attemptOutput struct {
	rows, bytes []int64
}

// NewBuffer returns the buffer of ex for producers tasks writing subs
// subpartitions (the key groups of a hash exchange, else 1), charging what
// it holds in memory to budget (Spill lets it keep output on disk too). kind is how rows are routed this run: ex.Kind, or
// Forward when the run-time broadcast switch made a hash exchange a
// pointwise edge (rows stored unsplit, consumer task i reads producer i).
func NewBuffer(ex *Exchange, kind Kind, subs, producers int, budget *exec.MemoryBudget) *Buffer {
	if kind != Hash {
		subs = 1
	}
	b := &Buffer{
		Exchange: ex, Subpartitions: subs, Producers: producers, kind: kind,
		store: newMemStore(producers, budget), budget: budget,
		rows: make([][]int64, producers), bytes: make([][]int64, producers),
		attempts: map[attemptKey]*attemptOutput{},
	}
	for p := 0; p < producers; p++ {
		b.rows[p] = make([]int64, subs)
		b.bytes[p] = make([]int64, subs)
	}
	return b
}

// Spill lets the buffer keep output on disk, in files of m, when the
// budget is tight (spill.go): it becomes one of the budget's evictors,
// and a write that finds no room goes to disk. Spilled batches are read
// back into alloc; stats, when not nil, are the exchange's counters
// (EXPLAIN ANALYZE prints what it spilled). Call it before the first
// write.
func (b *Buffer) Spill(m *spill.Manager, alloc memory.Allocator, stats *exec.OperatorStats) {
	if m == nil {
		return
	}
	if alloc == nil {
		alloc = memory.DefaultAllocator
	}
	b.store.mu.Lock()
	b.store.disk = &diskConfig{m: m, alloc: alloc, stats: stats}
	b.store.mu.Unlock()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.unevict == nil && !b.released {
		b.unevict = b.budget.AddEvictor(b.store)
	}
}

// Kind is how the buffer routes rows this run.
func (b *Buffer) Kind() Kind { return b.kind }

// Forward reports whether the run-time broadcast switch turned this hash
// exchange into a pointwise edge (no key-group split).
func (b *Buffer) Forward() bool { return b.Exchange.Kind == Hash && b.kind == Forward }

// Hashed reports whether rows are split by key group.
func (b *Buffer) Hashed() bool { return b.kind == Hash }

// SetSlices fixes what the tasks of consumer stage read (before they start).
func (b *Buffer) SetSlices(stage int, perTask [][]keygroup.Slice) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.slices == nil {
		b.slices = map[int][][]keygroup.Slice{}
	}
	b.slices[stage] = perTask
}

// Slices is what task of consumer stage reads, or nil when it reads a
// count-based range (or the whole exchange if not hashed).
func (b *Buffer) Slices(stage, task int) []keygroup.Slice {
	b.mu.Lock()
	defer b.mu.Unlock()
	if per, ok := b.slices[stage]; ok && task < len(per) {
		if per[task] == nil {
			return []keygroup.Slice{} // the task reads nothing of this input
		}
		return per[task]
	}
	return nil
}

// BatchesWith counts committed batches holding rows of key group sub.
func (b *Buffer) BatchesWith(sub int) int { return b.store.BatchesWith(sub) }

// BatchCounts is BatchesWith of every subpartition, in one pass.
func (b *Buffer) BatchCounts() []int { return b.store.BatchCounts(b.Subpartitions) }

// Writer returns the writer of attempt of producer task producer. What it
// writes stays in the attempt's staging until Commit.
func (b *Buffer) Writer(producer, attempt int, alloc memory.Allocator) *Writer {
	out := &attemptOutput{rows: make([]int64, b.Subpartitions), bytes: make([]int64, b.Subpartitions)}
	b.mu.Lock()
	b.attempts[attemptKey{producer, attempt}] = out
	b.mu.Unlock()
	return newWriter(b, producer, b.store.Stage(producer, attempt), out, alloc)
}

// Commit makes attempt's output producer's: readers and counters see it
// from now on. A producer commits once.
func (b *Buffer) Commit(producer, attempt int) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.released {
		return fmt.Errorf("%w: commit to a released exchange", exec.ErrInternal)
	}
	if err := b.store.Commit(producer, attempt); err != nil {
		return err
	}
	k := attemptKey{producer, attempt}
	if out := b.attempts[k]; out != nil {
		copy(b.rows[producer], out.rows)
		copy(b.bytes[producer], out.bytes)
		delete(b.attempts, k)
	}
	return nil
}

// Discard drops what attempt of producer wrote and gives its memory back.
// Call it once the attempt ended.
func (b *Buffer) Discard(producer, attempt int) {
	b.store.Discard(producer, attempt)
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.attempts, attemptKey{producer, attempt})
}

// write stores rb, which it owns, in an attempt's staging (which charges
// its bytes to the budget, or spills it). subs and ends are as in
// SubpartitionStore.Stage; the bytes are spread over the subpartitions by
// row count for the per-subpartition counters.
func (b *Buffer) write(st Staging, out *attemptOutput, rb arrow.RecordBatch, subs, ends []int32) error {
	n := exec.BatchBytes(rb)
	rows := rb.NumRows()
	if err := st.Write(rb, subs, ends); err != nil {
		return err
	}
	prev, charged := int32(0), int64(0)
	for i, sub := range subs {
		r := int64(ends[i] - prev)
		prev = ends[i]
		nb := n * r / rows
		if i == len(subs)-1 {
			nb = n - charged
		}
		charged += nb
		out.rows[sub] += r
		out.bytes[sub] += nb
	}
	// The attempt's goroutine is the only writer of out; Commit reads it
	// after the attempt ended.
	return nil
}

// Release drops every batch, committed or staged, gives their bytes back
// and removes their files; safe to call more than once.
func (b *Buffer) Release() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.released {
		return
	}
	b.released = true
	if b.unevict != nil {
		b.unevict()
		b.unevict = nil
	}
	b.store.Release()
	clear(b.attempts)
}

// Rows is the number of rows producer's committed attempt wrote to
// subpartition sub.
func (b *Buffer) Rows(producer, sub int) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.rows[producer][sub]
}

// Bytes is the number of bytes producer's committed attempt wrote to
// subpartition sub.
func (b *Buffer) Bytes(producer, sub int) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.bytes[producer][sub]
}

// SubpartitionBytes sums Bytes over producers, one entry per subpartition.
func (b *Buffer) SubpartitionBytes() []int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]int64, b.Subpartitions)
	for p := range b.bytes {
		for s, n := range b.bytes[p] {
			out[s] += n
		}
	}
	return out
}

// TotalRows is the number of rows written by all producers.
func (b *Buffer) TotalRows() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	var n int64
	for p := range b.rows {
		for _, r := range b.rows[p] {
			n += r
		}
	}
	return n
}

// TotalBytes is the number of bytes written by all producers.
func (b *Buffer) TotalBytes() int64 {
	var n int64
	for _, s := range b.SubpartitionBytes() {
		n += s
	}
	return n
}
