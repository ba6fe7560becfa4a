package exec

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/exec/keygroup"
)

// ExchangeKind says how an Exchange routes rows from producer tasks to
// consumer tasks.
type ExchangeKind int

const (
	// HashExchange sends each row to the task owning its key group:
	// keygroup.ForHash(HashColumns(Keys), MaxParallelism).
	HashExchange ExchangeKind = iota
	// BroadcastExchange sends every row to every consumer task (the build
	// side of a broadcast join).
	BroadcastExchange
	// GatherExchange sends every row to a single consumer task.
	GatherExchange
)

// String names the kind as EXPLAIN prints it.
func (k ExchangeKind) String() string {
	switch k {
	case HashExchange:
		return "hash"
	case BroadcastExchange:
		return "broadcast"
	case GatherExchange:
		return "gather"
	}
	return fmt.Sprintf("ExchangeKind(%d)", int(k))
}

// Exchange is a stage boundary: the stage below (Child) writes its output
// into the exchange, the stage above reads it. BuildStages cuts the plan
// here; the scheduler, not Open, runs both sides.
type Exchange struct {
	Kind  ExchangeKind
	Child Node
	// Keys are the shuffle keys, evaluated against Child's batches (hash
	// only).
	Keys []expr.Expr
	// MaxParallelism is the number of key groups (hash only). Zero means
	// RunConfig.MaxParallelism, or keygroup.DefaultMaxParallelism of the
	// run's parallelism when that is zero too.
	MaxParallelism int
}

// Schema implements Node: an exchange moves rows, it does not change them.
func (e *Exchange) Schema() *arrow.Schema { return e.Child.Schema() }

// Children implements Node.
func (e *Exchange) Children() []Node { return []Node{e.Child} }

// String implements Node.
func (e *Exchange) String() string {
	switch e.Kind {
	case HashExchange:
		keys := make([]string, len(e.Keys))
		for i, k := range e.Keys {
			keys[i] = k.String()
		}
		kg := "default key groups"
		if e.MaxParallelism > 0 {
			kg = fmt.Sprintf("%d key groups", e.MaxParallelism)
		}
		return fmt.Sprintf("Exchange(hash [%s], %s)", strings.Join(keys, ", "), kg)
	default:
		return fmt.Sprintf("Exchange(%s)", e.Kind)
	}
}

// Open implements Node. Exchanges are never opened as operators: the
// scheduler replaces each one by a writer in the stage below and a reader
// in the stage above.
func (e *Exchange) Open(*TaskContext, []Stream) (Stream, error) {
	return nil, fmt.Errorf("%w: an Exchange was opened as an operator; run plans with exec.Run, which cuts them into stages", ErrInternal)
}

// SubpartitionStore holds an exchange's data: for every producer task, a
// list of batches whose rows are sorted by subpartition (a key group for
// hash exchanges, the single subpartition 0 otherwise). Keeping a split
// batch whole, rather than one slice per key group, means a consumer reads
// one contiguous slice per batch for its whole key-group range.
//
// Today's store keeps batches in memory and is read only after every
// producer finished (blocking shuffle). The interface is what a hybrid
// shuffle (readers following live producers) or a store spilling to Arrow
// IPC files (one record per batch, the bounds beside it) implements.
type SubpartitionStore interface {
	// Write appends b to producer's output; the store takes ownership of
	// b, subs and ends. subs lists, ascending, the subpartitions with rows
	// in b; rows [ends[i-1], ends[i]) belong to subs[i] (from 0 for i = 0).
	// Each producer writes from one goroutine; different producers write
	// concurrently.
	Write(producer int, b arrow.RecordBatch, subs, ends []int32) error
	// FinishProducer says producer wrote everything.
	FinishProducer(producer int)
	// Open reads subpartitions start..end (inclusive) of every producer,
	// producer by producer, batch by batch. Every reader gets its own
	// reference to each batch, so several consumers may read the same data.
	Open(start, end int) SubpartitionReader
	// OpenSlices reads the given slices in order: for each, its key groups
	// of its producers, batch by batch, keeping only the slice's share of
	// batches when it is one part of a split key group.
	OpenSlices(slices []KeyGroupSlice) SubpartitionReader
	// BatchesWith counts the stored batches holding rows of subpartition
	// sub (how finely that subpartition can be split by batches).
	BatchesWith(sub int) int
	// Release drops every batch. Readers must be closed first.
	Release()
}

