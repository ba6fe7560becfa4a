package runtime

import (
	"sync"
	"time"

	"github.com/fsql-dev/fsql/runtime/policy"
)

// Blocklist is the workers blocked for slowness, shared by every run of
// one engine (RunConfig.Blocklist): a machine that runs hot stays hot
// from one query to the next, and queries of seconds cannot each afford
// to rediscover it. It is policy.Blocklist behind a mutex, with why each
// worker was blocked.
type Blocklist struct {
	mu  sync.Mutex
	l   policy.Blocklist
	why map[string]string
}

// NewBlocklist returns an empty blocklist.
func NewBlocklist() *Blocklist { return &Blocklist{why: map[string]string{}} }

// block blocks worker for d from now, or renews its block; why is kept
// from the first block of a spell.
func (b *Blocklist) block(worker string, now time.Time, d time.Duration, why string) (renewed bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.l.Expire(now)
	renewed = b.l.Block(worker, now, d)
	if !renewed {
		b.why[worker] = why
	}
	return renewed
}

// blockInPool is block for a worker of the pool ids, which blocks a
// worker not blocked yet only while policy.MayBlock allows one more of
// the pool; ok is false when it did not.
func (b *Blocklist) blockInPool(worker string, ids []string, now time.Time, d time.Duration, why string) (ok bool) {
	b.mu.Lock()
	if !b.l.Blocked(worker, now) {
		n := 0
		for _, id := range ids {
			if b.l.Blocked(id, now) {
				n++
			}
		}
		if !policy.MayBlock(n, len(ids)) {
			b.mu.Unlock()
			return false
		}
	}
	b.mu.Unlock()
	b.block(worker, now, d, why)
	return true
}

// usable says which of the workers take new attempts at now (all of them
// when every one is blocked).
func (b *Blocklist) usable(ids []string, now time.Time) ([]bool, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.l.Usable(ids, now)
}

// BlockedWorker is a worker's block as a run saw it.
type BlockedWorker struct {
	Worker string
	// At is when the run blocked it (or found it blocked, Inherited from
	// an earlier query); Until when the block ends, after renewals.
	At, Until time.Time
	Inherited bool
	// Renewals counts the checks of the run that found a slow attempt
	// still running there; Why is what made it slow first.
	Renewals int
	Why      string
}

// blocked lists the workers blocked at now, with their blocks.
func (b *Blocklist) blocked(now time.Time) []BlockedWorker {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []BlockedWorker
	for _, w := range b.l.BlockedAt(now) {
		out = append(out, BlockedWorker{Worker: w, At: now, Until: b.l.Until(w), Inherited: true, Why: b.why[w]})
	}
	return out
}

// until is the end of worker's block.
func (b *Blocklist) until(worker string) time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.l.Until(worker)
}
