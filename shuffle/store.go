package shuffle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/shuffle/keygroup"
)

// SubpartitionStore holds an exchange's data: for every producer task, a
// list of batches whose rows are sorted by subpartition (a key group for
// hash exchanges, the single subpartition 0 otherwise). Keeping a split
// batch whole, rather than one slice per key group, means a consumer reads
// one contiguous slice per batch for its whole key-group range.
//
// Each attempt of a producer task writes into its own staging; readers
// see a producer's output only once the runtime committed one attempt of
// it, and every other attempt's staging is discarded. So a task may run
// as several attempts (a retry, a speculative copy) and consumers still
// read each row once.
//
// A reader may be opened before every producer committed (hybrid
// shuffle): it reads producers in index order and, at a producer not yet
// committed, waits until that producer commits (or the store is released,
// or the reader's context ends). Only a commit publishes, so a reader
// never sees a failed, cancelled or losing attempt's rows, and it ends
// once it read every producer's committed output. In blocking shuffle
// every producer committed before a reader opens, so it never waits.
// Reading in producer order keeps the row order of both modes the same.
//
// The store charges the batches it holds in memory to the query's
// budget. With spilling on (spill.go) it also keeps batches on disk:
// those the budget's evictions ask for, and those written when the
// budget has no room left even after every evictor gave back what it
// could; readers read those back per key-group range.
type SubpartitionStore interface {
	// Stage returns the staging attempt of producer writes into. The store
	// takes ownership of each batch written there, and of its subs and
	// ends: subs lists, ascending, the subpartitions with rows in the
	// batch; rows [ends[i-1], ends[i]) belong to subs[i] (from 0 for i =
	// 0). Each staging is written from one goroutine; different ones
	// concurrently. A write reserves the batch's bytes from the budget
	// (and with spilling on writes it to disk when that fails).
	Stage(producer, attempt int) Staging
	// Commit makes attempt's staging producer's output. A producer has at
	// most one committed attempt.
	Commit(producer, attempt int) error
	// Discard drops attempt's staging and its batches.
	Discard(producer, attempt int)
	// Open reads subpartitions start..end (inclusive) of every producer,
	// producer by producer, batch by batch, waiting for producers not yet
	// committed. Every reader gets its own
	// reference to each batch, so several consumers may read the same data.
	Open(start, end int) SubpartitionReader
	// OpenSlices reads the given slices in order: for each, its key groups
	// of its producers, batch by batch, keeping only the slice's share of
	// batches when it is one part of a split key group.
	OpenSlices(slices []keygroup.Slice) SubpartitionReader
	// BatchesWith counts the committed batches holding rows of
	// subpartition sub (how finely that subpartition can be split by
	// batches).
	BatchesWith(sub int) int
	// BatchCounts is BatchesWith of subpartitions 0..subs-1.
	BatchCounts(subs int) []int
	// Release drops every batch, committed or staged, and removes its
	// files. Readers must be closed first.
	Release()
}

// Staging is where one attempt writes its batches.
type Staging interface {
	Write(b arrow.RecordBatch, subs, ends []int32) error
}

// SubpartitionReader yields the batches of a range of subpartitions; the
// caller owns (and releases) each batch. Next returns io.EOF at the end.
type SubpartitionReader interface {
	Next(ctx context.Context) (arrow.RecordBatch, error)
	Close()
}