// SubpartitionReader yields the batches of a range of subpartitions; the
// caller owns (and releases) each batch. Next returns io.EOF at the end.
type SubpartitionReader interface {
	Next(ctx context.Context) (arrow.RecordBatch, error)
	Close()
}

// storedBatch is one batch sorted by subpartition, with its bounds.
type storedBatch struct {
	b          arrow.RecordBatch
	subs, ends []int32
}

// rows is the row range of subpartitions start..end in the batch.
func (sb *storedBatch) rows(start, end int) (from, to int64) {
	i0 := sort.Search(len(sb.subs), func(i int) bool { return int(sb.subs[i]) >= start })
	i1 := sort.Search(len(sb.subs), func(i int) bool { return int(sb.subs[i]) > end })
	if i0 >= i1 {
		return 0, 0
	}
	if i0 > 0 {
		from = int64(sb.ends[i0-1])
	}
	return from, int64(sb.ends[i1-1])
}

// memStore is the in-memory SubpartitionStore.
type memStore struct {
	mu       sync.Mutex
	batches  [][]storedBatch // [producer]
	released bool
}

func newMemStore(producers int) *memStore {
	return &memStore{batches: make([][]storedBatch, producers)}
}

func (s *memStore) Write(producer int, b arrow.RecordBatch, subs, ends []int32) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.released {
		b.Release()
		return fmt.Errorf("%w: write to a released exchange", ErrInternal)
	}
	s.batches[producer] = append(s.batches[producer], storedBatch{b: b, subs: subs, ends: ends})
	return nil
}

func (s *memStore) FinishProducer(int) {}

func (s *memStore) Open(start, end int) SubpartitionReader {
	return s.OpenSlices([]KeyGroupSlice{wholeRange(start, end)})
}

func (s *memStore) OpenSlices(slices []KeyGroupSlice) SubpartitionReader {
	r := &memReader{s: s, slices: slices}
	r.begin()
	return r
}

func (s *memStore) BatchesWith(sub int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, bs := range s.batches {
		for i := range bs {
			if from, to := bs[i].rows(sub, sub); from < to {
				n++
			}
		}
	}
	return n
}

func (s *memStore) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.released {
		return
	}
	s.released = true
	for _, bs := range s.batches {
		for _, sb := range bs {
			sb.b.Release()
		}
	}
	s.batches = nil
}

// memReader walks its slices in order and, within each, producer by
// producer, batch by batch, handing out the part of each batch that holds
// the slice's subpartitions.
type memReader struct {
	s             *memStore
	slices        []KeyGroupSlice
	cur           int // slice being read
	producer, idx int
	seen          int // batches with rows of the current slice so far
	closed        bool
}

// begin positions the reader at the first producer of the current slice.
func (r *memReader) begin() {
	r.idx, r.seen, r.producer = 0, 0, 0
	if r.cur < len(r.slices) && r.slices[r.cur].Producer >= 0 {
		r.producer = r.slices[r.cur].Producer
	}
}

func (r *memReader) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	if r.closed || r.s.released {
		return nil, io.EOF
	}
	for r.cur < len(r.slices) {
		sl := r.slices[r.cur]
		if r.producer >= len(r.s.batches) || (sl.Producer >= 0 && r.producer != sl.Producer) {
			r.cur++
			r.begin()
			continue
		}
		bs := r.s.batches[r.producer]
		if r.idx >= len(bs) {
			r.producer++
			r.idx = 0
			continue
		}
		sb := &bs[r.idx]
		r.idx++
		from, to := sb.rows(sl.Start, sl.End)
		if from == to {
			continue
		}
		if sl.Parts > 1 {
			mine := r.seen%sl.Parts == sl.Part
			r.seen++
			if !mine {
				continue
			}
		}
		if from == 0 && to == sb.b.NumRows() {
			sb.b.Retain()
			return sb.b, nil
		}
		return sb.b.NewSlice(from, to), nil
	}
	return nil, io.EOF
}

