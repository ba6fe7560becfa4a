package shuffle

import (
	"context"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/shuffle/keygroup"
)

// reader is the consumer side of an exchange in one task: the reader of
// its key-group range, with small batches coalesced.
type reader struct {
	r      SubpartitionReader
	closed bool
}

func (s *reader) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if s.closed {
		return nil, io.EOF
	}
	return s.r.Next(ctx)
}

func (s *reader) Close() {
	if !s.closed {
		s.closed = true
		s.r.Close()
	}
}

// OpenReader opens task's share of buf for consumer stage (of parallelism
// tasks): the slices the runtime set for it, else its count-based
// key-group range of a hash exchange, its producer's output of a forward
// edge, everything of a broadcast or gather. Small batches are glued to about exec.BatchSize rows.
func OpenReader(buf *Buffer, stage, task, parallelism int, alloc memory.Allocator) exec.Stream {
	r := buf.store.OpenSlices(buf.taskSlices(stage, task, parallelism))
	return newCoalesceStream(&reader{r: r}, alloc, exec.BatchSize)
}

// OpenProducersReader opens everything the given producer tasks wrote to
// buf, in order, whatever the consumer's own share: a co-partitioned
// join (runtime/co_partition.go) reads of its broadcast build side only
// the producers' pieces whose key groups its task needs. Small batches
// are glued to about exec.BatchSize rows.
func OpenProducersReader(buf *Buffer, producers []int, alloc memory.Allocator) exec.Stream {
	slices := make([]keygroup.Slice, len(producers))
	for i, p := range producers {
		slices[i] = keygroup.Slice{Start: 0, End: max(buf.Subpartitions, 1) - 1, Producer: p, Parts: 1}
	}
	return newCoalesceStream(&reader{r: buf.store.OpenSlices(slices)}, alloc, exec.BatchSize)
}
