package runtime

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/runtime/policy"
	"github.com/fsql-dev/fsql/shuffle"
)

// Stage is a piece of the plan between exchanges, run as Parallelism
// tasks that each open Root. Exchange nodes inside Root are its inputs:
// leaves that read what the producer stages wrote.
type Stage struct {
	// ID numbers stages producers first; the result stage has the highest.
	ID int
	// Root is the top node the stage runs: the child of Output, or the
	// plan root for the result stage.
	Root exec.Node
	// Output is the exchange the stage writes; nil for the result stage.
	Output *shuffle.Exchange
	// Inputs are the exchanges the stage reads, in plan order;
	// Producers[i] is the stage writing Inputs[i].
	Inputs    []*shuffle.Exchange
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
	OutBuffer *shuffle.Buffer
	// Decision is why the stage got its parallelism; TaskBytes the input
	// bytes of each task when the scheduler balanced key-group ranges by
	// bytes (broadcast inputs included); SkewSplits the key groups split
	// across tasks; Switch, when set, describes the run-time broadcast
	// switch of the stage's join. All for EXPLAIN ANALYZE.
	Decision   *policy.ParallelismDecision
	TaskBytes  []int64
	SkewSplits []policy.SkewSplit
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
	// Stages as BuildJobGraph cut them: producers before consumers, the
	// result stage last. Edges added later (DependsOn) need not follow
	// this order.
	Stages []*Stage
	// Result is the stage whose output is the query's result.
	Result *Stage

	// nodes lists every node of the plan once, by ID (preorder from the
	// root, a shared exchange's subtree numbered where first met); ids is
	// the reverse index. Statistics are kept by these IDs.
	nodes []exec.Node
	ids   map[exec.Node]int
}

// NodeID is node n's ID in the graph, or -1 when n is not in the plan.
func (g *JobGraph) NodeID(n exec.Node) int {
	if id, ok := g.ids[n]; ok {
		return id
	}
	return -1
}

// Node is the node of ID id, or nil.
func (g *JobGraph) Node(id int) exec.Node {
	if id < 0 || id >= len(g.nodes) {
		return nil
	}
	return g.nodes[id]
}

// numberNodes gives every node of the plan its ID.
func (g *JobGraph) numberNodes(root exec.Node) {
	g.ids = map[exec.Node]int{}
	var walk func(n exec.Node)
	walk = func(n exec.Node) {
		if _, seen := g.ids[n]; seen {
			return
		}
		g.ids[n] = len(g.nodes)
		g.nodes = append(g.nodes, n)
		for _, c := range n.Children() {
			walk(c)
		}
	}
	walk(root)
}

// BuildJobGraph cuts the physical plan at its Exchange nodes. An Exchange
// reached twice (the same pointer) is one stage read by several stages.
// Dynamic-filter consumers get ordering edges to their collectors' stages
// (see addOrderEdges).
func BuildJobGraph(root exec.Node) (*JobGraph, error) {
	if root == nil {
		return nil, fmt.Errorf("%w: no plan to run", exec.ErrInternal)
	}
	b := &stageBuilder{g: &JobGraph{}, byExchange: map[*shuffle.Exchange]*Stage{}}
	res, err := b.stage(root, nil, 0)
	if err != nil {
		return nil, err
	}
	b.g.Result = res
	b.g.numberNodes(root)
	if err := addOrderEdges(b.g); err != nil {
		return nil, err
	}
	return b.g, nil
}

type stageBuilder struct {
	g          *JobGraph
	byExchange map[*shuffle.Exchange]*Stage
}

// maxPlanDepth guards against cyclic "trees" built by mistake.
const maxPlanDepth = 10000

