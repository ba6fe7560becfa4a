package planner

import "github.com/fsql-dev/fsql/exec"

// window plans a Window: its input shuffled by the partition keys (or
// gathered, without any) and sorted by the window itself, unless the
// input is the output of a window planned in the same stage whose order
// and distribution already are what this one needs (windowServes, the
// order order_windows arranged): then it reads that output as it comes,
// presorted, with no exchange (q47's average over the rank's output,
// which is sorted by category, brand, store, company, year and month).
func (b *physBuilder) window(n *Window) (phys, error) {
	c, err := b.build(n.Child)
	if err != nil {
		return c, err
	}
	w := &exec.Window{Child: c.node, PartitionBy: n.PartitionBy, OrderBy: n.OrderBy, Funcs: n.Funcs, Frame: n.Frame}
	if below, ok := n.Child.(*Window); ok && b.parents[n.Child] < 2 {
		// Built in place (not a shared node behind a forward exchange),
		// so c.node is that window itself.
		if _, inline := c.node.(*exec.Window); inline && windowServes(below.PartitionBy, below.OrderBy, n.PartitionBy, n.OrderBy) {
			w.Presorted = true
			return phys{w, c.single}, nil
		}
	}
	single := c.single
	if !single {
		if len(n.PartitionBy) == 0 {
			w.Child, single = b.gather(c), true
		} else {
			w.Child = b.hash(c.node, n.PartitionBy)
		}
	}
	return phys{w, single}, nil
}
