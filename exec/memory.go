package exec

import (
	"errors"
	"sync"
	"sync/atomic"

	"github.com/fsql-dev/fsql/errs"
)

// MemoryBudget is a per-query limit on the memory operators hold in
// buffers (hash tables, sort runs, shuffle partitions).
//
// # How operators share it
//
// The budget is divided by task slot: each running task (attempt) gets a
// quota of Limit/Slots (TaskMemory), since at most Slots tasks run at
// once. Within a task, every operator that can spill takes a
// Reservation; it may grow to its fair share of the task's quota:
//
//	share = (quota - held by sealed and unspillable reservations) / open unsealed spillable reservations
//
// and never past the quota or the budget. A reservation is sealed when
// its operator stops growing (a hash join once its table is built, a
// sort once its input ended): what it holds then stays reserved but no
// longer counts in the others' division, so an operator downstream of a
// small join gets what the join left. Operators of a task grow in
// pipeline order (a join's table is built before its probe side feeds
// the aggregate above it), so sealing hands memory on without anyone
// waiting.
//
// A refused Grow is the signal to spill: the operator writes part of
// what it holds to disk (TaskContext.Spill), shrinks, and asks again;
// with nothing left to spill it streams each batch through disk. No
// operator waits for another, so one operator cannot starve another
// into an error: each is guaranteed its share, and needs no more than a
// batch in flight to make progress. Buffers at rest (the shuffle's
// exchange output) are Evictors: when a reservation would pass the
// budget, the budget first asks them to write data to disk and give the
// memory back.
//
// Without a spill manager (spilling off) reservations are not divided:
// every operator grows until the budget is used up, and the one that
// passes it fails the query with ErrResourcesExhausted, as before
// spilling existed.
type MemoryBudget struct {
	limit int64 // <= 0 means unlimited
	used  atomic.Int64
	peak  atomic.Int64
	slots atomic.Int64

	mu       sync.Mutex
	evictors map[int]Evictor
	nextEv   int
}

// Evictor holds memory at rest that it can write to disk when the budget
// runs out (the shuffle's buffers).
type Evictor interface {
	// Evict writes data to disk until about want bytes are given back to
	// the budget, or it has nothing left to write, and returns the bytes
	// given back. It must not call the budget's Reserve.
	Evict(want int64) int64
}

// NewMemoryBudget returns a budget of limit bytes; limit <= 0 is unlimited.
func NewMemoryBudget(limit int64) *MemoryBudget { return &MemoryBudget{limit: limit} }

// SetSlots tells the budget how many tasks may run at once; each task's
// quota is Limit/slots. The runtime sets it once per run.
func (m *MemoryBudget) SetSlots(n int) {
	if m != nil && n > 0 {
		m.slots.Store(int64(n))
	}
}

// TaskQuota is what one task may hold: Limit/Slots, 0 when unlimited.
// A budget smaller than the slots still divides (a quota of 1 byte): 0
// would mean no division at all.
func (m *MemoryBudget) TaskQuota() int64 {
	if m == nil || m.limit <= 0 {
		return 0
	}
	return max(m.limit/max(m.slots.Load(), 1), 1)
}

// AddEvictor registers e; the returned function unregisters it.
func (m *MemoryBudget) AddEvictor(e Evictor) (remove func()) {
	if m == nil {
		return func() {}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.evictors == nil {
		m.evictors = map[int]Evictor{}
	}
	id := m.nextEv
	m.nextEv++
	m.evictors[id] = e
	return func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		delete(m.evictors, id)
	}
}

// Reserve takes n bytes from the budget for the operator named by who, or
// fails with ErrResourcesExhausted, taking nothing, when that would pass
// the limit even after the evictors gave back what they could. The check
// and the take are one compare-and-swap, so a reserver never fails
// because of another's attempt that failed.
func (m *MemoryBudget) Reserve(who string, n int64) error {
	if m == nil || n <= 0 {
		return nil
	}
	if m.tryReserve(n) {
		return nil
	}
	if m.evict(n) && m.tryReserve(n) {
		return nil
	}
	u := m.used.Load()
	return errs.New(errs.Resources, "%s needs %d more bytes but the query already holds %d of its %d-byte memory budget; raise it with --set execution.memory.query-budget=<bytes>",
		who, n, u, m.limit)
}

