package fsql

import (
	"context"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/connectors/hive"
	"github.com/fsql-dev/fsql/connectors/memtable"
	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/runtime"
)

// Engine answers SQL over one data directory. It is safe for concurrent
// use: each Query runs independently.
type Engine struct {
	dir     string
	cfg     Config
	catalog *hive.Catalog
	// mem holds the in-memory tables (CREATE TABLE t (...),
	// RegisterTable); every catalog view of the engine lists them.
	mem   *memtable.Store
	alloc memory.Allocator
	// workers are the engine's in-process task managers; every query's
	// scheduler places its attempts on their slots. blocklist is the
	// workers blocked for slowness, shared by its queries; faults the
	// injected faults of tests and benchmarks (WithFaults), nil otherwise.
	workers   []runtime.Worker
	blocklist *runtime.Blocklist
	faults    *runtime.Faults
	// catalogs are the catalogs opened for sessions whose catalog
	// settings (csv.*, parquet.*, path-tables.*) differ from the engine's.
	catalogs *catalogSet
	// planHook, when set, replaces every physical plan before it runs or
	// EXPLAIN prints it. Only tests set it (export_test.go), to send every
	// plan through its wire form (package planwire) and run the decoded one.
	planHook func(root exec.Node, cat *hive.Catalog) (exec.Node, error)
}

// Rows streams the result of one query as Arrow record batches.
//
//	rows, err := eng.Query(ctx, "select ...")
//	defer rows.Close()
//	for rows.Next() { use(rows.RecordBatch()) }
//	if err := rows.Err(); err != nil { ... }
type Rows struct {
	schema *arrow.Schema
	next   func(ctx context.Context) (arrow.RecordBatch, error)
	close  func()
	ctx    context.Context
	cur    arrow.RecordBatch
	err    error
	done   bool
	stats  *exec.QueryStats
	// progress snapshots the running query's stages; nil for results
	// computed before Query returned (EXPLAIN).
	progress func() runtime.Progress
	run      *runtime.Execution // nil for EXPLAIN text
	mem      *exec.MemoryBudget // nil for EXPLAIN text
}

// OperatorSpill is what one operator of the plan wrote to spill files,
// summed over its tasks' committed attempts: the figures EXPLAIN ANALYZE
// prints as spilled=, spill_rows=, spill_files= and spill_passes=.
type OperatorSpill struct {
	// Operator is the node's kind as EXPLAIN names it: HashAggregate,
	// Sort, TopN, Window, HashJoin, Exchange, ...
	Operator string
	// Node is the node as EXPLAIN prints it.
	Node                       string
	Bytes, Rows, Files, Passes int64
	// Partitioning is how a hash join's spilling tasks partitioned their
	// rows first, as EXPLAIN ANALYZE's spill_partitioning prints it:
	// "key-group" (by the key groups of the shuffle), "hash" (by a
	// seeded hash), both with task counts when mixed; "" for other
	// operators.
	Partitioning string
}

// SpillStats lists the operators that spilled so far (complete once the
// rows are drained), in plan order.
func (r *Rows) SpillStats() []OperatorSpill {
	if r.run == nil {
		return nil
	}
	g := r.run.Graph().Job
	var out []OperatorSpill
	r.stats.Each(func(id int, op *exec.OperatorStats) {
		sp := &op.Spill
		n := g.Node(id)
		if n == nil || sp.Files.Load() == 0 {
			return
		}
		text := n.String()
		kind, _, _ := strings.Cut(text, "(")
		out = append(out, OperatorSpill{Operator: kind, Node: text, Bytes: sp.Bytes.Load(), Rows: sp.Rows.Load(), Files: sp.Files.Load(), Passes: sp.Passes.Load(), Partitioning: sp.Partitioning()})
	})
	return out
}

// MemoryPeak is the most bytes of the memory budget the query held at
// once so far (execution.memory.query-budget; 0 for EXPLAIN text).
func (r *Rows) MemoryPeak() int64 { return r.mem.Peak() }

