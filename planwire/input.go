package planwire

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec"
)

// Input stands, in a fragment decoded alone, for the rows an input
// exchange carries from its producer stage: it is the exchange's child,
// with the rows' schema and nothing else. The runtime reads an input
// exchange through the exchange's reader and never opens its child in the
// consumer's stage, so opening an Input is an error.
type Input struct {
	// Exchange is the ID of the exchange, the producer fragment's output.
	Exchange int
	schema   *arrow.Schema
}

// Schema implements exec.Node.
func (in *Input) Schema() *arrow.Schema { return in.schema }

// Children implements exec.Node: the producer's tree is not part of the
// fragment.
func (in *Input) Children() []exec.Node { return nil }

// String implements exec.Node.
func (in *Input) String() string { return fmt.Sprintf("Input(exchange %d)", in.Exchange) }

// Open implements exec.Node: always an error (see Input).
func (in *Input) Open(*exec.TaskContext, []exec.Stream) (exec.Stream, error) {
	return nil, errs.New(errs.Internal, "%s is read through its exchange, never opened", in)
}
