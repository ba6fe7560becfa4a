package exec

import (
	"sync"
	"sync/atomic"
)

// OperatorStats are the counters EXPLAIN ANALYZE prints for one node,
// summed over all tasks that ran it. The scheduler fills Rows, Batches,
// Bytes and Nanos by wrapping every stream it opens; operators add their
// own details (bytes read from files, partitions kept, ...) with Note.
type OperatorStats struct {
	Rows    atomic.Int64 // rows produced
	Batches atomic.Int64 // batches produced
	Bytes   atomic.Int64 // Arrow bytes produced
	Nanos   atomic.Int64 // wall time spent inside Next, children included

	mu    sync.Mutex
	notes map[string]int64
}

// Note adds delta to the named detail counter (e.g. "bytes_read").
func (s *OperatorStats) Note(name string, delta int64) {
	if s == nil {
		return
	}
	s.mu.Lock()
	if s.notes == nil {
		s.notes = map[string]int64{}
	}
	s.notes[name] += delta
	s.mu.Unlock()
}

// Notes returns a copy of the detail counters.
func (s *OperatorStats) Notes() map[string]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int64, len(s.notes))
	for k, v := range s.notes {
		out[k] = v
	}
	return out
}

// QueryStats holds the OperatorStats of every node of one query run.
type QueryStats struct {
	mu  sync.Mutex
	ops map[Node]*OperatorStats
}

// NewQueryStats returns an empty collection.
func NewQueryStats() *QueryStats { return &QueryStats{ops: map[Node]*OperatorStats{}} }

// For returns the stats of node n, creating them on first use. A nil
// QueryStats returns nil, and a nil *OperatorStats ignores Note.
func (q *QueryStats) For(n Node) *OperatorStats {
	if q == nil {
		return nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	s, ok := q.ops[n]
	if !ok {
		s = &OperatorStats{}
		q.ops[n] = s
	}
	return s
}