func (m *MemoryBudget) tryReserve(n int64) bool {
	for {
		u := m.used.Load()
		if m.limit > 0 && u+n > m.limit {
			return false
		}
		if m.used.CompareAndSwap(u, u+n) {
			m.notePeak(u + n)
			return true
		}
	}
}

// evict asks the evictors for at least n bytes (and a few MiB more, so
// the next reservations do not each trigger a write), reporting whether
// any came back.
func (m *MemoryBudget) evict(n int64) bool {
	m.mu.Lock()
	evs := make([]Evictor, 0, len(m.evictors))
	for _, e := range m.evictors {
		evs = append(evs, e)
	}
	m.mu.Unlock()
	want := n + min(8<<20, max(m.limit/16, 1<<20))
	var got int64
	for _, e := range evs {
		if got >= want {
			break
		}
		got += e.Evict(want - got)
	}
	return got > 0
}

func (m *MemoryBudget) notePeak(u int64) {
	for {
		p := m.peak.Load()
		if u <= p || m.peak.CompareAndSwap(p, u) {
			return
		}
	}
}

// Release gives n bytes back to the budget.
func (m *MemoryBudget) Release(n int64) {
	if m == nil || n <= 0 {
		return
	}
	m.used.Add(-n)
}

// Used is the number of bytes currently reserved.
func (m *MemoryBudget) Used() int64 {
	if m == nil {
		return 0
	}
	return m.used.Load()
}

// Peak is the highest number of bytes ever reserved at once.
func (m *MemoryBudget) Peak() int64 {
	if m == nil {
		return 0
	}
	return m.peak.Load()
}

// Limit is the budget's size in bytes; <= 0 is unlimited.
func (m *MemoryBudget) Limit() int64 {
	if m == nil {
		return 0
	}
	return m.limit
}

// errOverShare is how a spillable reservation says "spill first": the
// task's division refused, though the budget may have room.
var errOverShare = errors.New("over its share")

// errNoShare says the budget is too small to divide at all: the task's
// quota over its operators that hold memory rounds to 0 bytes each,
// whatever anyone holds, so no amount of spilling makes room.
var errNoShare = errors.New("a share of 0 bytes")

// TaskMemory is one task's quota of the budget and the reservations of
// its operators. The runtime makes one per attempt (TaskContext.Pool).
type TaskMemory struct {
	b     *MemoryBudget
	quota int64 // <= 0: no division (unlimited budget)

	mu sync.Mutex
	// held sums every reservation's size; fixed those of sealed and
	// unspillable ones; open counts unsealed spillable ones.
	held, fixed int64
	open        int
	all         map[*Reservation]struct{}
}

// Task returns a new task quota of the budget.
func (m *MemoryBudget) Task() *TaskMemory {
	return &TaskMemory{b: m, quota: m.TaskQuota(), all: map[*Reservation]struct{}{}}
}

// Quota is the task's share of the budget (0: unlimited).
func (t *TaskMemory) Quota() int64 { return t.quota }

// Close frees what reservations still hold (a safety net: operators free
// their own when they close).
func (t *TaskMemory) Close() {
	t.mu.Lock()
	rs := make([]*Reservation, 0, len(t.all))
	for r := range t.all {
		rs = append(rs, r)
	}
	t.mu.Unlock()
	for _, r := range rs {
		r.Free()
	}
}

// Reservation is one operator's claim on its task's memory. It is used
// from the operator's goroutine.
type Reservation struct {
	t         *TaskMemory
	who       string
	spillable bool
	size      int64
	sealed    bool
	freed     bool
}

// NewReservation registers an operator named who. A spillable one is
// held to its fair share (Grow fails with ErrResourcesExhausted past it,
// which tells the operator to spill); an unspillable one grows while the
// budget has room.
func (t *TaskMemory) NewReservation(who string, spillable bool) *Reservation {
	r := &Reservation{t: t, who: who, spillable: spillable && t.quota > 0}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.all[r] = struct{}{}
	if r.spillable {
		t.open++
	}
	return r
}

// Spillable reports whether the reservation is held to a fair share.
func (r *Reservation) Spillable() bool { return r.spillable }

// Size is what the reservation holds.
func (r *Reservation) Size() int64 { return r.size }

// Share is what the reservation may hold now: its fair share of the
// task's quota (unlimited, -1, when not divided).
func (r *Reservation) Share() int64 {
	if !r.spillable {
		return -1
	}
	t := r.t
	t.mu.Lock()
	defer t.mu.Unlock()
	return r.shareLocked()
}

