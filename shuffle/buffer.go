package shuffle

import (
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/shuffle/keygroup"
)

// Buffer is the run-time side of one Exchange: its store, its resolved
// key-group count, the memory it holds and what every producer wrote to
// every subpartition (the adaptive scheduler sizes consumer stages from
// these counters).
type Buffer struct {
	Exchange *Exchange
	// Subpartitions is the number of key groups of a hash exchange, else 1.
	Subpartitions int
	// Producers is the producer stage's task count.
	Producers int

	store  SubpartitionStore
	budget *exec.MemoryBudget
	held   atomic.Int64 // bytes reserved in budget
	rows   [][]int64    // [producer][sub], each row written by its producer only
	bytes  [][]int64
	// forward says the exchange was switched to a pointwise edge at run
	// time (the broadcast switch): rows are not split by key group and
	// consumer task i reads producer i's output.
	forward bool
	release sync.Once

	mu sync.Mutex
	// slices is what each task of a consumer stage reads, by stage ID and
	// task; a stage without an entry reads Flink's count-based range.
	slices map[int][][]keygroup.Slice
}

// NewBuffer returns the buffer of ex for producers tasks writing subs
// subpartitions (the key groups of a hash exchange, else 1), charging what
// it holds to budget. forward makes a hash exchange a pointwise edge (the
// run-time broadcast switch): rows are stored unsplit, and consumer task i
// reads producer i's output.
func NewBuffer(ex *Exchange, subs, producers int, forward bool, budget *exec.MemoryBudget) *Buffer {
	b := &Buffer{
		Exchange: ex, Subpartitions: subs, Producers: producers, forward: forward,
		store: newMemStore(producers), budget: budget,
		rows: make([][]int64, producers), bytes: make([][]int64, producers),
	}
	for p := 0; p < producers; p++ {
		b.rows[p] = make([]int64, subs)
		b.bytes[p] = make([]int64, subs)
	}
	return b
}

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

// Forward reports whether the run-time broadcast switch turned this hash
// exchange into a pointwise edge (no key-group split).
func (b *Buffer) Forward() bool { return b.forward }

// Hashed reports whether rows are split by key group (a hash exchange not
// switched to forward).
func (b *Buffer) Hashed() bool { return b.Exchange.Kind == Hash && !b.forward }

// BatchesWith counts stored batches holding rows of key group sub.
func (b *Buffer) BatchesWith(sub int) int { return b.store.BatchesWith(sub) }

// BatchCounts is BatchesWith of every subpartition, in one pass.
func (b *Buffer) BatchCounts() []int { return b.store.BatchCounts(b.Subpartitions) }

// FinishProducers tells the store every producer wrote everything.
func (b *Buffer) FinishProducers() {
	for p := 0; p < b.Producers; p++ {
		b.store.FinishProducer(p)
	}
}

// write stores rb for producer, charging its bytes to the budget. subs
// and ends are as in SubpartitionStore.Write; the bytes are spread over
// the subpartitions by row count for the per-subpartition counters.
func (b *Buffer) write(producer int, rb arrow.RecordBatch, subs, ends []int32) error {
	n := exec.BatchBytes(rb)
	if err := b.budget.Reserve("shuffle", n); err != nil {
		rb.Release()
		return err
	}
	b.held.Add(n)
	rows := rb.NumRows()
	prev, charged := int32(0), int64(0)
	for i, sub := range subs {
		r := int64(ends[i] - prev)
		prev = ends[i]
		nb := n * r / rows
		if i == len(subs)-1 {
			nb = n - charged
		}
		charged += nb
		b.rows[producer][sub] += r
		b.bytes[producer][sub] += nb
	}
	return b.store.Write(producer, rb, subs, ends)
}

// Release drops the buffered batches and gives their bytes back; safe to
// call more than once.
func (b *Buffer) Release() {
	b.release.Do(func() {
		b.store.Release()
		b.budget.Release(b.held.Swap(0))
	})
}

// Rows is the number of rows producer wrote to subpartition sub.
func (b *Buffer) Rows(producer, sub int) int64 { return b.rows[producer][sub] }

// Bytes is the number of bytes producer wrote to subpartition sub.
func (b *Buffer) Bytes(producer, sub int) int64 { return b.bytes[producer][sub] }

// SubpartitionBytes sums Bytes over producers, one entry per subpartition.
func (b *Buffer) SubpartitionBytes() []int64 {
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
