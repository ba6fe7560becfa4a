package exec

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
)

// Stage is a piece of the plan between exchanges, run as Parallelism
// tasks that each open Root. Exchange nodes inside Root are its inputs:
// leaves that read what the producer stages wrote.
type Stage struct {
	// ID numbers stages producers first; the result stage has the highest.
	ID int
	// Root is the top node the stage runs: the child of Output, or the
	// plan root for the result stage.
	Root Node
	// Output is the exchange the stage writes; nil for the result stage.
	Output *Exchange
	// Inputs are the exchanges the stage reads, in plan order;
	// Producers[i] is the stage writing Inputs[i].
	Inputs    []*Exchange
	Producers []*Stage
	// DependsOn are extra ordering edges: the stage starts only after
	// these finished, though it reads nothing from them (so a dynamic
	// filter's collector can run before the scan it prunes).
	DependsOn []*Stage
	// Consumers are the stages reading Output.
	Consumers []*Stage

	// Run-time facts, set by the scheduler; read them after the run.
	Parallelism int
	Tasks       []*Task
	Start, End  time.Time
	// OutBuffer is the output exchange's buffer (nil for the result stage);
	// after the run its batches are gone but its counters remain.
	OutBuffer *ExchangeBuffer
	// Decision is why the stage got its parallelism; TaskBytes the input
	// bytes of each task when the scheduler balanced key-group ranges by
	// bytes (broadcast inputs included); SkewSplits the key groups split
	// across tasks; Switch, when set, describes the run-time broadcast
	// switch of the stage's join. All for EXPLAIN ANALYZE.
	Decision   *ParallelismDecision
	TaskBytes  []int64
	SkewSplits []SkewSplit
	Switch     string

	rows, bytes atomic.Int64 // produced by all tasks
}

// Rows is the number of rows the stage's tasks produced.
func (s *Stage) Rows() int64 { return s.rows.Load() }

// Bytes is the number of Arrow bytes the stage's tasks produced.
func (s *Stage) Bytes() int64 { return s.bytes.Load() }

// Duration is the wall time from the stage's first task start to its last
// task end (zero if it never ran).
func (s *Stage) Duration() time.Duration {
	if s.Start.IsZero() || s.End.IsZero() {
		return 0
	}
	return s.End.Sub(s.Start)
}

// Task is one of a stage's Parallelism shares. It runs as one or more
// attempts; the first attempt to finish wins (only one attempt exists
// until speculative execution arrives).
type Task struct {
	Stage    *Stage
	Index    int
	Attempts []*Attempt
}

// Attempt is one run of a task.
type Attempt struct {
	Task       *Task
	Number     int
	Start, End time.Time
	Rows       int64 // rows the attempt produced
	Bytes      int64
	Err        error
}

// JobGraph is a plan cut into stages.
type JobGraph struct {
	// Stages as BuildStages cut them: producers before consumers, the
	// result stage last. Edges added later (DependsOn) need not follow
	// this order.
	Stages []*Stage
	// Result is the stage whose output is the query's result.
	Result *Stage
}

// BuildStages cuts the physical plan at its Exchange nodes. An Exchange
// reached twice (the same pointer) is one stage read by several stages.
func BuildStages(root Node) (*JobGraph, error) {
	if root == nil {
		return nil, fmt.Errorf("%w: no plan to run", ErrInternal)
	}
	b := &stageBuilder{g: &JobGraph{}, byExchange: map[*Exchange]*Stage{}}
	res, err := b.stage(root, nil, 0)
	if err != nil {
		return nil, err
	}
	b.g.Result = res
	// OrderEnforce nodes become DependsOn edges (dynamic filters).
	if err := addOrderEdges(b.g); err != nil {
		return nil, err
	}
	return b.g, nil
}

type stageBuilder struct {
	g          *JobGraph
	byExchange map[*Exchange]*Stage
}

// maxPlanDepth guards against cyclic "trees" built by mistake.
const maxPlanDepth = 10000

