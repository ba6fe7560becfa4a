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
	var r SubpartitionReader
	if sl := buf.Slices(stage, task); sl != nil {
		r = buf.store.OpenSlices(sl)
	} else {
		switch buf.Kind() {
		case Hash:
			r = buf.store.Open(keygroup.Range(buf.Subpartitions, parallelism, task))
		case Forward:
			r = buf.store.OpenSlices([]keygroup.Slice{{Start: 0, End: 0, Producer: task, Parts: 1}})
		default:
			r = buf.store.Open(0, 0)
		}
	}
	return newCoalesceStream(&reader{r: r}, alloc, exec.BatchSize)
}
