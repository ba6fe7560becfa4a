package runtime

import (
	"context"
	"fmt"
	"io"
	goruntime "runtime"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/runtime/policy"
	"github.com/fsql-dev/fsql/spill"
)

// RunConfig sets how one query runs.
type RunConfig struct {
	// Parallelism is every stage's task count (parallelism.default), except
	// stages that must run as one task. Zero means GOMAXPROCS.
	Parallelism int
	// MaxParallelism is the key-group count of hash exchanges that do not
	// set their own (pipeline.max-parallelism). Zero means
	// keygroup.DefaultMaxParallelism(Parallelism).
	MaxParallelism int
	// Workers run the attempts; the scheduler places each on a free slot.
	// Empty means one in-process worker, tm-0, of Slots slots.
	Workers []Worker
	// Slots is the slot count of the default worker. Zero means
	// GOMAXPROCS.
	Slots int
	// Alloc allocates every buffer; nil means memory.DefaultAllocator.
	Alloc memory.Allocator
	// Memory is the query's memory budget; nil is unlimited.
	Memory *exec.MemoryBudget
	// Spill, when set, lets operators and exchange buffers that outgrow
	// their share of Memory write to disk: each run creates its own
	// spill.Manager from it and removes every file when the run ends.
	// Nil turns spilling off (passing the budget fails the query).
	Spill *spill.Config
	// Stats collects per-operator counters; nil collects none.
	Stats *exec.QueryStats
	// DynamicFilterMaxValues caps the distinct keys a dynamic filter holds
	// exactly before it degrades to a bloom filter plus min/max
	// (table.exec.dynamic-filtering.max-values). Zero means
	// pruning.DefaultMaxValues. Every run gets its own coordinator, so
	// runs of one plan never share filters.
	DynamicFilterMaxValues int
	// Adaptive, when Enabled, replaces Parallelism by a per-stage choice
	// driven by input bytes, balances key-group ranges by bytes, splits
	// skewed join key groups and switches small shuffled joins to
	// broadcast at run time (package policy).
	Adaptive policy.AdaptiveConfig
	// Speculation runs copies of slow attempts and blocklists slow
	// workers (policy.SpeculationConfig; off in the zero value).
	Speculation policy.SpeculationConfig
	// Restart retries attempts that failed with a retryable error
	// (policy.RestartConfig; none in the zero value).
	Restart policy.RestartConfig
	// Blocklist is the workers blocked for slowness, shared by the runs
	// of one engine; nil gives the run a blocklist of its own.
	Blocklist *Blocklist
	// ShuffleMode is execution.batch-shuffle-mode: blocking (the zero
	// value) or hybrid, where a consumer may start while its producers run
	// when the slots allow (hybrid.go).
	ShuffleMode ShuffleMode
	// Faults, when set, is the fault-injection facility of tests and
	// benchmarks (slowed workers, failed or duplicated attempts). Nil
	// injects none.
	Faults *Faults
}

// Execution is a running query. Read its result with Next until io.EOF,
// and always Close it.
type Execution struct {
	schema  *arrow.Schema
	graph   *ExecutionGraph
	cancel  context.CancelFunc
	results chan arrow.RecordBatch
	done    chan struct{} // closed once every goroutine of the query ended
	// progress counts started stages and finished tasks, for Progress.
	progress *progress
	spill    *spill.Manager // nil when spilling is off

	mu        sync.Mutex
	err       error // the query's first error
	closed    bool
	closeOnce sync.Once
}

// Run starts the plan rooted at root and returns at once; the work happens
// as the result is read. The root's output is the query result; when the
// result stage runs as several tasks their batches are interleaved, so a
// plan whose order matters must make its result stage single-task (a
// Gather exchange below the final Sort does).
func Run(ctx context.Context, root exec.Node, cfg RunConfig) (*Execution, error) {
	g, err := BuildJobGraph(root)
	if err != nil {
		return nil, err
	}
	return RunGraph(ctx, g, cfg)
}

