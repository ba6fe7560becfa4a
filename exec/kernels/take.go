package kernels

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/errs"
)

// Take returns rows idx of a as a new array allocated from alloc; an index
// below zero yields a NULL row.
func Take(alloc memory.Allocator, a arrow.Array, idx []int32) (arrow.Array, error) {
	return take(alloc, a, idx, anyNegative(idx))
}

// TakeAll gathers rows idx of every column (one scan of idx for negative
// indexes, shared by all columns). On error nothing is left allocated.
func TakeAll(alloc memory.Allocator, cols []arrow.Array, idx []int32) ([]arrow.Array, error) {
	neg := anyNegative(idx)
	out := make([]arrow.Array, len(cols))
	for i, c := range cols {
		t, err := take(alloc, c, idx, neg)
		if err != nil {
			for _, o := range out[:i] {
				o.Release()
			}
			return nil, err
		}
		out[i] = t
	}
	return out, nil
}

// TakeBatch gathers rows idx of every column of b into a new batch of the
// same schema.
func TakeBatch(alloc memory.Allocator, b arrow.RecordBatch, idx []int32) (arrow.RecordBatch, error) {
	cols, err := TakeAll(alloc, b.Columns(), idx)
	if err != nil {
		return nil, err
	}
	out := array.NewRecordBatch(b.Schema(), cols, int64(len(idx)))
	for _, c := range cols {
		c.Release()
	}
	return out, nil
}

// take dispatches on the physical layout of a's type; neg says whether
// some index is negative.
func take(alloc memory.Allocator, a arrow.Array, idx []int32, neg bool) (arrow.Array, error) {
	dt := a.DataType()
	if ext, ok := dt.(arrow.ExtensionType); ok {
		s, err := take(alloc, a.(array.ExtensionArray).Storage(), idx, neg)
		if err != nil {
			return nil, err
		}
		defer s.Release()
		return array.NewExtensionArrayWithStorage(ext, s), nil
	}
	switch dt.ID() {
	case arrow.NULL:
		return array.NewNull(len(idx)), nil
	case arrow.BOOL:
		return takeBool(alloc, a, idx, neg), nil
	case arrow.STRING, arrow.BINARY:
		return takeVarBinary[int32](alloc, a, idx, neg)
	case arrow.LARGE_STRING, arrow.LARGE_BINARY:
		return takeVarBinary[int64](alloc, a, idx, neg)
	case arrow.DICTIONARY, arrow.EXTENSION:
		// Not a flat layout: handled by compute below.
	default:
		if fw, ok := dt.(arrow.FixedWidthDataType); ok {
			if out := takeFixed(alloc, a, fw.Bytes(), idx, neg); out != nil {
				return out, nil
			}
		}
	}
	return takeCompute(alloc, a, idx, neg)
}

// takeCompute gathers a type fsql never produces through arrow-go's
// compute Take, with negative indexes passed as NULL indexes.
func takeCompute(alloc memory.Allocator, a arrow.Array, idx []int32, neg bool) (arrow.Array, error) {
	ib := array.NewInt32Builder(alloc)
	defer ib.Release()
	ib.Reserve(len(idx))
	for _, j := range idx {
		if j < 0 {
			ib.UnsafeAppendBoolToBitmap(false)
		} else {
			ib.UnsafeAppend(j)
		}
	}
	ia := ib.NewArray()
	defer ia.Release()
	out, err := compute.TakeArray(compute.WithAllocator(context.Background(), alloc), a, ia)
	if err != nil {
		return nil, errs.Wrap(errs.Internal, "gathering rows of a %s column: %w", a.DataType(), err)
	}
	return out, nil
}
