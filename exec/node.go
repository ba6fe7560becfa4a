package exec

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/pruning"
	"github.com/fsql-dev/fsql/spill"
)

// The kinds of package errs under their former names, so code written
// against them keeps building. New code makes errors with errs.New and
// errs.Wrap, which carry MySQL numbers and keep causes.
const (
	// Deprecated: use errs.Semantic (or Syntax, UnknownName, Type).
	ErrPlan = errs.Semantic
	// Deprecated: use errs.Unsupported.
	ErrNotImplemented = errs.Unsupported
	// Deprecated: use errs.Execution.
	ErrExecution = errs.Execution
	// Deprecated: use errs.Internal.
	ErrInternal = errs.Internal
	// Deprecated: use errs.Resources.
	ErrResourcesExhausted = errs.Resources
)

// BatchSize is the number of rows operators aim for in one batch.
const BatchSize = 8192

// Node is one immutable operator of a physical plan. The same Node is opened
// once per task; everything that changes while a task runs lives in the
// Stream that Open returns, never in the Node, so tasks share plans freely.
type Node interface {
	// Schema is the schema of every batch the node's streams return.
	Schema() *arrow.Schema
	// Children are the node's inputs, in the order Open receives them.
	Children() []Node
	// String is the one-line description EXPLAIN prints for the node.
	String() string
	// Open starts the node for one task. inputs are the already opened
	// streams of Children(), in order; the returned stream owns them and
	// closes them when it is closed. Open does no work beyond setting up:
	// the first batch is computed by the first Next.
	Open(tc *TaskContext, inputs []Stream) (Stream, error)
}

// Stream produces the batches of one task of one node.
//
// Next returns the next batch, or (nil, io.EOF) after the last one. The
// caller owns each returned batch and must Release it. Next is called from
// one goroutine at a time. A stream checks ctx and returns ctx.Err() promptly
// once it is cancelled. Close releases everything the stream holds (its
// inputs included); it is idempotent and may be called before io.EOF, which
// is how LIMIT stops its input early.
type Stream interface {
	Next(ctx context.Context) (arrow.RecordBatch, error)
	Close()
}

// TaskContext is what one running task gives to the streams it opens.
//
// Plans hold no runtime objects: the per-run services an operator needs
// (the memory budget, the dynamic-filter coordinator) reach it here, and
// it finds its share of them by the IDs the plan holds (a collector's ID,
// a scan's targets). The runtime creates them once per run, so one plan
// runs any number of times, in this process or, decoded from its wire
// form (package planwire), in another.
type TaskContext struct {
	// Alloc allocates every Arrow buffer of the task. Tests pass a
	// memory.CheckedAllocator to catch leaks.
	Alloc memory.Allocator
	// Memory is the query's budget for join, aggregate, sort and shuffle
	// buffers. It is shared by all tasks of the query.
	Memory *MemoryBudget
	// Pool is this task's quota of Memory, from which its operators take
	// their Reservations (see MemoryBudget). The runtime makes one per
	// attempt; nil gives each operator a quota of the whole budget.
	Pool *TaskMemory
	// Spill is the run's spill manager: operators that outgrow their
	// share of the budget write to its files. Nil turns spilling off, and
	// an operator past the budget fails the query.
	Spill *spill.Manager
	// Stage and Task identify the task; Parallelism is its stage's number
	// of tasks. A scan uses them to pick its share of the splits. Attempt
	// numbers the runs of one task (0 first): a task may run as several
	// attempts, of which the runtime commits one, so an effect outside the
	// task's output (a dynamic filter collector's keys) is staged per
	// attempt and counts only once the runtime commits it.
	Stage, Task, Parallelism, Attempt int
	// DynamicFilters is the run's dynamic-filter coordinator: collectors
	// hand it their keys under their ID, dynamically pruned scans ask it
	// for their decision. Nil when the runtime gives none, which fails
	// only plans that hold dynamic filters.
	DynamicFilters *pruning.Coordinator
	// Op collects the counters of the node being opened, for EXPLAIN
	// ANALYZE: the runtime gives each node of the task its own; nil when
	// the run collects none.
	Op *OperatorStats
	// InputRead, when set, is told how many bytes of its input the task
	// consumed, as it consumes them (see ReportInput); the slow-task
	// detector weighs them against the task's planned input bytes.
	InputRead func(bytes int64)
	// KeyGroups, while the runtime opens a node every input of which is
	// a hash exchange this task reads as the same whole key groups, says
	// which (key_groups.go); nil for every other node. A hash join that
	// spills partitions by it first.
	KeyGroups *KeyGroups
	// SharedBuild, while the runtime opens a join whose build side every
	// task of the stage reads whole (BuildSharer over a broadcast input),
	// is the stage run's one build of its table; nil for every other
	// node.
	SharedBuild *SharedBuild
	// InputRows, while the runtime opens a node, holds for each of its
	// inputs the rows this task reads of it when the input is an exchange
	// (committed before the task starts), -1 for any other input; nil
	// when no input is an exchange. A hint: a final aggregate sizes its
	// table by it.
	InputRows []int64

	ownPool *TaskMemory // Pool's stand-in when the runtime gave none
}
