package exec

import (
	"context"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
)

// SharedBuild lets the tasks of one stage share the hash table of a join
// whose build side every task reads whole (a broadcast input), instead of
// each task building the same table: the first attempt that needs it
// builds it, the others wait and leave their copy of the build input
// unread. The runtime makes one per such join and stage run, hands it to
// the join's tasks (TaskContext.SharedBuild, set while that join opens)
// and closes it when the stage run ends; an attempt still probing holds a
// reference of its own, so the table goes after the last one.
//
// The table is charged to the query's budget once and outside any task's
// quota, since it outlives the attempt that built it: the builder hands
// its reservation's bytes over (the budget's total does not change, so
// the hand-over cannot be refused). A build that outgrows its task's
// share spills as it would alone, partitioned by the seeded hash of
// level 0, and is shared spilled (shared_build_spill.go): the partitions
// left in memory as the shared table, those on disk as read-only files
// every task joins against its own probe rows of them, so the build side
// is read, partitioned and written once per stage, not once per task.
// If the building attempt fails or is cancelled, the next attempt that
// needs the table builds it; a speculative or retried attempt finds it
// built.
type SharedBuild struct {
	who    string
	budget *MemoryBudget

	mu     sync.Mutex
	state  sharedState
	done   chan struct{} // closed when a build ends (built, refused or given up)
	side   *builtSide
	refs   int // the stage run's (until Close) and one per attempt using side
	builds int
}

type sharedState uint8

const (
	sharedIdle     sharedState = iota // nobody builds; the next attempt does
	sharedBuilding                    // an attempt builds; the others wait
	sharedReady                       // side is built
	sharedRefused                     // every attempt builds its own
	sharedClosed                      // the stage ended
)

// builtSide is an indexed build side, read-only once built.
type builtSide struct {
	cols    []arrow.Array
	nb      int
	next    []int32
	ihead   *intTable
	table   *joinTable
	unique  bool // no two rows share a key (hashJoinStream.unique)
	nullKey bool
	rows    int64 // build rows read (joinFacts.rows)
	bytes   int64 // charged to the budget
	// spilled, when set, are the partitions of the build side that went
	// to disk; the table above then holds only the others.
	spilled *spilledSide
}

// NewSharedBuild returns the shared build of one join in one stage run;
// who names it in budget errors.
func NewSharedBuild(budget *MemoryBudget, who string) *SharedBuild {
	return &SharedBuild{who: who, budget: budget, refs: 1}
}

// Builds is how many attempts built the table (1 when shared).
func (b *SharedBuild) Builds() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.builds
}

// acquire returns the built side, taking a reference the caller gives
// back with release; or build = true: the caller builds it and ends with
// publish, refuse or giveUp; or neither: the caller builds its own. It
// waits while another attempt builds, until ctx ends.
func (b *SharedBuild) acquire(ctx context.Context) (side *builtSide, build bool, err error) {
	for {
		b.mu.Lock()
		switch b.state {
		case sharedIdle:
			b.state = sharedBuilding
			b.done = make(chan struct{})
			b.builds++
			b.mu.Unlock()
			return nil, true, nil
		case sharedReady:
			b.refs++
			b.mu.Unlock()
			return b.side, false, nil
		case sharedRefused, sharedClosed:
			b.mu.Unlock()
			return nil, false, nil
		}
		done := b.done
		b.mu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
			return nil, false, context.Cause(ctx)
		}
	}
}

// publish hands over the side the caller built: the bytes res holds
// (side.bytes) become the stage's, charged to the budget until the side
// is freed, and res gives them up without releasing them, so no other
// reservation can take them in between. ok says the caller now holds a
// reference to the shared side; it is false only when the stage ended
// during the build: the caller keeps its table and what it spilled.
func (b *SharedBuild) publish(side *builtSide, res *Reservation) (ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	defer close(b.done)
	if b.state != sharedBuilding {
		return false
	}
	side.bytes = res.handOver()
	b.state, b.side = sharedReady, side
	b.refs++
	return true
}

// refuse ends a build that is not to be shared (it spilled by its own
// task's key groups): every attempt builds its own.
func (b *SharedBuild) refuse() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state == sharedBuilding {
		b.state = sharedRefused
	}
	close(b.done)
}

// giveUp ends a build that failed or was cancelled: the next attempt
// that needs the table builds it.
func (b *SharedBuild) giveUp() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state == sharedBuilding {
		b.state = sharedIdle
	}
	close(b.done)
}

// release gives back a reference acquire or publish took.
func (b *SharedBuild) release() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refs--
	b.freeLocked()
}

// Close ends the stage run's reference: the table is freed once no
// attempt uses it. The runtime calls it when the stage run ends, however
// it ends.
func (b *SharedBuild) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state == sharedClosed {
		return
	}
	if b.state != sharedReady {
		b.state = sharedClosed
		return
	}
	b.refs--
	b.freeLocked()
}

func (b *SharedBuild) freeLocked() {
	if b.refs > 0 || b.side == nil {
		return
	}
	s := b.side
	b.side = nil
	b.state = sharedClosed
	releaseArrays(s.cols)
	if s.table != nil {
		s.table.release()
	}
	s.spilled.remove()
	b.budget.Release(s.bytes)
}

// handOver gives up what r holds without giving it back to the budget,
// and returns it: the caller (a shared build) now owns those bytes of the
// budget and releases them itself.
func (r *Reservation) handOver() int64 {
	t := r.t
	t.mu.Lock()
	defer t.mu.Unlock()
	n := r.size
	r.size = 0
	t.held -= n
	if !r.spillable || r.sealed {
		t.fixed -= n
	}
	return n
}
