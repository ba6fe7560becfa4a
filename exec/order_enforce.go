package exec

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// OrderEnforce passes its child through unchanged; it carries no data. It
// exists for the stage cut: the runtime makes the stage holding it wait
// until the stages holding the collectors whose IDs After lists have
// finished, so a dynamically pruned scan below it sees complete filters.
// The planner puts it directly above the fact scan whose DynamicFilters
// read those collectors. It names them by ID, not by node: they live in
// other stages, and a plan fragment holds only its own stage's nodes.
type OrderEnforce struct {
	Child Node
	After []int
}

// Schema implements Node.
func (o *OrderEnforce) Schema() *arrow.Schema { return o.Child.Schema() }

// Children implements Node. The collectors are not children: no data
// flows from them, only the ordering edge the runtime adds (it reads
// WaitsForCollectors).
func (o *OrderEnforce) Children() []Node { return []Node{o.Child} }

// WaitsForCollectors implements DynamicFilterConsumer: the collectors of
// After.
func (o *OrderEnforce) WaitsForCollectors() []int { return append([]int(nil), o.After...) }

// String implements Node.
func (o *OrderEnforce) String() string {
	ids := make([]string, len(o.After))
	for i, id := range o.After {
		ids[i] = fmt.Sprint(id)
	}
	return fmt.Sprintf("OrderEnforce(after collector %s)", strings.Join(ids, ", "))
}

// Open implements Node: the child's stream is the node's stream.
func (o *OrderEnforce) Open(_ *TaskContext, inputs []Stream) (Stream, error) {
	if len(inputs) != 1 {
		return nil, fmt.Errorf("%w: OrderEnforce wants 1 input, got %d", ErrInternal, len(inputs))
	}
	return inputs[0], nil
}