// storedBatch is one batch sorted by subpartition, with its bounds: in
// memory (b, its bytes held in the budget) or, once spilled, on disk
// (recs in file). Readers find a batch by its position in its producer's
// list, which a spill does not change.
type storedBatch struct {
	b          arrow.RecordBatch // nil once spilled
	subs, ends []int32
	held       int64 // bytes reserved in the budget for b
	file       *diskFile
	recs       []diskRec
	// dropped: no consumer task can need it any more (selective.go).
	dropped bool
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

// attemptKey names one attempt of one producer task.
type attemptKey struct{ producer, attempt int }

// memStore is the SubpartitionStore: batches in memory, and on disk
// once spilled (spill.go).
type memStore struct {
	budget *exec.MemoryBudget
	disk   *diskConfig // nil: spilling off

	mu        sync.Mutex
	batches   [][]*storedBatch // committed, [producer]
	committed []bool
	staged    map[attemptKey]*memStaging
	files     []*diskFile // finished files of committed output and evictions
	released  bool
	// droppedBytes is the memory selective release gave back.
	droppedBytes int64
	// published is closed (and replaced) at every commit and at release:
	// readers waiting for a producer's commit wake on it.
	published chan struct{}
}

func newMemStore(producers int, budget *exec.MemoryBudget) *memStore {
	return &memStore{
		budget:  budget,
		batches: make([][]*storedBatch, producers), committed: make([]bool, producers),
		staged: map[attemptKey]*memStaging{}, published: make(chan struct{}),
	}
}

// publish wakes the readers waiting for a commit; call with s.mu held.
func (s *memStore) publish() {
	close(s.published)
	s.published = make(chan struct{})
}

// memStaging is one attempt's batches, and the file its spilled batches
// go to (finished at commit: nobody reads a staging before).
type memStaging struct {
	s       *memStore
	batches []*storedBatch
	disk    diskFiles
	done    bool  // committed or discarded: later writes are refused
	broken  error // a spill of this staging failed: its batches are incomplete
}

func (st *memStaging) Write(b arrow.RecordBatch, subs, ends []int32) error {
	s := st.s
	n := exec.BatchBytes(b)
	// Reserve first, without s.mu: the budget may ask this store to
	// evict.
	rerr := s.budget.Reserve("shuffle", n)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.released || st.done {
		b.Release()
		if rerr == nil {
			s.budget.Release(n)
		}
		return fmt.Errorf("%w: write to a released exchange or a finished attempt", exec.ErrInternal)
	}
	if st.broken != nil {
		b.Release()
		if rerr == nil {
			s.budget.Release(n)
		}
		return st.broken
	}
	sb := &storedBatch{b: b, subs: subs, ends: ends}
	if rerr == nil {
		sb.held = n
		st.batches = append(st.batches, sb)
		return nil
	}
	if s.disk == nil || !errors.Is(rerr, exec.ErrResourcesExhausted) {
		b.Release()
		return rerr
	}
	// No room even after the evictions: this batch goes to disk.
	if err := st.spill(sb); err != nil {
		b.Release()
		return err
	}
	st.batches = append(st.batches, sb)
	return nil
}

func (s *memStore) Stage(producer, attempt int) Staging {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := attemptKey{producer, attempt}
	st := s.staged[k]
	if st == nil {
		st = &memStaging{s: s}
		s.staged[k] = st
	}
	return st
}

func (s *memStore) Commit(producer, attempt int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.released {
		return fmt.Errorf("%w: commit to a released exchange", exec.ErrInternal)
	}
	if producer < 0 || producer >= len(s.batches) {
		return fmt.Errorf("%w: commit of producer %d of %d", exec.ErrInternal, producer, len(s.batches))
	}
	if s.committed[producer] {
		return fmt.Errorf("%w: producer %d committed twice", exec.ErrInternal, producer)
	}
	k := attemptKey{producer, attempt}
	if st := s.staged[k]; st != nil {
		if st.broken != nil {
			return st.broken
		}
		if err := s.finish(&st.disk); err != nil {
			return err
		}
		s.files = append(s.files, st.disk.files...)
		st.disk.files = nil
		s.batches[producer] = st.batches
		st.batches, st.done = nil, true
		delete(s.staged, k)
	}
	s.committed[producer] = true
	s.publish()
	return nil
}

func (s *memStore) Discard(producer, attempt int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := attemptKey{producer, attempt}
	if st := s.staged[k]; st != nil {
		s.drop(st)
		delete(s.staged, k)
	}
}

// drop releases a staging's batches and files; call with s.mu held.
func (s *memStore) drop(st *memStaging) {
	for _, sb := range st.batches {
		s.releaseBatch(sb)
	}
	st.disk.remove()
	st.batches, st.done = nil, true
}

// releaseBatch drops sb's memory and gives its bytes back.
func (s *memStore) releaseBatch(sb *storedBatch) {
	if sb.b != nil {
		sb.b.Release()
		sb.b = nil
	}
	s.budget.Release(sb.held)
	sb.held = 0
}

func (s *memStore) Open(start, end int) SubpartitionReader {
	return s.OpenSlices([]keygroup.Slice{keygroup.Whole(start, end)})
}

func (s *memStore) OpenSlices(slices []keygroup.Slice) SubpartitionReader {
	r := &memReader{s: s, slices: slices}
	r.begin()
	return r
}

func (s *memStore) BatchesWith(sub int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, bs := range s.batches {
		for _, sb := range bs {
			if from, to := sb.rows(sub, sub); from < to {
				n++
			}
		}
	}
	return n
}

func (s *memStore) BatchCounts(subs int) []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]int, subs)
	for _, bs := range s.batches {
		for _, sb := range bs {
			prev := int32(0)
			for j, sub := range sb.subs {
				if sb.ends[j] > prev && int(sub) < subs {
					out[sub]++
				}
				prev = sb.ends[j]
			}
		}
	}
	return out
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
			s.releaseBatch(sb)
		}
	}
	for _, st := range s.staged {
		s.drop(st)
	}
	for _, f := range s.files {
		f.remove()
	}
	s.batches, s.staged, s.files = nil, nil, nil
	s.publish()
}

