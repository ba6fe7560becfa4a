package exec

import "context"

// What the runtime needs to know about a node, each node says for itself
// through the small optional interfaces below; the runtime reads them and
// never switches on an operator's concrete type. A node that implements
// none of them is a plain operator: its rows need whole inputs, it may run
// as many tasks, and it orders nothing.

// SingleTasker is implemented by leaves whose rows must not be split
// across tasks (constant relations such as Values): a stage holding one
// whose SingleTask is true runs as one task, or every task would repeat
// its rows.
type SingleTasker interface {
	SingleTask() bool
}

// SizedSource is implemented by leaves whose input size is known only at
// run time (a Scan, after static and, when it has dynamic filters,
// dynamic pruning). When the stage holding the leaf is scheduled (after
// the stages it depends on finished) the runtime asks for the bytes and
// the number of splits with rows left it will read (a scan's files, or
// row-group pieces of them: the most tasks that can share the work), to
// decide the stage's
// parallelism. tc carries the run's services (budget, allocator,
// dynamic-filter coordinator); its Task and Parallelism are not set. An
// error fails the query.
type SizedSource interface {
	SourceSize(ctx context.Context, tc *TaskContext) (bytes int64, splits int, err error)
}

// SplitInputs is implemented by nodes some of whose inputs may be divided
// arbitrarily among tasks, while every other input is read whole by each
// task, without changing the union of the tasks' outputs.
// SplittableInputs has one entry per Children entry. Row-local operators
// (Filter, Project, Expand, a partial HashAggregate) say [true]; a join
// says true for its probe side when each probe row is judged against the
// whole build side (inner, left, semi, anti) and for its build side when
// every pair is made exactly once whichever task makes it (inner only).
//
// The runtime splits a skewed key group of an input, or reads an input
// unshuffled (the run-time broadcast switch), only along a path of
// splittable edges from that input to the stage's root.
type SplitInputs interface {
	SplittableInputs() []bool
}

// Joiner is implemented by joins. BuildInput is the index (in Children)
// of the build side, the side a broadcast join replicates: when both sides
// of a join are splittable (inner joins) it says which one is the
// candidate to broadcast. JoinType names the join for EXPLAIN.
type Joiner interface {
	BuildInput() int
	JoinType() JoinType
}

// BuildSharer is implemented by joins that build a table from their
// BuildInput alone, the same in every task that reads that input whole:
// when the input is a broadcast exchange the runtime may hand the join's
// tasks one SharedBuild (TaskContext.SharedBuild, set while it opens the
// join), so the stage builds the table once. SharesBuild is false when
// each task must keep its own (a right or full join marks its build rows
// matched).
type BuildSharer interface {
	Joiner
	SharesBuild() bool
}

// DynamicFilterProducer is implemented by nodes that collect a dynamic
// filter (DynamicFilterDataCollector): CollectorID names it, so the
// runtime can order its consumers after the stage holding it.
type DynamicFilterProducer interface {
	CollectorID() int
}

// DynamicFilterConsumer is implemented by nodes whose stage must start
// only after the stages of the collectors it names finished
// (OrderEnforce). The runtime adds those ordering edges to the job graph;
// a collector in the consumer's own stage is a plan error.
type DynamicFilterConsumer interface {
	WaitsForCollectors() []int
}

// DynamicFilterReader is implemented by nodes that read the filters of
// the collectors ReadsCollectors names when they run (a dynamically pruned
// Scan). They do not order themselves: the runtime checks their stage runs
// after those collectors' stages and refuses the plan otherwise, rather
// than leaving it to scheduling luck.
type DynamicFilterReader interface {
	ReadsCollectors() []int
}

// AttemptStager is implemented by nodes whose attempts have effects
// outside the stage's output that must count once per task, whichever
// attempt wins: a Sink writes each attempt's files into a staging folder
// of that attempt's own. The scheduler calls CommitAttempt for the attempt
// it admits as the task's (before the task counts as done, so a stage
// finishes only after its tasks' effects are committed) and DiscardAttempt
// for every other attempt once it ended (lost, failed or cancelled),
// both on its own goroutine, never while the attempt runs. A commit error
// fails the query; a discard error too, since it leaves data behind. The
// node's fields say where the effects live, so a node stays plain data
// and the calls need no state of the run.
type AttemptStager interface {
	CommitAttempt(task, attempt int) error
	DiscardAttempt(task, attempt int) error
}
