package runtime

import (
	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/shuffle"
)

// keyGroups is what the task context tells a node about how its inputs
// were shuffled to this task (exec.KeyGroups): set when every child is a
// hash exchange of which the task reads the same whole key groups, so a
// hash join that spills can partition by them; nil otherwise.
func (o *opener) keyGroups(kids []exec.Node) *exec.KeyGroups {
	var kg *exec.KeyGroups
	for _, c := range kids {
		ex, ok := c.(*shuffle.Exchange)
		if !ok || ex.Kind != shuffle.Hash {
			return nil
		}
		buf := o.spec.Inputs[ex]
		if buf == nil {
			return nil
		}
		start, end, ok := buf.TaskKeyGroups(o.spec.Stage, o.spec.Task, o.spec.Parallelism)
		if !ok {
			return nil
		}
		if kg == nil {
			kg = &exec.KeyGroups{Start: start, End: end, Count: buf.Subpartitions}
		} else if kg.Start != start || kg.End != end || kg.Count != buf.Subpartitions {
			return nil
		}
		kg.Keys = append(kg.Keys, ex.Keys)
	}
	return kg
}
