package runtime

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/runtime/policy"
	"github.com/fsql-dev/fsql/shuffle"
)

// ExecutionGraph is one run of a JobGraph: for every stage a StageRun,
// for every task of it a TaskRun, for every attempt of a task an Attempt
// with its state. The scheduler fills it as the run goes; read it after
// the run (io.EOF or Close).
type ExecutionGraph struct {
	Job *JobGraph
	// Stages are the runs of Job.Stages, in the same order.
	Stages []*StageRun
	// Result is the run of the result stage.
	Result *StageRun
	// Blocked are the workers blocklisted during the run: found blocked
	// at its start (by an earlier query) or blocked by its detector.
	Blocked []BlockedWorker
	// NotBlocked counts the detector's findings of a slow attempt on a
	// worker it did not block, because half the pool was blocked already
	// (policy.MayBlock).
	NotBlocked int
	// Slots is the workers' slots when the run started (EXPLAIN ANALYZE
	// sets the attempts' run time against them: slot occupancy).
	Slots int

	byStage map[*Stage]*StageRun
}

func newExecutionGraph(g *JobGraph) *ExecutionGraph {
	e := &ExecutionGraph{Job: g, byStage: make(map[*Stage]*StageRun, len(g.Stages))}
	for _, st := range g.Stages {
		r := &StageRun{Stage: st}
		e.Stages = append(e.Stages, r)
		e.byStage[st] = r
	}
	e.Result = e.byStage[g.Result]
	return e
}

// Run is the run of stage st.
func (e *ExecutionGraph) Run(st *Stage) *StageRun { return e.byStage[st] }

// StageRun is what one run of a stage decided and did.
type StageRun struct {
	Stage *Stage
	// Parallelism is the stage's task count, decided when it was
	// scheduled; Decision says why. TaskBytes is each task's input bytes
	// when key-group ranges were balanced by bytes (broadcast inputs
	// included); SkewSplits the key groups split across tasks; Switch,
	// when set, describes the run-time broadcast switch of the stage's
	// join. All for EXPLAIN ANALYZE.
	Parallelism int
	Decision    *policy.ParallelismDecision
	TaskBytes   []int64
	SkewSplits  []policy.SkewSplit
	Switch      string
	// CoPartitions describe the stage's planned broadcast joins that ran
	// co-partitioned (co_partition.go), one line each.
	CoPartitions []string
	// Pipelined are the producers that still ran when the stage started
	// (hybrid shuffle): it read their tasks' output as each committed. Nil
	// when it started after all its producers finished.
	Pipelined []*Stage
	// PipelinedEstimates say, for each hash edge among them (adaptive
	// parallelism), how its final bytes were estimated from the part
	// committed when the stage started.
	PipelinedEstimates []string
	// Tasks are the stage's tasks, by index.
	Tasks      []*TaskRun
	Start, End time.Time
	// OutBuffer is the output exchange's buffer (nil for the result
	// stage); after the run its batches are gone but its counters remain.
	OutBuffer *shuffle.Buffer

	rows, bytes int64 // produced by the committed attempts

	// shared are the shared builds of the stage's broadcast joins, by
	// join (sharedBuilds), closed when the run ends.
	shared map[exec.Node]*exec.SharedBuild
	// coPartitioned are the build inputs of its co-partitioned joins.
	coPartitioned map[*shuffle.Exchange]*CoPartitionedBuild

	// Scheduler bookkeeping, touched by its loop only.
	started, finished bool
	committed         int // tasks with a committed attempt
	live              int // attempts placed on a slot and not ended
	open              int // attempts not ended (queued ones included)
	readers           int // consumer stages still to finish reading OutBuffer
}

// Rows is the number of rows the stage's committed attempts produced.
func (r *StageRun) Rows() int64 { return r.rows }

// Bytes is the number of Arrow bytes the stage's committed attempts
// produced.
func (r *StageRun) Bytes() int64 { return r.bytes }

// Duration is the wall time from the stage's start to its end (zero if it
// never ran).
func (r *StageRun) Duration() time.Duration {
	if r.Start.IsZero() || r.End.IsZero() {
		return 0
	}
	return r.End.Sub(r.Start)
}

// TaskRun is one of a stage's Parallelism shares. It runs as one or more
// attempts; the first to finish is committed and the others discarded.
type TaskRun struct {
	Stage *StageRun
	Index int
	// InputBytes is what the task's share of its inputs holds (zero when
	// not known before it ran).
	InputBytes int64
	Attempts   []*Attempt
	// Committed is the attempt whose output consumers read; nil until one
	// finished.
	Committed *Attempt

	failures int // failed attempts, for the restart strategy
}