func (r *Reservation) shareLocked() int64 {
	t := r.t
	open := t.open
	fixed := t.fixed
	if r.sealed {
		// Counting r as open again: it is about to grow.
		open++
		fixed -= r.size
	}
	return max(t.quota-fixed, 0) / int64(max(open, 1))
}

// Grow adds n bytes, or fails with ErrResourcesExhausted, adding nothing:
// past its share or the task's quota (a spillable reservation: spill and
// ask again) or past the budget.
func (r *Reservation) Grow(n int64) error {
	if n <= 0 {
		return nil
	}
	if r.freed {
		return errs.New(errs.Internal, "%s grows a freed reservation", r.who)
	}
	t := r.t
	if r.spillable {
		t.mu.Lock()
		if slots := t.b.slots.Load(); t.quota/int64(max(t.open, 1)) == 0 {
			open := t.open
			t.mu.Unlock()
			return errs.New(errs.Resources, "%s: %w of the memory budget: execution.memory.query-budget=%d bytes over %d task slots leaves each task %d bytes, divided among the %d operators of the task that hold memory; raise it with --set execution.memory.query-budget=<bytes>",
				r.who, errNoShare, t.b.limit, max(slots, 1), t.quota, open)
		}
		share := r.shareLocked()
		over := r.size+n > share || t.held+n > t.quota
		held, quota := t.held, t.quota
		t.mu.Unlock()
		if over {
			return errs.New(errs.Resources, "%s: %w (%d of %d bytes held, share %d, task %d of %d)",
				r.who, errOverShare, r.size, n, share, held, quota)
		}
	}
	if err := t.b.Reserve(r.who, n); err != nil {
		return err
	}
	t.mu.Lock()
	if r.sealed {
		r.sealed = false
		t.fixed -= r.size
		t.open++
	}
	r.size += n
	t.held += n
	if !r.spillable {
		t.fixed += n
	}
	t.mu.Unlock()
	return nil
}

// Shrink gives n bytes back (at most what it holds).
func (r *Reservation) Shrink(n int64) {
	n = min(n, r.size)
	if n <= 0 {
		return
	}
	t := r.t
	t.mu.Lock()
	r.size -= n
	t.held -= n
	if !r.spillable || r.sealed {
		t.fixed -= n
	}
	t.mu.Unlock()
	t.b.Release(n)
}

// Resize makes the reservation n bytes: a shrink always succeeds, a
// growth as Grow. What it keeps is never given back first, so no one can
// take it in between.
func (r *Reservation) Resize(n int64) error {
	if n < r.size {
		r.Shrink(r.size - n)
		return nil
	}
	return r.Grow(n - r.size)
}

// Seal says the operator will not grow any more (its table is built, its
// input ended): its bytes stay reserved but leave the others' division.
// A later Grow unseals it.
func (r *Reservation) Seal() {
	if !r.spillable || r.sealed || r.freed {
		return
	}
	t := r.t
	t.mu.Lock()
	r.sealed = true
	t.open--
	t.fixed += r.size
	t.mu.Unlock()
}

// Free gives everything back and leaves the task's division. Idempotent.
func (r *Reservation) Free() {
	if r.freed {
		return
	}
	r.Shrink(r.size)
	t := r.t
	t.mu.Lock()
	if r.spillable && !r.sealed {
		t.open--
	}
	r.freed = true
	delete(t.all, r)
	t.mu.Unlock()
}

// IsNoShare reports whether err says the budget is too small to divide
// among the task's operators (spilling cannot help).
func IsNoShare(err error) bool { return errors.Is(err, errNoShare) }

// IsOverShare reports whether err is a spillable reservation's refusal
// by its share or its task's quota, as opposed to the budget itself
// running out.
func IsOverShare(err error) bool { return errors.Is(err, errOverShare) }

// reservation returns a new reservation for an operator of the task: a
// spillable one when the task can spill.
func (tc *TaskContext) reservation(who string, spillable bool) *Reservation {
	return tc.taskMemory().NewReservation(who, spillable && tc.Spill != nil)
}

// taskMemory is the task's quota, or a quota of the whole budget when the
// task context has none (operators opened outside the runtime, in tests).
func (tc *TaskContext) taskMemory() *TaskMemory {
	if tc.Pool != nil {
		return tc.Pool
	}
	if tc.ownPool == nil {
		tc.ownPool = tc.Memory.Task()
	}
	return tc.ownPool
}