// RunGraph runs an already cut plan. A job graph may run any number of
// times, also concurrently: each run has its own ExecutionGraph.
func RunGraph(ctx context.Context, g *JobGraph, cfg RunConfig) (*Execution, error) {
	if cfg.Parallelism <= 0 {
		cfg.Parallelism = goruntime.GOMAXPROCS(0)
	}
	if cfg.Slots <= 0 {
		cfg.Slots = goruntime.GOMAXPROCS(0)
	}
	if cfg.Alloc == nil {
		cfg.Alloc = memory.DefaultAllocator
	}
	if len(cfg.Workers) == 0 {
		cfg.Workers = NewLocalPool(1, cfg.Slots)
	}
	if g == nil || g.Result == nil {
		return nil, fmt.Errorf("%w: no job graph to run", exec.ErrInternal)
	}
	if err := g.check(); err != nil {
		return nil, err
	}
	qctx, cancel := context.WithCancel(ctx)
	e := &Execution{
		schema:  g.Result.Root.Schema(),
		graph:   newExecutionGraph(g),
		cancel:  cancel,
		results: make(chan arrow.RecordBatch, 1),
		done:    make(chan struct{}),
	}
	e.progress = newProgress(g)
	s, err := newScheduler(g, &cfg, e)
	if err != nil {
		cancel()
		return nil, err
	}
	slots := 0
	for _, w := range cfg.Workers {
		slots += max(w.Slots(), 0)
	}
	cfg.Memory.SetSlots(slots)
	var spills *spill.Manager
	if cfg.Spill != nil {
		spills = spill.NewManager(*cfg.Spill)
		s.services.Spill = spills
	}
	e.spill = spills
	go func() {
		err := s.run(qctx)
		// Every attempt ended and every buffer was released: no file is
		// in use any more, whatever the outcome.
		if cerr := spills.Close(); err == nil && cerr != nil {
			err = cerr // names the folder; of kind errs.Resources
		}
		e.setErr(err)
		// Every sender has ended (run waited for every attempt), so closing
		// is safe; readers drain what is left.
		close(e.results)
		close(e.done)
	}()
	return e, nil
}

// Schema is the schema of every result batch.
func (e *Execution) Schema() *arrow.Schema { return e.schema }

// Next returns the next result batch, which the caller must Release, or
// io.EOF after the last one, or the query's error. The query's first
// error wins over batches still queued.
func (e *Execution) Next(ctx context.Context) (arrow.RecordBatch, error) {
	e.mu.Lock()
	closed := e.closed
	e.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("%w: Next on a closed query", exec.ErrExecution)
	}
	if err := e.failed(); err != nil {
		return nil, err
	}
	select {
	case b, ok := <-e.results:
		if ok {
			return b, nil
		}
		<-e.done
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.err != nil {
			return nil, e.err
		}
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Close stops the query if it still runs, waits for all its goroutines
// and releases every buffer it holds, queued results included. It is
// idempotent; closing early (after a LIMIT was satisfied) is normal.
func (e *Execution) Close() {
	e.closeOnce.Do(func() {
		e.mu.Lock()
		e.closed = true
		e.mu.Unlock()
		e.cancel()
		for b := range e.results {
			b.Release()
		}
		<-e.done
	})
}

// setErr records the query's first error and stops the query.
func (e *Execution) setErr(err error) {
	if err == nil {
		return
	}
	e.mu.Lock()
	if e.err == nil {
		e.err = err
	}
	e.mu.Unlock()
	e.cancel()
}

func (e *Execution) failed() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.err
}

// Err is the query's error once it ended (nil while running, or when it
// succeeded or was closed before failing).
func (e *Execution) Err() error {
	select {
	case <-e.done:
	default:
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.err
}

// Spill is what the run wrote to disk (zero when spilling is off or
// nothing spilled).
func (e *Execution) Spill() spill.Stats { return e.spill.Stats() }

// Graph is the query's execution graph; after the run (io.EOF or Close)
// it holds each stage's parallelism and decisions, each task's attempts
// with their workers, times, rows and bytes.
func (e *Execution) Graph() *ExecutionGraph { return e.graph }