func (b *stageBuilder) stage(root exec.Node, out *shuffle.Exchange, depth int) (*Stage, error) {
	st := &Stage{Root: root, Output: out}
	var walk func(n exec.Node, d int) error
	walk = func(n exec.Node, d int) error {
		if d > maxPlanDepth {
			return fmt.Errorf("%w: plan deeper than %d nodes (a cycle?)", exec.ErrInternal, maxPlanDepth)
		}
		if n == nil {
			return fmt.Errorf("%w: nil node in plan", exec.ErrInternal)
		}
		// Every Exchange met is an input of this stage: a stage's root is
		// never its own output exchange.
		if ex, ok := n.(*shuffle.Exchange); ok {
			if ex.Child == nil {
				return fmt.Errorf("%w: %s has no child", exec.ErrInternal, ex)
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
			return fmt.Errorf("%w: stage %d already ran; cut the plan again to rerun it", exec.ErrInternal, st.ID)
		}
	}
	if !in[g.Result] {
		return fmt.Errorf("%w: the result stage is not in the job graph", exec.ErrInternal)
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
			return fmt.Errorf("%w: stage %d depends on itself through its inputs and dependencies", exec.ErrPlan, st.ID)
		case done:
			return nil
		}
		if !in[st] {
			return fmt.Errorf("%w: stage %d is not in the job graph", exec.ErrInternal, st.ID)
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

// walkStage visits the nodes of one stage: it does not descend below an
// Exchange, whose child belongs to the producer stage.
func walkStage(n exec.Node, visit func(exec.Node)) {
	if n == nil {
		return
	}
	visit(n)
	if _, ok := n.(*shuffle.Exchange); ok {
		return
	}
	for _, c := range n.Children() {
		walkStage(c, visit)
	}
}

// needsSingleTask reports whether stage s must run as one task: it reads a
// gather exchange, holds a constant relation (a SingleTasker leaf), or has
// no input that is split among tasks (only broadcast inputs and
// constants), where more tasks would only repeat rows.
func needsSingleTask(s *Stage) bool {
	for _, in := range s.Inputs {
		if in.Kind == shuffle.Gather {
			return true
		}
	}
	single, split := false, false
	walkStage(s.Root, func(n exec.Node) {
		if ex, ok := n.(*shuffle.Exchange); ok {
			if ex.Kind == shuffle.Hash {
				split = true
			}
			return
		}
		if len(n.Children()) > 0 {
			return
		}
		if st, ok := n.(exec.SingleTasker); ok && st.SingleTask() {
			single = true
		} else {
			split = true // a scan takes its share of the splits
		}
	})
	return single || !split
}

// stageInput adds up what decides stage s's parallelism: its inputs'
// bytes as producers wrote them, and what its sized sources will read.
func stageInput(ctx context.Context, s *Stage, bufs []*shuffle.Buffer, tc *exec.TaskContext) (policy.ParallelismInput, error) {
	in := policy.ParallelismInput{Single: needsSingleTask(s)}
	for i, ex := range s.Inputs {
		b := bufs[i]
		if b == nil {
			continue
		}
		switch ex.Kind {
		case shuffle.Hash:
			in.Bytes += b.TotalBytes()
			in.KeyGroups = b.Subpartitions
		case shuffle.Broadcast:
			in.BroadcastBytes += b.TotalBytes()
		default:
			in.Bytes += b.TotalBytes()
		}
	}
	var err error
	walkStage(s.Root, func(n exec.Node) {
		src, ok := n.(exec.SizedSource)
		if !ok || err != nil {
			return
		}
		nb, nf, e := src.SourceSize(ctx, tc)
		if e != nil {
			err = e
			return
		}
		in.Bytes += nb
		in.Files += nf
	})
	return in, err
}

// decideParallelism picks a stage's task count when it is scheduled, after
// its inputs are complete, and records why on s.Decision. Adaptive: from
// the bytes its producers wrote or the files it scans
// (policy.DecideParallelism); otherwise the run's fixed parallelism.
// Either way 1 where more tasks would repeat rows.
func decideParallelism(ctx context.Context, s *Stage, bufs []*shuffle.Buffer, cfg *RunConfig, services *exec.TaskContext) (int, error) {
	var in policy.ParallelismInput
	if cfg.Adaptive.Enabled {
		tc := *services
		tc.Stage = s.ID
		var err error
		if in, err = stageInput(ctx, s, bufs, &tc); err != nil {
			return 0, err
		}
	} else {
		in.Single = needsSingleTask(s)
	}
	d := policy.DecideParallelism(in, cfg.Adaptive, cfg.Parallelism)
	s.Decision = &d
	return d.Parallelism, nil
}