func (r *memReader) Close() { r.closed = true }

// ExchangeBuffer is the run-time side of one Exchange: its store, its
// resolved key-group count, the memory it holds and what every producer
// wrote to every subpartition (the adaptive scheduler sizes consumer
// stages from these counters).
type ExchangeBuffer struct {
	Exchange *Exchange
	// Subpartitions is the number of key groups of a hash exchange, else 1.
	Subpartitions int
	// Producers is the producer stage's task count.
	Producers int

	store  SubpartitionStore
	budget *MemoryBudget
	held   atomic.Int64 // bytes reserved in budget
	rows   [][]int64    // [producer][sub], each row written by its producer only
	bytes  [][]int64
	// consumers is the number of stages still to read the buffer; the last
	// one to finish releases it.
	consumers atomic.Int32
	release   sync.Once
	// forward says the exchange was switched to a pointwise edge at run
	// time (the broadcast switch): rows are not split by key group and
	// consumer task i reads producer i's output.
	forward bool

	mu sync.Mutex
	// slices is what each task of a consumer stage reads, by stage ID and
	// task; a stage without an entry reads Flink's count-based range.
	slices map[int][][]KeyGroupSlice
}

// setSlices fixes what the tasks of consumer stage reads (before they start).
func (b *ExchangeBuffer) setSlices(stage int, perTask [][]KeyGroupSlice) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.slices == nil {
		b.slices = map[int][][]KeyGroupSlice{}
	}
	b.slices[stage] = perTask
}

// Slices is what task of consumer stage reads, or nil when it reads a
// count-based range (or the whole exchange if not hashed).
func (b *ExchangeBuffer) Slices(stage, task int) []KeyGroupSlice {
	b.mu.Lock()
	defer b.mu.Unlock()
	if per, ok := b.slices[stage]; ok && task < len(per) {
		if per[task] == nil {
			return []KeyGroupSlice{} // the task reads nothing of this input
		}
		return per[task]
	}
	return nil
}

// Forward reports whether the run-time broadcast switch turned this hash
// exchange into a pointwise edge (no key-group split).
func (b *ExchangeBuffer) Forward() bool { return b.forward }

// batchesWith counts stored batches holding rows of key group sub.
func (b *ExchangeBuffer) batchesWith(sub int) int { return b.store.BatchesWith(sub) }

func newExchangeBuffer(ex *Exchange, subs, producers int, budget *MemoryBudget) *ExchangeBuffer {
	b := &ExchangeBuffer{
		Exchange: ex, Subpartitions: subs, Producers: producers,
		store: newMemStore(producers), budget: budget,
		rows: make([][]int64, producers), bytes: make([][]int64, producers),
	}
	for p := 0; p < producers; p++ {
		b.rows[p] = make([]int64, subs)
		b.bytes[p] = make([]int64, subs)
	}
	return b
}

