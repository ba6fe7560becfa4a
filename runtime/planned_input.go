package runtime

import (
	"context"

	"github.com/fsql-dev/fsql/exec"
)

// plannedInput is the input bytes of each of the p tasks of stage run r,
// known before they start: what each reads of every exchange input (its
// slices, key-group range, forward producer, or the whole of a broadcast
// or gather input; shuffle.Buffer.TaskBytes) plus its share of the
// splits of the stage's sized sources (exec.TaskSizedSource). The
// attempts' progress is measured against it in the same units: readers
// report the Arrow bytes of the batches they hand out, scans the
// compressed bytes of the row groups they decode.
func (s *scheduler) plannedInput(ctx context.Context, r *StageRun, p int) ([]int64, error) {
	out := make([]int64, p)
	st := r.Stage
	for _, ex := range st.Inputs {
		b := s.buffers[ex]
		if b == nil {
			continue
		}
		for i := range out {
			out[i] += b.TaskBytes(st.ID, i, p)
		}
	}
	tc := s.services
	tc.Stage = st.ID
	var err error
	walkStage(st.Root, func(n exec.Node) {
		src, ok := n.(exec.TaskSizedSource)
		if !ok || err != nil {
			return
		}
		per, e := src.TaskInputBytes(ctx, &tc, p)
		if e != nil {
			err = e
			return
		}
		for i := range out {
			if i < len(per) {
				out[i] += per[i]
			}
		}
	})
	return out, err
}
