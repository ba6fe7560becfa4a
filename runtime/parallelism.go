package runtime

import (
	"context"

	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/runtime/policy"
	"github.com/fsql-dev/fsql/shuffle"
)

// stageInput adds up what decides stage s's parallelism: its inputs'
// bytes as producers wrote them, and what its sized sources will read.
// est, when not nil, holds for input i still being written the bytes it
// is expected to end with (hybrid shuffle), used instead of its committed
// bytes.
func stageInput(ctx context.Context, s *Stage, bufs []*shuffle.Buffer, est []int64, tc *exec.TaskContext) (policy.ParallelismInput, error) {
	in := policy.ParallelismInput{Single: needsSingleTask(s)}
	for i, b := range bufs {
		if b == nil {
			continue
		}
		switch b.Kind() {
		case shuffle.Hash:
			if i < len(est) && est[i] > 0 {
				in.Bytes += est[i]
			} else {
				in.Bytes += b.TotalBytes()
			}
			in.KeyGroups = b.Subpartitions
		case shuffle.Broadcast:
			in.BroadcastBytes += b.TotalBytes()
		default:
			in.Bytes += b.TotalBytes()
		}
	}
	var err error
	walkStage(s.Root, func(n exec.Node) {
		src, ok := n.(exec.SizedSource)
		if !ok || err != nil {
			return
		}
		nb, nf, e := src.SourceSize(ctx, tc)
		if e != nil {
			err = e
			return
		}
		in.Bytes += nb
		in.Files += nf
	})
	return in, err
}

// decideParallelism picks a stage's task count when it is scheduled, after
// its inputs are complete, and records why on r.Decision. Adaptive: from
// the bytes its producers wrote or the files it scans, and the slots
// (policy.DecideParallelism: freeSlots are free and unclaimed now, slots
// the capacity its tasks may queue for); otherwise the run's fixed
// parallelism. Either way 1 where more tasks would repeat rows.
func decideParallelism(ctx context.Context, r *StageRun, bufs []*shuffle.Buffer, est []int64, cfg *RunConfig, services *exec.TaskContext, freeSlots, slots int) (int, error) {
	s := r.Stage
	var in policy.ParallelismInput
	if cfg.Adaptive.Enabled {
		tc := *services
		tc.Stage = s.ID
		var err error
		if in, err = stageInput(ctx, s, bufs, est, &tc); err != nil {
			return 0, err
		}
		in.FreeSlots, in.Slots = freeSlots, slots
	} else {
		in.Single = needsSingleTask(s)
	}
	d := policy.DecideParallelism(in, cfg.Adaptive, cfg.Parallelism)
	r.Decision = &d
	return d.Parallelism, nil
}
