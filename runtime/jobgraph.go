package runtime

import (
	"fmt"

	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/shuffle"
)

// Stage is a piece of the plan between exchanges, run as tasks that each
// open Root. Exchange nodes inside Root are its inputs: leaves that read
// what the producer stages wrote. A Stage holds plan facts only; what a
// run of it did is its StageRun in the run's ExecutionGraph.
type Stage struct {
	// ID numbers stages producers first; the result stage has the highest.
	ID int
	// Root is the top node the stage runs: the child of Output, or the
	// plan root for the result stage.
	Root exec.Node
	// Output is the exchange the stage writes; nil for the result stage.
	Output *shuffle.Exchange
	// Inputs are the exchanges the stage reads, in plan order;
	// Producers[i] is the stage writing Inputs[i]. In blocking shuffle the
	// stage starts once its producers committed every task; in hybrid
	// shuffle an edge may be read while its producer runs (hybrid.go).
	Inputs    []*shuffle.Exchange
	Producers []*Stage
	// DependsOn are extra ordering edges: the stage starts only after
	// these finished, though it reads nothing from them (so a dynamic
	// filter's collector can run before the scan it prunes).
	DependsOn []*Stage
	// Consumers are the stages reading Output, once per read.
	Consumers []*Stage

	// collectors are the IDs of the dynamic filters the stage's nodes
	// collect (DynamicFilterProducer): an attempt's keys are committed or
	// discarded with the attempt.
	collectors []int
	// stagers are the nodes that stage effects per attempt outside the
	// stage's output (AttemptStager: a sink's files), committed or
	// discarded with the attempt.
	stagers []exec.AttemptStager
}

// JobGraph is a plan cut into stages. It is immutable once built and may
// run any number of times, concurrently: each run keeps its own facts in
// an ExecutionGraph.
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
	for _, st := range b.g.Stages {
		walkStage(st.Root, func(n exec.Node) {
			if p, ok := n.(exec.DynamicFilterProducer); ok {
				st.collectors = append(st.collectors, p.CollectorID())
			}
			if p, ok := n.(exec.AttemptStager); ok {
				st.stagers = append(st.stagers, p)
			}
		})
	}
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

// check verifies that the graph's edges have no cycle (a stage in a cycle
// would never start). Stages may be listed in any order; the scheduler
// starts whichever is ready.
func (g *JobGraph) check() error {
	in := make(map[*Stage]bool, len(g.Stages))
	for _, st := range g.Stages {
		in[st] = true
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
			return errs.New(errs.Internal, "stage %d depends on itself through its inputs and dependencies", st.ID)
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
