package runtime

import (
	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/shuffle"
)

// sharedBuilds finds the hash joins of a stage's tree whose build side is
// a broadcast exchange, read whole by every task, and gives each a shared
// build: the stage's tasks then build its table once (exec.SharedBuild).
// Exchanges end the walk: below them is another stage. A co-partitioned
// join (copart, by its build input) builds its own table in each task.
func sharedBuilds(root exec.Node, budget *exec.MemoryBudget, copart map[*shuffle.Exchange]*CoPartitionedBuild) map[exec.Node]*exec.SharedBuild {
	var out map[exec.Node]*exec.SharedBuild
	var walk func(n exec.Node)
	walk = func(n exec.Node) {
		if _, ok := n.(*shuffle.Exchange); ok {
			return
		}
		if j, ok := n.(exec.BuildSharer); ok && j.SharesBuild() {
			if ex, ok := n.Children()[j.BuildInput()].(*shuffle.Exchange); ok && ex.Kind == shuffle.Broadcast && copart[ex] == nil {
				if out == nil {
					out = map[exec.Node]*exec.SharedBuild{}
				}
				out[n] = exec.NewSharedBuild(budget, "hash join build")
			}
		}
		for _, c := range n.Children() {
			walk(c)
		}
	}
	walk(root)
	return out
}

// closeShared ends the run's shared builds (idempotent).
func (r *StageRun) closeShared() {
	for _, b := range r.shared {
		b.Close()
	}
}
