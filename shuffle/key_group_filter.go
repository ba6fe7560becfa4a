package shuffle

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/shuffle/keygroup"
)

// FilterKeyGroups re-splits a stream read whole (a broadcast input) by
// key group at read time: it passes on only the rows whose key group,
// computed from keys exactly as a hash exchange's writer computes it
// (keygroup.ForHash(exec.HashColumns(keys), keyGroups)), lies in
// start..end. A co-partitioned join (runtime/co_partition.go) reads its
// planned broadcast build side through it, so each task builds only the
// build rows of the key groups its probe side holds. The keys must hash
// as the probe side's exchange keys do (same types); rows with a NULL key
// go to the key group of NULL's hash, like any other value (a join never
// matches them). It owns in and closes it.
func FilterKeyGroups(in exec.Stream, keys []expr.Expr, keyGroups, start, end int, alloc memory.Allocator) exec.Stream {
	return &keyGroupFilter{in: in, keys: keys, keyGroups: keyGroups, start: start, end: end, alloc: alloc, ectx: &expr.Context{Alloc: alloc}}
}

type keyGroupFilter struct {
	in                    exec.Stream
	keys                  []expr.Expr
	keyGroups, start, end int
	alloc                 memory.Allocator
	ectx                  *expr.Context
	hashes                []uint32
	idx                   []int32
	closed                bool
}

func (f *keyGroupFilter) Next(ctx context.Context) (arrow.RecordBatch, error) {
	for {
		b, err := f.in.Next(ctx)
		if err != nil {
			return nil, err
		}
		out, err := f.filter(b)
		if err != nil || out != nil {
			return out, err
		}
	}
}

// filter returns b's rows of the range (b itself when all are), or nil
// when none are; it releases b unless it returns it.
func (f *keyGroupFilter) filter(b arrow.RecordBatch) (arrow.RecordBatch, error) {
	n := int(b.NumRows())
	if n == 0 {
		b.Release()
		return nil, nil
	}
	cols := make([]arrow.Array, 0, len(f.keys))
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	for _, k := range f.keys {
		a, err := k.Eval(f.ectx, b)
		if err != nil {
			b.Release()
			return nil, err
		}
		cols = append(cols, a)
	}
	if cap(f.hashes) < n {
		f.hashes = make([]uint32, n)
		f.idx = make([]int32, n)
	}
	hashes := f.hashes[:n]
	exec.HashColumns(cols, hashes)
	idx := f.idx[:0]
	for i, h := range hashes {
		if kg := keygroup.ForHash(h, f.keyGroups); kg >= f.start && kg <= f.end {
			idx = append(idx, int32(i))
		}
	}
	switch len(idx) {
	case n:
		return b, nil
	case 0:
		b.Release()
		return nil, nil
	}
	out, err := takeBatch(f.alloc, b, idx)
	b.Release()
	return out, err
}

func (f *keyGroupFilter) Close() {
	if !f.closed {
		f.closed = true
		f.in.Close()
	}
}
