package exec

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// OrderEnforce passes its child through unchanged; it carries no data. It
// exists for the stage cut: the runtime makes the stage holding it wait
// until the stages holding its After collectors have finished, so a
// dynamically pruned scan below it sees complete filters. The planner
// puts it directly above the fact scan whose Scan.Dynamic reads those
// collectors.
type OrderEnforce struct {
	Child Node
	After []*DynamicFilterDataCollector
}

// Schema implements Node.
func (o *OrderEnforce) Schema() *arrow.Schema { return o.Child.Schema() }

// Children implements Node. The collectors are not children: no data
// flows from them, only the ordering edge the runtime adds (it reads
// WaitsForCollectors).
func (o *OrderEnforce) Children() []Node { return []Node{o.Child} }

// WaitsForCollectors implements DynamicFilterConsumer: the collectors of
// After, by ID (-1 for a nil entry, which the job graph refuses).
func (o *OrderEnforce) WaitsForCollectors() []int {
	ids := make([]int, len(o.After))
	for i, c := range o.After {
		ids[i] = -1
		if c != nil {
			ids[i] = c.ID
		}
	}
	return ids
}

// String implements Node.
func (o *OrderEnforce) String() string {
	ids := make([]string, len(o.After))
	for i, c := range o.After {
		if c == nil {
			ids[i] = "?"
			continue
		}
		ids[i] = fmt.Sprint(c.ID)
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