// ScanStats sums what a query's scans read and skipped. Partitions count
// the scans of partitioned tables, row groups every scan; kept means read.
type ScanStats struct {
	BytesRead       int64
	PartitionsTotal int64
	PartitionsKept  int64
	RowGroupsTotal  int64
	RowGroupsKept   int64
}

// ScanStats reports what the query's scans read so far (complete once
// the rows are drained): the same counters EXPLAIN ANALYZE prints.
func (r *Rows) ScanStats() ScanStats {
	var st ScanStats
	r.stats.Each(func(_ int, op *exec.OperatorStats) {
		sc := &op.Scan
		if !sc.Active() {
			return
		}
		st.BytesRead += sc.BytesRead.Load()
		if sc.Partitioned() {
			st.PartitionsTotal += sc.PartitionsTotal.Load()
			st.PartitionsKept += sc.PartitionsKept.Load()
		}
		st.RowGroupsTotal += sc.RowGroupsTotal.Load()
		st.RowGroupsKept += sc.RowGroupsKept.Load()
	})
	return st
}

// Progress is how far a running query got, for a progress bar. Stage
// and task counts come from the scheduler: a stage's task count is
// decided when the stage starts, so TasksTotal grows as the query goes.
type Progress struct {
	// StagesTotal is the query's stage count; StagesDone the stages whose
	// every task finished.
	StagesTotal, StagesDone int
	// TasksTotal counts the tasks of the stages started so far; TasksDone
	// those finished.
	TasksTotal, TasksDone int
	// BytesRead is the number of Parquet bytes the scans read so far.
	BytesRead int64
	// Fraction estimates the share of the work done, from 0 to 1: every
	// stage weighs the same, a running stage by its share of finished
	// tasks. It is 1 only when every stage finished.
	Fraction float64
}

// Progress reports how far the query got. It may be called from any
// goroutine while another reads the rows, and after Close. EXPLAIN
// ANALYZE runs its query in its first Next and reports that run; a
// result that was complete when Query returned (EXPLAIN) reports zero
// stages.
func (r *Rows) Progress() Progress {
	p := Progress{BytesRead: r.BytesRead()}
	if r.progress == nil {
		return p
	}
	stages := r.progress().Stages
	p.StagesTotal = len(stages)
	var done float64
	for _, st := range stages {
		p.TasksTotal += st.Tasks
		p.TasksDone += st.TasksDone
		switch {
		case st.Finished:
			p.StagesDone++
			done++
		case st.Started && st.Tasks > 0:
			done += float64(st.TasksDone) / float64(st.Tasks)
		}
	}
	if len(stages) > 0 {
		p.Fraction = done / float64(len(stages))
	}
	return p
}

// BytesRead is the number of Parquet bytes the query's scans read so far.
func (r *Rows) BytesRead() int64 { return r.ScanStats().BytesRead }

// Schema is the schema of every batch.
func (r *Rows) Schema() *arrow.Schema { return r.schema }

// Next advances to the next batch; false at the end or on error (see Err).
func (r *Rows) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if r.done {
		return false
	}
	if err := r.ctx.Err(); err != nil {
		// A cancelled query ends here even if its last batches were
		// already computed: the caller asked it to stop.
		r.done, r.err = true, err
		r.Close()
		return false
	}
	b, err := r.next(r.ctx)
	if err != nil {
		r.done = true
		if err != io.EOF {
			r.err = classify(err)
		}
		r.Close()
		return false
	}
	r.cur = b
	return true
}

// RecordBatch is the current batch, valid until the next call to Next or
// Close. Retain it to keep it longer.
func (r *Rows) RecordBatch() arrow.RecordBatch { return r.cur }

// Err is the error that ended the stream, if any.
func (r *Rows) Err() error { return r.err }

// Close stops the query (if still running) and releases everything it
// holds. It is safe to call more than once.
func (r *Rows) Close() {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	r.done = true
	if r.close != nil {
		r.close()
		r.close = nil
	}
}
