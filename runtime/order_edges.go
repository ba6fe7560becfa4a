package runtime

import (
	"fmt"

	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec"
)

// addOrderEdges gives every stage holding a DynamicFilterConsumer (an
// OrderEnforce) a DependsOn edge to each stage holding one of the
// collectors it waits for, so those collectors have finished before the
// stage (and its scan) starts. It runs after the plan is cut, so Exchange
// boundaries are known. Then it checks that every DynamicFilterReader (a
// dynamically pruned scan) runs after the collectors it reads.
func addOrderEdges(g *JobGraph) error {
	byID := map[int]*Stage{}
	type node struct {
		n  exec.Node
		st *Stage
	}
	var waiters, readers []node
	for _, st := range g.Stages {
		walkStage(st.Root, func(n exec.Node) {
			if p, ok := n.(exec.DynamicFilterProducer); ok {
				byID[p.CollectorID()] = st
			}
			if _, ok := n.(exec.DynamicFilterConsumer); ok {
				waiters = append(waiters, node{n, st})
			}
			if _, ok := n.(exec.DynamicFilterReader); ok {
				readers = append(readers, node{n, st})
			}
		})
	}
	for _, w := range waiters {
		for _, id := range w.n.(exec.DynamicFilterConsumer).WaitsForCollectors() {
			dep := byID[id]
			switch {
			case id < 0:
				return fmt.Errorf("%w: %s waits for a nil collector", exec.ErrInternal, w.n)
			case dep == nil:
				return errs.New(errs.Internal, "%s waits for collector %d, which is not in the plan", w.n, id)
			case dep == w.st:
				return errs.New(errs.Internal, "%s waits for collector %d in its own stage %d; a dynamic filter must be collected in an earlier stage (below an exchange)", w.n, id, dep.ID)
			}
			if !containsStage(w.st.DependsOn, dep) {
				w.st.DependsOn = append(w.st.DependsOn, dep)
			}
		}
	}
	for _, r := range readers {
		for _, id := range r.n.(exec.DynamicFilterReader).ReadsCollectors() {
			dep := byID[id]
			switch {
			case dep == nil:
				return errs.New(errs.Internal, "%s reads dynamic filter %d, which no collector in the plan produces", r.n, id)
			case !runsAfter(r.st, dep):
				return errs.New(errs.Internal, "%s in stage %d reads dynamic filter %d of stage %d but does not wait for it (put an OrderEnforce above it)", r.n, r.st.ID, id, dep.ID)
			}
		}
	}
	return nil
}

// runsAfter reports whether st starts only after dep finished: dep is a
// producer or dependency of st, directly or through others.
func runsAfter(st, dep *Stage) bool {
	seen := map[*Stage]bool{}
	var visit func(s *Stage) bool
	visit = func(s *Stage) bool {
		if seen[s] {
			return false
		}
		seen[s] = true
		for _, p := range s.Producers {
			if p == dep || visit(p) {
				return true
			}
		}
		for _, p := range s.DependsOn {
			if p == dep || visit(p) {
				return true
			}
		}
		return false
	}
	return visit(st)
}

func containsStage(ss []*Stage, s *Stage) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// dynamicFilterDeps reports, for EXPLAIN, which of st's DependsOn stages
// come from a DynamicFilterConsumer (they hold a collector it waits for).
func dynamicFilterDeps(st *Stage) map[*Stage]bool {
	wanted := map[int]bool{}
	walkStage(st.Root, func(n exec.Node) {
		if c, ok := n.(exec.DynamicFilterConsumer); ok {
			for _, id := range c.WaitsForCollectors() {
				wanted[id] = true
			}
		}
	})
	out := map[*Stage]bool{}
	if len(wanted) == 0 {
		return out
	}
	for _, d := range st.DependsOn {
		walkStage(d.Root, func(n exec.Node) {
			if p, ok := n.(exec.DynamicFilterProducer); ok && wanted[p.CollectorID()] {
				out[d] = true
			}
		})
	}
	return out
}