// memReader walks its slices in order and, within each, producer by
// producer, batch by batch, handing out the part of each batch that holds
// the slice's subpartitions. A spilled batch's part is read back from its
// file, only the records holding those rows, outside the store's lock.
type memReader struct {
	s             *memStore
	slices        []keygroup.Slice
	cur           int // slice being read
	producer, idx int
	seen          int // batches with rows of the current slice so far
	closed        bool
	// todo is the spilled records still to hand out for the current batch;
	// file the spill file open for reading (the last one read).
	todo []diskRead
	file *openFile
}

// begin positions the reader at the first producer of the current slice.
func (r *memReader) begin() {
	r.idx, r.seen, r.producer = 0, 0, 0
	if r.cur < len(r.slices) && r.slices[r.cur].Producer >= 0 {
		r.producer = r.slices[r.cur].Producer
	}
}

func (r *memReader) Next(ctx context.Context) (arrow.RecordBatch, error) {
	for {
		if len(r.todo) > 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			d := r.todo[0]
			r.todo = r.todo[1:]
			return r.read(d)
		}
		b, wait, err := r.next(ctx)
		if b != nil || err != nil {
			return b, err
		}
		if wait == nil {
			continue // a spilled batch: read its records
		}
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// next returns the next batch held in memory, or io.EOF, or (when the
// producer to read next has not committed yet) the channel its commit
// will close; at a spilled batch it fills r.todo and returns nothing.
func (r *memReader) next(ctx context.Context) (arrow.RecordBatch, <-chan struct{}, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	if r.closed || r.s.released {
		return nil, nil, io.EOF
	}
	for r.cur < len(r.slices) {
		sl := r.slices[r.cur]
		if r.producer >= len(r.s.batches) || (sl.Producer >= 0 && r.producer != sl.Producer) {
			r.cur++
			r.begin()
			continue
		}
		if !r.s.committed[r.producer] {
			return nil, r.s.published, nil
		}
		bs := r.s.batches[r.producer]
		if r.idx >= len(bs) {
			r.producer++
			r.idx = 0
			continue
		}
		sb := bs[r.idx]
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
		if sb.dropped {
			// Only a losing copy of a committed consumer task can still
			// read here (selective.go); it is discarded.
			continue
		}
		if sb.b == nil {
			r.todo = sb.reads(from, to)
			return nil, nil, nil
		}
		if from == 0 && to == sb.b.NumRows() {
			sb.b.Retain()
			return sb.b, nil, nil
		}
		return sb.b.NewSlice(from, to), nil, nil
	}
	return nil, nil, io.EOF
}

func (r *memReader) Close() {
	r.s.mu.Lock()
	r.closed = true
	r.s.mu.Unlock()
	r.todo = nil
	r.file.close()
	r.file = nil
}
