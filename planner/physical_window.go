package planner

import "github.com/fsql-dev/fsql/exec"

// window plans a Window: its input shuffled by the partition keys (or
// gathered, without any) and sorted by the window itself, unless the
// input is the output of a window planned in the same stage whose order
// and distribution already are what this one needs (windowServes, the
// order order_windows arranged): then it reads that output as it comes,
// presorted, with no exchange (q47's average over the rank's output,
// which is sorted by category, brand, store, company, year and month).
//
// A rank limit (rankLimit: the filter above keeps rows ranked at most K)
// is the window's to apply as it sorts, and, below an exchange, each
// producing task's too (exec.WindowGroupLimit), so the exchange carries
// at most K rows of a partition per task.
func (b *physBuilder) window(n *Window, lim *exec.RankLimit) (phys, error) {
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
	w.Limit = lim
	single := c.single
	if !single {
		in := c.node
		if lim != nil {
			in = &exec.WindowGroupLimit{Child: in, PartitionBy: n.PartitionBy, OrderBy: n.OrderBy, Limit: *lim}
		}
		if len(n.PartitionBy) == 0 {
			w.Child, single = b.gather(phys{in, false}), true
		} else {
			w.Child = b.hash(in, n.PartitionBy)
		}
	}
	return phys{w, single}, nil
}
