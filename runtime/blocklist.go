package runtime

import (
	"sync"
	"time"

	"github.com/fsql-dev/fsql/runtime/policy"
)

// Blocklist is what the runs of one engine know of its workers' health
// (RunConfig.Blocklist): the workers blocked for slowness, and the pace
// of each worker's recent attempts (policy.PaceOf), which the detector
// reads to tell a slow worker from an attempt of costly data. A machine
// that runs hot stays hot from one query to the next, and queries of
// seconds cannot each afford to rediscover it. It is policy.Blocklist
// behind a mutex, with why each worker was blocked.
type Blocklist struct {
	mu    sync.Mutex
	l     policy.Blocklist
	why   map[string]string
	paces map[string][]paceSample // per worker, oldest first, at most policy.PaceWindow
}

// paceSample is one finished attempt's pace and when it was taken.
type paceSample struct {
	at   time.Time
	pace float64
}

// NewBlocklist returns an empty blocklist.
func NewBlocklist() *Blocklist {
	return &Blocklist{why: map[string]string{}, paces: map[string][]paceSample{}}
}

// recordPace adds a pace sample of worker taken at now.
func (b *Blocklist) recordPace(worker string, now time.Time, pace float64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	ps := append(b.paces[worker], paceSample{at: now, pace: pace})
	if len(ps) > policy.PaceWindow {
		ps = ps[len(ps)-policy.PaceWindow:]
	}
	b.paces[worker] = ps
}

// pace is worker's pace at now (policy.WorkerPace of its samples younger
// than policy.PaceHorizon; 0 when none).
func (b *Blocklist) pace(worker string, now time.Time) float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	var recent []float64
	for _, p := range b.paces[worker] {
		if now.Sub(p.at) < policy.PaceHorizon {
			recent = append(recent, p.pace)
		}
	}
	return policy.WorkerPace(recent)
}

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