// write stores rb for producer, charging its bytes to the budget. counts
// holds the rows of each subpartition listed in subs (ends as in
// SubpartitionStore.Write); the bytes are spread over them by row count for
// the per-subpartition counters.
func (b *ExchangeBuffer) write(producer int, rb arrow.RecordBatch, subs, ends []int32) error {
	n := batchBytes(rb)
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
func (b *ExchangeBuffer) Release() {
	b.release.Do(func() {
		b.store.Release()
		b.budget.Release(b.held.Swap(0))
	})
}

// Rows is the number of rows producer wrote to subpartition sub.
func (b *ExchangeBuffer) Rows(producer, sub int) int64 { return b.rows[producer][sub] }

// Bytes is the number of bytes producer wrote to subpartition sub.
func (b *ExchangeBuffer) Bytes(producer, sub int) int64 { return b.bytes[producer][sub] }

// SubpartitionBytes sums Bytes over producers, one entry per subpartition.
func (b *ExchangeBuffer) SubpartitionBytes() []int64 {
	out := make([]int64, b.Subpartitions)
	for p := range b.bytes {
		for s, n := range b.bytes[p] {
			out[s] += n
		}
	}
	return out
}

// TotalRows is the number of rows written by all producers.
func (b *ExchangeBuffer) TotalRows() int64 {
	var n int64
	for p := range b.rows {
		for _, r := range b.rows[p] {
			n += r
		}
	}
	return n
}

// TotalBytes is the number of bytes written by all producers.
func (b *ExchangeBuffer) TotalBytes() int64 {
	var n int64
	for _, s := range b.SubpartitionBytes() {
		n += s
	}
	return n
}

// exchangeWriter is the producer side of an exchange in one task.
type exchangeWriter struct {
	buf      *ExchangeBuffer
	producer int
	alloc    memory.Allocator
	ectx     *expr.Context

	hashes []uint32
	kgs    []int32
	counts []int
	starts []int
	idx    []int32
	// glue gathers small input batches into full ones before they are
	// split, so key-group slices are not crumbs of crumbs.
	glue *batchGlue
}

func newExchangeWriter(buf *ExchangeBuffer, producer int, alloc memory.Allocator) *exchangeWriter {
	w := &exchangeWriter{buf: buf, producer: producer, alloc: alloc, ectx: &expr.Context{Alloc: alloc}, glue: newBatchGlue(alloc, BatchSize)}
	if buf.Exchange.Kind == HashExchange && !buf.forward {
		w.counts = make([]int, buf.Subpartitions)
		w.starts = make([]int, buf.Subpartitions)
	}
	return w
}

// Write routes b (owned by the writer from here on) into the buffer; small
// batches wait to be glued to others. Call Flush after the last Write and
// Close on every path.
func (w *exchangeWriter) Write(ctx context.Context, b arrow.RecordBatch) error {
	full, err := w.glue.add(b)
	if full == nil || err != nil {
		return err
	}
	return w.route(ctx, full)
}

// Flush routes the batches still waiting to be glued.
func (w *exchangeWriter) Flush(ctx context.Context) error {
	full, err := w.glue.flush()
	if full == nil || err != nil {
		return err
	}
	return w.route(ctx, full)
}

// Close drops batches still waiting (error and cancel paths).
func (w *exchangeWriter) Close() { w.glue.release() }

// route stores one full batch, which it owns.
func (w *exchangeWriter) route(ctx context.Context, b arrow.RecordBatch) error {
	if w.buf.Exchange.Kind != HashExchange || w.buf.forward {
		return w.buf.write(w.producer, b, []int32{0}, []int32{int32(b.NumRows())})
	}
	return w.writeHash(ctx, b)
}

// writeHash computes each row's key group, reorders the batch by key group
// with one Take, and stores it whole with the row bounds of each key group.
func (w *exchangeWriter) writeHash(ctx context.Context, b arrow.RecordBatch) error {
	defer b.Release()
	n := int(b.NumRows())
	keys := make([]arrow.Array, 0, len(w.buf.Exchange.Keys))
	defer func() {
		for _, k := range keys {
			k.Release()
		}
	}()
	for _, k := range w.buf.Exchange.Keys {
		a, err := k.Eval(w.ectx, b)
		if err != nil {
			return err
		}
		keys = append(keys, a)
	}
	if cap(w.hashes) < n {
		w.hashes = make([]uint32, n)
		w.kgs = make([]int32, n)
		w.idx = make([]int32, n)
	}
	hashes, kgs := w.hashes[:n], w.kgs[:n]
	HashColumns(keys, hashes)
	maxP := w.buf.Subpartitions
	clear(w.counts)
	for i, h := range hashes {
		kg := keygroup.ForHash(h, maxP)
		kgs[i] = int32(kg)
		w.counts[kg]++
	}

	sorted := b
	if c := w.counts[kgs[0]]; c != n {
		// Counting sort of row indexes by key group, then one Take.
		off := 0
		for kg, c := range w.counts {
			w.starts[kg] = off
			off += c
		}
		idx := w.idx[:n]
		for i, kg := range kgs {
			idx[w.starts[kg]] = int32(i)
			w.starts[kg]++
		}
		taken, err := takeBatch(ctx, w.alloc, b, idx)
		if err != nil {
			return err
		}
		sorted = taken
		defer taken.Release()
	}
	var subs, ends []int32
	end := int32(0)
	for kg, c := range w.counts {
		if c > 0 {
			end += int32(c)
			subs = append(subs, int32(kg))
			ends = append(ends, end)
		}
	}
	sorted.Retain() // the buffer's reference; the deferred releases drop ours
	return w.buf.write(w.producer, sorted, subs, ends)
}

// takeBatch gathers rows idx of b into a new batch allocated from alloc.
func takeBatch(ctx context.Context, alloc memory.Allocator, b arrow.RecordBatch, idx []int32) (arrow.RecordBatch, error) {
	ib := array.NewInt32Builder(alloc)
	ib.AppendValues(idx, nil)
	indices := ib.NewArray()
	ib.Release()
	defer indices.Release()
	cctx := compute.WithAllocator(ctx, alloc)
	cols := make([]arrow.Array, 0, b.NumCols())
	for _, c := range b.Columns() {
		// The indexes are a permutation of the batch's rows: no bounds check.
		t, err := compute.TakeArrayOpts(cctx, c, indices, compute.TakeOptions{BoundsCheck: false})
		if err != nil {
			for _, x := range cols {
				x.Release()
			}
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("%w: shuffle take: %v", ErrExecution, err)
		}
		cols = append(cols, t)
	}
	out := array.NewRecordBatch(b.Schema(), cols, int64(len(idx)))
	for _, c := range cols {
		c.Release()
	}
	return out, nil
}

// exchangeSource is the consumer side of an exchange in one task: the
// reader of its key-group range, with small batches coalesced.
type exchangeSource struct {
	r      SubpartitionReader
	closed bool
}

func (s *exchangeSource) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if s.closed {
		return nil, io.EOF
	}
	return s.r.Next(ctx)
}

