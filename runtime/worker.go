package runtime

import (
	"context"
	"fmt"
	"os"
	goruntime "runtime"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/shuffle"
)

// Worker runs task attempts on a fixed number of slots (Flink's
// TaskManager). The scheduler owns slot accounting: it places an attempt
// on a free slot of a worker and calls Run; the worker runs it and
// reports back. The in-process worker runs attempts in goroutines of this
// process; a remote worker implements the same interface over the
// network.
type Worker interface {
	// ID names the worker, e.g. "tm-0".
	ID() string
	// Slots is how many attempts it runs at once.
	Slots() int
	// Labels describe it; "host" at least.
	Labels() map[string]string
	// Run starts spec on one of the worker's slots and returns at once.
	// The worker calls ev.Started when the attempt begins and ev.Ended
	// exactly once when it ended, from any goroutine. Cancelling ctx
	// stops the attempt. The scheduler calls Run in priority order (the
	// order of its queue: the first task of a stage, often the one that
	// gates others, first), so attempts begin in the order Run was
	// called. Run never blocks: the scheduler places no more attempts
	// than the worker has slots, and it is the one that hears of their
	// ends.
	Run(ctx context.Context, spec *AttemptSpec, ev AttemptEvents)
}

// AttemptEvents is how a worker reports on an attempt it runs.
type AttemptEvents interface {
	Started()
	// ReadBytes adds n to the bytes the attempt read from its inputs.
	ReadBytes(n int64)
	Ended(AttemptResult)
}

// AttemptSpec is everything one attempt needs: the stage's fragment, which
// task and attempt it is, where it reads and writes, and the task
// context's services. Inputs, Output and Result are in-process handles
// today; a remote worker will need addresses of shuffle services instead.
type AttemptSpec struct {
	// Stage is the stage's ID and Root its node tree; Graph numbers the
	// nodes (statistics are kept by node ID).
	Stage int
	Root  exec.Node
	Graph *JobGraph
	// Task of Parallelism tasks; Attempt numbers its runs from 0.
	Task, Attempt, Parallelism int
	// Inputs are the buffers of the exchanges Root reads; Output is the
	// buffer the attempt writes (nil for the result stage, whose batches
	// go to Result).
	Inputs map[*shuffle.Exchange]*shuffle.Buffer
	Output *shuffle.Buffer
	Result chan<- arrow.RecordBatch
	// Services is what the attempt's task context starts from: the
	// allocator, the memory budget, the run's dynamic-filter coordinator
	// (a later step looks services up by ID, so a remote worker can hold
	// its own); Stats collects the operators' counters.
	Services exec.TaskContext
	Stats    *exec.QueryStats
	// SharedBuilds are the stage run's shared hash tables of broadcast
	// joins, by join node (exec.SharedBuild); nil when none.
	SharedBuilds map[exec.Node]*exec.SharedBuild
	// CoPartitioned are the broadcast build inputs of the stage's
	// co-partitioned joins (see coPartition), read filtered to the task's
	// key groups; nil when none.
	CoPartitioned map[*shuffle.Exchange]*CoPartitionedBuild
	// Fault is a test and fault-injection facility (see AttemptFault);
	// Slowdown, above 1, slows every step of the attempt by that factor
	// (Faults.Slow of the worker it runs on). Worker names where it runs.
	Fault    AttemptFault
	Slowdown float64
	Worker   string
}

// AttemptResult is how an attempt ended.
type AttemptResult struct {
	Start, End  time.Time
	Rows, Bytes int64 // produced
	// Emitted counts the batches a result-stage attempt handed to the
	// caller: once it is positive the attempt cannot be retried.
	Emitted int
	Err     error
}

// LocalWorker is an in-process worker: each attempt runs in a goroutine.
//
// Placed attempts begin in the order they were placed: Run queues the
// attempt and starts a goroutine that takes the oldest queued one, not the
// one it was started for. Go runs the goroutine created last first (it
// takes the creating P's runnext slot and pushes the one before to the
// back of the run queue), so with one goroutine per attempt the attempt
// placed last began first and the first task of a query, often the small
// dimension stage whose dynamic filter gates the fact scan, waited
// milliseconds behind those placed after it. Whichever goroutine runs
// first now runs the oldest attempt. There is exactly one goroutine per
// queued attempt, so none ever waits for another to free it: no pool of
// slot goroutines to size, and none that outlives its attempt.
type LocalWorker struct {
	id     string
	slots  int
	labels map[string]string

	mu      sync.Mutex
	pending []placedAttempt // placed, not begun: oldest first
}

// placedAttempt is one call of Run, waiting for its goroutine.
type placedAttempt struct {
	ctx  context.Context
	spec *AttemptSpec
	ev   AttemptEvents
}

// NewLocalWorker returns an in-process worker with slots slots (GOMAXPROCS
// when not positive), labelled with this host's name.
func NewLocalWorker(id string, slots int) *LocalWorker {
	if slots <= 0 {
		slots = goruntime.GOMAXPROCS(0)
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "local"
	}
	return &LocalWorker{id: id, slots: slots, labels: map[string]string{"host": host}}
}

// NewLocalPool returns n in-process workers tm-0 .. tm-(n-1) of slots
// slots each (Flink's minicluster.number-of-taskmanagers and
// taskmanager.numberOfTaskSlots).
func NewLocalPool(n, slots int) []Worker {
	out := make([]Worker, max(n, 1))
	for i := range out {
		out[i] = NewLocalWorker(fmt.Sprintf("tm-%d", i), slots)
	}
	return out
}

// ID implements Worker.
func (w *LocalWorker) ID() string { return w.id }

// Slots implements Worker.
func (w *LocalWorker) Slots() int { return w.slots }

// Labels implements Worker.
func (w *LocalWorker) Labels() map[string]string { return w.labels }

// Run implements Worker.
func (w *LocalWorker) Run(ctx context.Context, spec *AttemptSpec, ev AttemptEvents) {
	w.mu.Lock()
	w.pending = append(w.pending, placedAttempt{ctx: ctx, spec: spec, ev: ev})
	w.mu.Unlock()
	go w.runOldest()
}

// runOldest runs the oldest placed attempt that has not begun. It reports
// the start under the lock, so the worker's attempts are Started in the
// order they were placed even when two goroutines take them at once.
func (w *LocalWorker) runOldest() {
	w.mu.Lock()
	p := w.pending[0]
	w.pending[0] = placedAttempt{} // let the spec go with its attempt
	w.pending = w.pending[1:]
	start := time.Now()
	p.ev.Started()
	w.mu.Unlock()
	p.ev.Ended(runAttempt(p.ctx, p.spec, p.ev, start))
}
