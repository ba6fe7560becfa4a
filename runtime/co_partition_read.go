package runtime

import (
	"context"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/shuffle"
)

// open reads a co-partitioned join's broadcast build input buf for one
// attempt (spec): the build rows of the key groups its task reads of the
// probe side (see coPartition). With BuildRanges the pieces the build
// stage's tasks wrote are taken whole when inside the task's range,
// skipped when outside, and only the rest hashed and filtered
// (shuffle.FilterKeyGroups); without, every row is. A task that reads no
// whole key-group range of the probe side reads everything. wrap counts
// what each reader reads.
func (cp *CoPartitionedBuild) open(buf *shuffle.Buffer, spec *AttemptSpec, alloc memory.Allocator, wrap func(exec.Stream) exec.Stream) exec.Stream {
	start, end, kgs, ok := cp.taskRange(spec.Inputs, spec.Stage, spec.Task, spec.Parallelism)
	if !ok {
		return wrap(shuffle.OpenReader(buf, spec.Stage, spec.Task, spec.Parallelism, alloc))
	}
	if len(cp.BuildRanges) == 0 || len(cp.BuildRanges) != buf.Producers || cp.BuildKeyGroups != kgs {
		return shuffle.FilterKeyGroups(wrap(shuffle.OpenReader(buf, spec.Stage, spec.Task, spec.Parallelism, alloc)), cp.Keys, kgs, start, end, alloc)
	}
	var inside, partly []int
	for u, r := range cp.BuildRanges {
		switch {
		case r.OK && r.Start >= start && r.End <= end:
			inside = append(inside, u)
		case r.OK && (r.End < start || r.Start > end):
			// none of its rows is in the task's key groups
		default:
			partly = append(partly, u)
		}
	}
	var parts []exec.Stream
	if len(inside) > 0 {
		parts = append(parts, wrap(shuffle.OpenProducersReader(buf, inside, alloc)))
	}
	if len(partly) > 0 {
		parts = append(parts, shuffle.FilterKeyGroups(wrap(shuffle.OpenProducersReader(buf, partly, alloc)), cp.Keys, kgs, start, end, alloc))
	}
	return &pieceStream{parts: parts}
}

// pieceStream reads its streams one after the other, closing each at its
// end.
type pieceStream struct {
	parts []exec.Stream
}

func (p *pieceStream) Next(ctx context.Context) (arrow.RecordBatch, error) {
	for len(p.parts) > 0 {
		b, err := p.parts[0].Next(ctx)
		if err == io.EOF {
			p.parts[0].Close()
			p.parts = p.parts[1:]
			continue
		}
		return b, err
	}
	return nil, io.EOF
}

func (p *pieceStream) Close() {
	for _, s := range p.parts {
		s.Close()
	}
	p.parts = nil
}
