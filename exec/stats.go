package exec

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// OperatorStats are the counters EXPLAIN ANALYZE prints for one node,
// summed over all tasks that ran it. The runtime fills Rows, Batches,
// Bytes and Nanos by wrapping every stream it opens; a scan fills Scan.
// Every counter is a typed field: EXPLAIN ANALYZE, the pruning ledger and
// the embedding API's scan statistics read the same values.
type OperatorStats struct {
	Rows    atomic.Int64 // rows produced
	Batches atomic.Int64 // batches produced
	Bytes   atomic.Int64 // Arrow bytes produced
	Nanos   atomic.Int64 // wall time spent inside Next, children included

	// Scan holds a scan's counters; Scan.Active says the node is one.
	Scan ScanStats
	// Spill is what the operator wrote to disk past its memory share.
	Spill SpillStats
	// Agg holds a hash aggregate's counters.
	Agg AggStats
	// Reserved is the most memory one task of the operator held reserved
	// at once (a hash join's build rows and table): what a budget must
	// give it to run without spilling.
	Reserved atomic.Int64
	// SharedBuilt and SharedBorrowed count, for a join whose table the
	// stage's tasks share (shared_build.go), the tasks that built it for
	// the others and the tasks that used it without building.
	SharedBuilt, SharedBorrowed atomic.Int64
}

// NoteReserved raises Reserved to n.
func (o *OperatorStats) NoteReserved(n int64) {
	for {
		p := o.Reserved.Load()
		if n <= p || o.Reserved.CompareAndSwap(p, n) {
			return
		}
	}
}

// AggStats are a hash aggregate's counters.
type AggStats struct {
	// PassTasks is how many partial tasks stopped grouping after their
	// sample (hash_aggregate_pass.go); PassRows the rows they passed on
	// as groups of one row.
	PassTasks, PassRows atomic.Int64
}

// SpillStats are what an operator spilled, summed over its tasks.
type SpillStats struct {
	// Bytes written to spill files (on disk, compressed), the rows and
	// the files.
	Bytes, Rows, Files atomic.Int64
	// Passes is the most passes one task made over spilled data: 1 when
	// each spilled row was written and read back once, more when spilled
	// partitions were partitioned again or sort runs merged in rounds.
	Passes atomic.Int64
	// KeyGroupTasks and HashTasks count a hash join's tasks that spilled
	// by how they partitioned first: by the key groups their inputs were
	// shuffled by, or by the seeded hash (one key group, a broadcast or
	// forward input, a key group split for skew).
	KeyGroupTasks, HashTasks atomic.Int64
}

// NotePasses raises Passes to n.
func (s *SpillStats) NotePasses(n int64) {
	for {
		p := s.Passes.Load()
		if n <= p || s.Passes.CompareAndSwap(p, n) {
			return
		}
	}
}

// ScanStats are what a scan read and skipped, summed over its tasks.
type ScanStats struct {
	// active is set by the scan's first task (the node is a scan);
	// partitioned and dynamic say whether its table has partition columns
	// and whether it has a dynamic pruner.
	active, partitioned, dynamic atomic.Bool

	BytesRead atomic.Int64 // Parquet bytes read
	// PartitionsTotal is the table's partitions, PartitionsStatic those
	// left by static pruning, PartitionsKept those left after dynamic
	// pruning too (equal to PartitionsStatic without a dynamic pruner).
	PartitionsTotal, PartitionsStatic, PartitionsKept atomic.Int64
	// Files read and files skipped (no row group left).
	Files, FilesPruned atomic.Int64
	// Row groups of the files listed, and those read.
	RowGroupsTotal, RowGroupsKept atomic.Int64
	// Rows decoded, and rows left after the dynamic row filter.
	RowsRead, RowsKept atomic.Int64
	// FilterWaitNanos is the time spent waiting for dynamic filters.
	FilterWaitNanos atomic.Int64

	mu     sync.Mutex
	ledger []CollectorLedger
}

// CollectorLedger is what one dynamic filter held when a scan asked for
// it: its distinct keys while exact, the bytes of its bloom filter once it
// degraded.
type CollectorLedger struct {
	Collector int // collector ID
	Key       int // key column of the collector (0 for single-key ones)
	Exact     bool
	Keys      int64 // distinct keys, when Exact
	Bloom     int64 // bloom filter bytes, when not Exact
}

// Start marks the stats as a scan's, once per scan (the first task's
// call counts): whether its table is partitioned and whether it is
// dynamically pruned.
func (s *ScanStats) Start(partitioned, dynamic bool) {
	if s.active.CompareAndSwap(false, true) {
		s.partitioned.Store(partitioned)
		s.dynamic.Store(dynamic)
	}
}

// Active reports whether the node is a scan that ran.
func (s *ScanStats) Active() bool { return s.active.Load() }

// Partitioned reports whether the scanned table has partition columns.
func (s *ScanStats) Partitioned() bool { return s.partitioned.Load() }

// Dynamic reports whether the scan was dynamically pruned.
func (s *ScanStats) Dynamic() bool { return s.dynamic.Load() }