func (s *exchangeSource) Close() {
	if !s.closed {
		s.closed = true
		s.r.Close()
	}
}

// openExchangeSource opens task's share of buf: its key-group range of a
// hash exchange, everything of a broadcast or gather.
func openExchangeSource(buf *ExchangeBuffer, tc *TaskContext) Stream {
	var r SubpartitionReader
	if sl := buf.Slices(tc.Stage, tc.Task); sl != nil {
		r = buf.store.OpenSlices(sl)
	} else {
		start, end := 0, 0
		if buf.Exchange.Kind == HashExchange && !buf.forward {
			start, end = keygroup.Range(buf.Subpartitions, tc.Parallelism, tc.Task)
		}
		r = buf.store.Open(start, end)
	}
	src := &exchangeSource{r: r}
	return newCoalesceStream(src, tc.Alloc, BatchSize)
}

// batchBytes is the number of bytes in the buffers b references, each
// buffer counted once (arrow/util.TotalRecordSize without its protobuf
// dependency). A slice reports the buffers it shares in full.
func batchBytes(b arrow.RecordBatch) int64 {
	seen := make(map[*memory.Buffer]struct{})
	var n int64
	for _, c := range b.Columns() {
		n += arrayDataBytes(c.Data(), seen)
	}
	return n
}

func arrayDataBytes(d arrow.ArrayData, seen map[*memory.Buffer]struct{}) int64 {
	var n int64
	for _, buf := range d.Buffers() {
		if buf == nil {
			continue
		}
		if _, ok := seen[buf]; ok {
			continue
		}
		seen[buf] = struct{}{}
		n += int64(buf.Len())
	}
	for _, c := range d.Children() {
		n += arrayDataBytes(c, seen)
	}
	// Only dictionary arrays have a dictionary; others return a typed nil.
	if d.DataType().ID() == arrow.DICTIONARY {
		n += arrayDataBytes(d.Dictionary(), seen)
	}
	return n
}