// AttemptState is where an attempt is in its life:
// Created -> Scheduled -> Running -> Finished | Failed | Cancelled, or
// Created/Scheduled -> Cancelled when it never got to run.
type AttemptState int32

const (
	// Created: waiting for a free slot.
	Created AttemptState = iota
	// Scheduled: placed on a worker slot, not started yet.
	Scheduled
	// Running: its operators are open and producing.
	Running
	// Finished: it read its inputs to the end and wrote its output.
	Finished
	// Failed: it ended with an error of its own.
	Failed
	// Cancelled: it was stopped (the query ended, another attempt of its
	// task won, or a fault was injected).
	Cancelled
)

func (s AttemptState) String() string {
	switch s {
	case Created:
		return "created"
	case Scheduled:
		return "scheduled"
	case Running:
		return "running"
	case Finished:
		return "finished"
	case Failed:
		return "failed"
	case Cancelled:
		return "cancelled"
	}
	return fmt.Sprintf("AttemptState(%d)", int(s))
}

// legal lists the transitions an attempt may make.
var legal = map[AttemptState][]AttemptState{
	Created:   {Scheduled, Cancelled},
	Scheduled: {Running, Failed, Cancelled},
	Running:   {Finished, Failed, Cancelled},
}

// AttemptKind says why an attempt was made.
type AttemptKind int

const (
	// FirstAttempt is the task's first run.
	FirstAttempt AttemptKind = iota
	// RetryAttempt replaces a failed attempt (failover).
	RetryAttempt
	// SpeculativeAttempt is a copy of a slow attempt (speculation).
	SpeculativeAttempt
	// TwinAttempt is a second run a test asked for (AttemptFault.Twin).
	TwinAttempt
)

func (k AttemptKind) String() string {
	switch k {
	case FirstAttempt:
		return "first"
	case RetryAttempt:
		return "retry"
	case SpeculativeAttempt:
		return "speculative"
	case TwinAttempt:
		return "twin"
	}
	return fmt.Sprintf("AttemptKind(%d)", int(k))
}

// Attempt is one run of a task.
type Attempt struct {
	Task   *TaskRun
	Number int
	// Kind says why it was made; Why, for all but a first attempt, says
	// what it replaced or copied and why, as EXPLAIN ANALYZE prints it.
	Kind AttemptKind
	Why  string
	// Slow, when set, is why the slow-task detector judged it slow (its
	// worker was blocklisted then).
	Slow string
	// Worker and Slot are where the scheduler placed it.
	Worker string
	Slot   int
	// Start and End are when it started running and when it ended.
	Start, End time.Time
	// Rows and Bytes it produced; Err why it failed or was cancelled.
	Rows, Bytes int64
	Err         error
	// InputBytes is what it has consumed of its input so far (exchange
	// readers and scans report it as it runs); the slow-task detector
	// weighs it against its task's planned InputBytes.
	InputBytes atomic.Int64
	// started is when the worker began running it (Unix nanoseconds; 0
	// before): the detector measures elapsed time from it.
	started atomic.Int64

	worker int // index of Worker in the scheduler's pool; -1 before placing

	// Loop-owned scheduling facts: when it was placed on a slot, the
	// earliest it may be (a retry's delay), the workers (by index) it
	// should not run on, and its operators' counters, added to the
	// query's when it is committed.
	placed, notBefore time.Time
	avoid             []int
	stats             *exec.QueryStats

	mu     sync.Mutex
	state  AttemptState
	cancel func() // stops the attempt's context; set when placed
	// stopped says the scheduler (or a fault) cancelled the attempt
	// itself, as opposed to the whole query ending.
	stopped atomic.Bool
}

// State is the attempt's state now.
func (a *Attempt) State() AttemptState {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.state
}

// transition moves the attempt to state to, refusing an illegal move (an
// internal error: the scheduler's bookkeeping went wrong).
func (a *Attempt) transition(to AttemptState) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, ok := range legal[a.state] {
		if ok == to {
			a.state = to
			return nil
		}
	}
	return fmt.Errorf("attempt %d of stage %d task %d cannot go from %s to %s", a.Number, a.Task.Stage.Stage.ID, a.Task.Index, a.state, to)
}

// ended reports whether the attempt is in a final state.
func (a *Attempt) ended() bool {
	s := a.State()
	return s == Finished || s == Failed || s == Cancelled
}

// avoids reports whether the attempt should not run on worker w.
func (a *Attempt) avoids(w int) bool {
	for _, x := range a.avoid {
		if x == w {
			return true
		}
	}
	return false
}
