// Package wiretest sends physical plans through their wire form (package
// planwire) for the tests that run decoded plans: the TPC-DS statements
// in the root package and planwire's own.
package wiretest

import (
	"bytes"

	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/planwire"
	"github.com/fsql-dev/fsql/runtime"
)

// Fragments are the stages of g as the wire carries them, producers
// first.
func Fragments(g *runtime.JobGraph) []planwire.Fragment {
	out := make([]planwire.Fragment, len(g.Stages))
	for i, st := range g.Stages {
		out[i] = planwire.Fragment{Stage: st.ID, Root: st.Root, Output: st.Output}
	}
	return out
}

// RoundTrip cuts root into its job graph's stages, encodes and decodes
// every fragment alone and then the whole plan, resolving tables through
// r, and returns the decoded plan. It fails unless
//   - encoding a decoded fragment, or the decoded plan, gives the same
//     bytes (nothing lost or invented);
//   - the decoded plan prints the same EXPLAIN (operators, expressions,
//     exchanges, stages, edges);
//   - the runtime numbers the decoded nodes as the encoding says (the IDs
//     statistics are reported under travel with the plan);
//   - both plans hold only data (CheckPlan).
func RoundTrip(root exec.Node, r planwire.Resolver) (exec.Node, error) {
	if err := CheckPlan(root); err != nil {
		return nil, err
	}
	g, err := runtime.BuildJobGraph(root)
	if err != nil {
		return nil, err
	}
	frags := Fragments(g)
	for _, f := range frags {
		data, err := planwire.EncodeFragment(f, g.NodeID)
		if err != nil {
			return nil, err
		}
		d, err := planwire.DecodeFragment(data, r)
		if err != nil {
			return nil, err
		}
		again, err := planwire.EncodeFragment(d.Fragment, idsOf(d.IDs))
		if err != nil {
			return nil, err
		}
		if !bytes.Equal(data, again) {
			return nil, errs.New(errs.Internal, "stage %d: encoding the decoded fragment gives other bytes (%d, was %d)", f.Stage, len(again), len(data))
		}
	}
	data, err := planwire.EncodePlan(frags, g.NodeID)
	if err != nil {
		return nil, err
	}
	decoded, ids, err := planwire.DecodePlan(data, r)
	if err != nil {
		return nil, err
	}
	if decoded == root {
		return nil, errs.New(errs.Internal, "decoding returned the original plan")
	}
	g2, err := runtime.BuildJobGraph(decoded)
	if err != nil {
		return nil, err
	}
	again, err := planwire.EncodePlan(Fragments(g2), g2.NodeID)
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(data, again) {
		return nil, errs.New(errs.Internal, "encoding the decoded plan gives other bytes (%d, was %d)", len(again), len(data))
	}
	n := 0
	for g2.Node(n) != nil {
		n++
	}
	if len(ids) != n {
		return nil, errs.New(errs.Internal, "%d decoded node IDs for %d nodes", len(ids), n)
	}
	for node, id := range ids {
		if g2.NodeID(node) != id {
			return nil, errs.New(errs.Internal, "decoded node %s has ID %d in the job graph, %d in the encoding", node, g2.NodeID(node), id)
		}
	}
	if err := CheckPlan(decoded); err != nil {
		return nil, err
	}
	if want, got := g.Explain(), g2.Explain(); got != want {
		return nil, errs.New(errs.Internal, "the decoded plan explains differently:\n%s\nwas:\n%s", got, want)
	}
	return decoded, nil
}

func idsOf(m map[exec.Node]int) planwire.NodeIDs {
	return func(n exec.Node) int {
		if id, ok := m[n]; ok {
			return id
		}
		return -1
	}
}