// FilterWait is the time spent waiting for dynamic filters.
func (s *ScanStats) FilterWait() time.Duration { return time.Duration(s.FilterWaitNanos.Load()) }

// SetLedger records the dynamic filters' ledger (once per scan).
func (s *ScanStats) SetLedger(l []CollectorLedger) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ledger == nil {
		s.ledger = append([]CollectorLedger{}, l...)
		sort.Slice(s.ledger, func(a, b int) bool {
			if s.ledger[a].Collector != s.ledger[b].Collector {
				return s.ledger[a].Collector < s.ledger[b].Collector
			}
			return s.ledger[a].Key < s.ledger[b].Key
		})
	}
}

// Ledger returns a copy of the dynamic filters' ledger, by collector and
// key.
func (s *ScanStats) Ledger() []CollectorLedger {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]CollectorLedger(nil), s.ledger...)
}

// QueryStats holds the OperatorStats of every node of one query run, by
// the node's ID in the run's job graph (stable for the plan, so a worker
// in another process can report counters by ID).
type QueryStats struct {
	mu  sync.Mutex
	ops map[int]*OperatorStats
}

// NewQueryStats returns an empty collection.
func NewQueryStats() *QueryStats { return &QueryStats{ops: map[int]*OperatorStats{}} }

// For returns the stats of node id, creating them on first use. A nil
// QueryStats returns nil.
func (q *QueryStats) For(id int) *OperatorStats {
	if q == nil {
		return nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	s, ok := q.ops[id]
	if !ok {
		s = &OperatorStats{}
		q.ops[id] = s
	}
	return s
}

// Each calls f with every node's stats, by ascending ID.
func (q *QueryStats) Each(f func(id int, s *OperatorStats)) {
	if q == nil {
		return
	}
	q.mu.Lock()
	ids := make([]int, 0, len(q.ops))
	for id := range q.ops {
		ids = append(ids, id)
	}
	q.mu.Unlock()
	sort.Ints(ids)
	for _, id := range ids {
		f(id, q.For(id))
	}
}

// Add adds every counter of o into q, node by node. The runtime collects
// each attempt's counters apart and adds those of the attempt it commits,
// so a task run as several attempts (a retry, a speculative copy) counts
// once, as its committed output does.
func (q *QueryStats) Add(o *QueryStats) {
	if q == nil || o == nil {
		return
	}
	o.Each(func(id int, src *OperatorStats) { q.For(id).add(src) })
}

func (s *OperatorStats) add(o *OperatorStats) {
	s.Rows.Add(o.Rows.Load())
	s.Batches.Add(o.Batches.Load())
	s.Bytes.Add(o.Bytes.Load())
	s.Nanos.Add(o.Nanos.Load())
	s.Scan.add(&o.Scan)
	s.Spill.add(&o.Spill)
	s.Agg.PassTasks.Add(o.Agg.PassTasks.Load())
	s.Agg.PassRows.Add(o.Agg.PassRows.Load())
	s.NoteReserved(o.Reserved.Load())
	s.SharedBuilt.Add(o.SharedBuilt.Load())
	s.SharedBorrowed.Add(o.SharedBorrowed.Load())
}

func (s *SpillStats) add(o *SpillStats) {
	s.Bytes.Add(o.Bytes.Load())
	s.Rows.Add(o.Rows.Load())
	s.Files.Add(o.Files.Load())
	s.NotePasses(o.Passes.Load())
	s.KeyGroupTasks.Add(o.KeyGroupTasks.Load())
	s.HashTasks.Add(o.HashTasks.Load())
}

// Partitioning is how a hash join's spilling tasks partitioned first, as
// EXPLAIN ANALYZE prints it: "key-group", "hash", both with the number
// of tasks when they differ, or "" for an operator that is no hash join.
func (s *SpillStats) Partitioning() string {
	kg, h := s.KeyGroupTasks.Load(), s.HashTasks.Load()
	switch {
	case kg > 0 && h > 0:
		return fmt.Sprintf("key-group:%d,hash:%d", kg, h)
	case kg > 0:
		return "key-group"
	case h > 0:
		return "hash"
	}
	return ""
}

func (s *ScanStats) add(o *ScanStats) {
	if o.Active() { // only the scan's first task marks it
		s.Start(o.Partitioned(), o.Dynamic())
	}
	for _, c := range []struct{ dst, src *atomic.Int64 }{
		{&s.BytesRead, &o.BytesRead}, {&s.PartitionsTotal, &o.PartitionsTotal},
		{&s.PartitionsStatic, &o.PartitionsStatic}, {&s.PartitionsKept, &o.PartitionsKept},
		{&s.Files, &o.Files}, {&s.FilesPruned, &o.FilesPruned},
		{&s.RowGroupsTotal, &o.RowGroupsTotal}, {&s.RowGroupsKept, &o.RowGroupsKept},
		{&s.RowsRead, &o.RowsRead}, {&s.RowsKept, &o.RowsKept},
		{&s.FilterWaitNanos, &o.FilterWaitNanos},
	} {
		c.dst.Add(c.src.Load())
	}
	if l := o.Ledger(); l != nil {
		s.SetLedger(l)
	}
}