func (b *stageBuilder) stage(root Node, out *Exchange, depth int) (*Stage, error) {
	st := &Stage{Root: root, Output: out}
	var walk func(n Node, d int) error
	walk = func(n Node, d int) error {
		if d > maxPlanDepth {
			return fmt.Errorf("%w: plan deeper than %d nodes (a cycle?)", ErrInternal, maxPlanDepth)
		}
		if n == nil {
			return fmt.Errorf("%w: nil node in plan", ErrInternal)
		}
		// Every Exchange met is an input of this stage: a stage's root is
		// never its own output exchange.
		if ex, ok := n.(*Exchange); ok {
			if ex.Child == nil {
				return fmt.Errorf("%w: %s has no child", ErrInternal, ex)
			}
			prod, seen := b.byExchange[ex]
			if !seen {
				var err error
				if prod, err = b.stage(ex.Child, ex, d+1); err != nil {
					return err
				}
				b.byExchange[ex] = prod
			}
			st.Inputs = append(st.Inputs, ex)
			st.Producers = append(st.Producers, prod)
			prod.Consumers = append(prod.Consumers, st)
			return nil
		}
		for _, c := range n.Children() {
			if err := walk(c, d+1); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(root, depth); err != nil {
		return nil, err
	}
	st.ID = len(b.g.Stages) + 1
	b.g.Stages = append(b.g.Stages, st)
	return st, nil
}

// check verifies that the graph has not run yet and that its edges have
// no cycle (a stage in a cycle would never start). Stages may be listed in
// any order; the scheduler starts whichever is ready.
func (g *JobGraph) check() error {
	in := make(map[*Stage]bool, len(g.Stages))
	for _, st := range g.Stages {
		in[st] = true
		if st.Parallelism != 0 || len(st.Tasks) != 0 {
			return fmt.Errorf("%w: stage %d already ran; cut the plan again to rerun it", ErrInternal, st.ID)
		}
	}
	if !in[g.Result] {
		return fmt.Errorf("%w: the result stage is not in the job graph", ErrInternal)
	}
	const (
		visiting = 1
		done     = 2
	)
	state := map[*Stage]int{}
	var visit func(st *Stage) error
	visit = func(st *Stage) error {
		switch state[st] {
		case visiting:
			return fmt.Errorf("%w: stage %d depends on itself through its inputs and dependencies", ErrPlan, st.ID)
		case done:
			return nil
		}
		if !in[st] {
			return fmt.Errorf("%w: stage %d is not in the job graph", ErrInternal, st.ID)
		}
		state[st] = visiting
		for _, p := range append(append([]*Stage{}, st.Producers...), st.DependsOn...) {
			if err := visit(p); err != nil {
				return err
			}
		}
		state[st] = done
		return nil
	}
	for _, st := range g.Stages {
		if err := visit(st); err != nil {
			return err
		}
	}
	return nil
}

// ready reports whether every producer and dependency of s finished.
func (s *Stage) ready(finished map[*Stage]bool) bool {
	for _, p := range s.Producers {
		if !finished[p] {
			return false
		}
	}
	for _, p := range s.DependsOn {
		if !finished[p] {
			return false
		}
	}
	return true
}

// singleTasker is implemented by leaf nodes whose rows must not be split
// across tasks (constant relations): a stage holding one runs as one task.
type singleTasker interface {
	SingleTask() bool
}

// needsSingleTask reports whether stage s must run as one task: it reads a
// gather exchange, holds a constant relation (Values), or has no input
// that is split among tasks (only broadcast inputs and constants), where
// more tasks would only repeat rows.
func needsSingleTask(s *Stage) bool {
	for _, in := range s.Inputs {
		if in.Kind == GatherExchange {
			return true
		}
	}
	single, split := false, false
	var walk func(n Node)
	walk = func(n Node) {
		if ex, ok := n.(*Exchange); ok {
			if ex.Kind == HashExchange {
				split = true
			}
			return
		}
		kids := n.Children()
		if len(kids) == 0 {
			if isConstantLeaf(n) {
				single = true
			} else {
				split = true // a scan takes its share of the splits
			}
		}
		for _, c := range kids {
			walk(c)
		}
	}
	walk(s.Root)
	return single || !split
}

// isConstantLeaf reports whether leaf n yields the same rows whatever the
// task, which it says through SingleTask (Values does).
func isConstantLeaf(n Node) bool {
	st, ok := n.(singleTasker)
	return ok && st.SingleTask()
}

// StageInputStats is what a stage's producers wrote, handed to
// decideParallelism when the stage is scheduled.
type StageInputStats struct {
	Buffers []*ExchangeBuffer // one per Stage.Inputs entry
}

// Bytes is the total input size of the stage.
func (s StageInputStats) Bytes() int64 {
	var n int64
	for _, b := range s.Buffers {
		n += b.TotalBytes()
	}
	return n
}

// decideParallelism picks a stage's task count when it is scheduled, after
// its inputs are complete, and records why on s.Decision. Adaptive: from
// the bytes its producers wrote or the files it scans (DecideParallelism);
// otherwise the run's fixed parallelism. Either way 1 where more tasks
// would repeat rows.
func decideParallelism(ctx context.Context, s *Stage, inputs StageInputStats, cfg *RunConfig) (int, error) {
	var in ParallelismInput
	if cfg.Adaptive.Enabled {
		var err error
		if in, err = stageInput(ctx, s, inputs.Buffers); err != nil {
			return 0, err
		}
	} else {
		in.Single = needsSingleTask(s)
	}
	d := DecideParallelism(in, cfg.Adaptive, cfg.Parallelism)
	s.Decision = &d
	return d.Parallelism, nil
}
