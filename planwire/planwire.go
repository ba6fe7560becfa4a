package planwire

import (
	"google.golang.org/protobuf/proto"

	"github.com/fsql-dev/fsql/connectors/hive"
	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/planwire/pb"
	"github.com/fsql-dev/fsql/shuffle"
)

// Version is the format version every Plan and Fragment carries; a
// decoder refuses any other.
const Version = 1

// Fragment is one stage of a plan: the tree a task of the stage opens and
// the exchange it writes. Every shuffle.Exchange inside Root is an input
// the stage reads (its child belongs to the producer's fragment).
type Fragment struct {
	// Stage is the stage's ID in the job graph.
	Stage int
	// Root is the stage's tree: the child of Output, or the plan's root
	// for the result stage.
	Root exec.Node
	// Output is the exchange the stage writes; nil for the result stage.
	Output *shuffle.Exchange
}

// NodeIDs gives every node of a plan its ID: the job graph's numbering
// (runtime.JobGraph.NodeID), under which statistics are kept. A negative
// ID is an error.
type NodeIDs func(exec.Node) int

// Resolver finds the tables a fragment's scans read by the name the plan
// knows them by (a table of the data directory, or a path as the query
// wrote it); *hive.Catalog (a catalog view) is one. The decoder checks
// that each table has the files the plan saw.
type Resolver interface {
	Lookup(name string) (*hive.Table, error)
}

// Decoded is a decoded fragment: its input exchanges' children are Input
// placeholders (the rows come from the producers, through the runtime's
// exchange readers).
type Decoded struct {
	Fragment
	// IDs holds the ID of every decoded node, inputs and output included.
	IDs map[exec.Node]int
}

// EncodeFragment encodes one stage of a plan.
func EncodeFragment(f Fragment, ids NodeIDs) ([]byte, error) {
	m, err := encodeFragment(f, ids)
	if err != nil {
		return nil, err
	}
	return marshal(m)
}

// DecodeFragment decodes one stage, resolving its tables through r.
func DecodeFragment(data []byte, r Resolver) (*Decoded, error) {
	var m pb.Fragment
	if err := proto.Unmarshal(data, &m); err != nil {
		return nil, errs.New(errs.Internal, "decoding a plan fragment: %w", err)
	}
	d := newDecoder(r, nil)
	return d.fragment(&m)
}

// EncodePlan encodes a whole plan as its fragments, producers before
// consumers and the result stage last (runtime.JobGraph.Stages order).
func EncodePlan(frags []Fragment, ids NodeIDs) ([]byte, error) {
	m := &pb.Plan{Version: Version}
	for _, f := range frags {
		fm, err := encodeFragment(f, ids)
		if err != nil {
			return nil, err
		}
		m.Fragments = append(m.Fragments, fm)
	}
	return marshal(m)
}

// DecodePlan decodes a whole plan and joins its fragments back into one
// tree: each input exchange becomes the producer fragment's output
// exchange, over the producer's tree, one object for every consumer (as
// the planner shares them). It returns the plan's root and the ID of
// every node.
func DecodePlan(data []byte, r Resolver) (exec.Node, map[exec.Node]int, error) {
	var m pb.Plan
	if err := proto.Unmarshal(data, &m); err != nil {
		return nil, nil, errs.New(errs.Internal, "decoding a plan: %w", err)
	}
	if m.Version != Version {
		return nil, nil, errs.New(errs.Internal, "plan of wire format version %d; this build reads version %d", m.Version, Version)
	}
	if len(m.Fragments) == 0 {
		return nil, nil, errs.New(errs.Internal, "a plan without fragments")
	}
	d := newDecoder(r, map[int32]*producer{})
	ids := map[exec.Node]int{}
	var root exec.Node
	for i, fm := range m.Fragments {
		f, err := d.fragment(fm)
		if err != nil {
			return nil, nil, err
		}
		last := i == len(m.Fragments)-1
		if (f.Output == nil) != last {
			return nil, nil, errs.New(errs.Internal, "fragment %d of %d (stage %d): only the last fragment, the result stage, has no output exchange", i+1, len(m.Fragments), f.Stage)
		}
		for n, id := range f.IDs {
			ids[n] = id
		}
		root = f.Root
	}
	return root, ids, nil
}

func marshal(m proto.Message) ([]byte, error) {
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		return nil, errs.New(errs.Internal, "encoding a plan: %w", err)
	}
	return b, nil
}
