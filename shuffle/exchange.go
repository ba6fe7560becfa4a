package shuffle

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/exec/expr"
)

// Kind says how an Exchange routes rows from producer tasks to consumer
// tasks.
type Kind int

const (
	// Hash sends each row to the task owning its key group:
	// keygroup.ForHash(exec.HashColumns(Keys), MaxParallelism).
	Hash Kind = iota
	// Broadcast sends every row to every consumer task (the build side of
	// a broadcast join).
	Broadcast
	// Gather sends every row to a single consumer task.
	Gather
	// Forward is a pointwise edge: consumer task i reads producer task
	// i's output whole, and the consumer stage runs as many tasks as the
	// producer stage. The run-time broadcast switch turns a hash exchange
	// into one.
	Forward
)

// String names the kind as EXPLAIN prints it.
func (k Kind) String() string {
	switch k {
	case Hash:
		return "hash"
	case Broadcast:
		return "broadcast"
	case Gather:
		return "gather"
	case Forward:
		return "forward"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Exchange is a stage boundary: the stage below (Child) writes its output
// into the exchange, the stage above reads it. The runtime cuts the plan
// here and runs both sides; Open is never called.
type Exchange struct {
	Kind  Kind
	Child exec.Node
	// Keys are the shuffle keys, evaluated against Child's batches (hash
	// only).
	Keys []expr.Expr
	// MaxParallelism is the number of key groups (hash only). Zero means
	// the run's key-group count (see runtime.RunConfig.MaxParallelism).
	MaxParallelism int
}

// Schema implements exec.Node: an exchange moves rows, it does not change
// them.
func (e *Exchange) Schema() *arrow.Schema { return e.Child.Schema() }

// Children implements exec.Node.
func (e *Exchange) Children() []exec.Node { return []exec.Node{e.Child} }

// String implements exec.Node.
func (e *Exchange) String() string {
	switch e.Kind {
	case Hash:
		kg := "default key groups"
		if e.MaxParallelism > 0 {
			kg = fmt.Sprintf("%d key groups", e.MaxParallelism)
		}
		return fmt.Sprintf("Exchange(hash [%s], %s)", e.KeyList(), kg)
	default:
		return fmt.Sprintf("Exchange(%s)", e.Kind)
	}
}

// KeyList is the shuffle keys as EXPLAIN prints them, comma-separated.
func (e *Exchange) KeyList() string {
	keys := make([]string, len(e.Keys))
	for i, k := range e.Keys {
		keys[i] = k.String()
	}
	return strings.Join(keys, ", ")
}

// Open implements exec.Node. Exchanges are never opened as operators: the
// runtime replaces each one by a writer in the stage below and a reader in
// the stage above.
func (e *Exchange) Open(*exec.TaskContext, []exec.Stream) (exec.Stream, error) {
	return nil, fmt.Errorf("%w: an Exchange was opened as an operator; run plans with runtime.Run, which cuts them into stages", exec.ErrInternal)
}
