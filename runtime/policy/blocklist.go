package policy

import (
	"sort"
	"time"
)

// Blocklist is the set of workers that take no new attempt, each until a
// time (Flink's blocklist of slow nodes, "mark blocked": attempts already
// running there go on). It is a value over plain times: the caller says
// what time it is, so it is tested without a clock, and the caller
// synchronizes it. The zero value is an empty blocklist.
type Blocklist struct {
	until map[string]time.Time
}

// Block blocks worker until now+d, or renews its block to that time if it
// is blocked already (a block never shortens). It reports whether the
// worker was blocked already.
func (b *Blocklist) Block(worker string, now time.Time, d time.Duration) (renewed bool) {
	if b.until == nil {
		b.until = map[string]time.Time{}
	}
	renewed = b.Blocked(worker, now)
	if u := now.Add(d); u.After(b.until[worker]) {
		b.until[worker] = u
	}
	return renewed
}

// Blocked reports whether worker is blocked at now.
func (b *Blocklist) Blocked(worker string, now time.Time) bool {
	u, ok := b.until[worker]
	return ok && now.Before(u)
}

// Until is the end of worker's block (zero if it was never blocked).
func (b *Blocklist) Until(worker string) time.Time { return b.until[worker] }

// BlockedAt lists the workers blocked at now, sorted.
func (b *Blocklist) BlockedAt(now time.Time) []string {
	var out []string
	for w := range b.until {
		if b.Blocked(w, now) {
			out = append(out, w)
		}
	}
	sort.Strings(out)
	return out
}

// Usable says which of workers may take new attempts at now: those not
// blocked; or, when every one of them is blocked, all of them (allBlocked
// true), so that scheduling goes on rather than stalls.
func (b *Blocklist) Usable(workers []string, now time.Time) (usable []bool, allBlocked bool) {
	usable = make([]bool, len(workers))
	any := false
	for i, w := range workers {
		usable[i] = !b.Blocked(w, now)
		any = any || usable[i]
	}
	if !any && len(workers) > 0 {
		for i := range usable {
			usable[i] = true
		}
		return usable, true
	}
	return usable, false
}

// Expire forgets the blocks that ended by now.
func (b *Blocklist) Expire(now time.Time) {
	for w := range b.until {
		if !b.Blocked(w, now) {
			delete(b.until, w)
		}
	}
}

// MayBlock reports whether one more worker of a pool of n may be blocked
// when blocked of them are: at most half of the pool is blocked at once.
// The detector's baseline is the median of a stage's finished tasks, so
// most workers cannot be slower than it; when more than half seem to be,
// the whole machine is loaded (or the baseline is off), and blocking them
// would take away capacity the queries need without moving work to a
// faster worker. A pool of one worker never blocks it.
func MayBlock(blocked, n int) bool { return blocked+1 <= n/2 }
