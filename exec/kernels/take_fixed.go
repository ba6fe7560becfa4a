package kernels

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/internal/mempool"
)

// gather copies src[idx[i]] to dst[i]; a negative index writes the zero
// value (the row is NULL, but its bytes stay deterministic).
func gather[T any](dst, src []T, idx []int32) {
	var zero T
	for i, j := range idx {
		if j >= 0 {
			dst[i] = src[j]
		} else {
			dst[i] = zero
		}
	}
}

// gatherAll is gather for index lists without negative indexes.
func gatherAll[T any](dst, src []T, idx []int32) {
	for i, j := range idx {
		dst[i] = src[j]
	}
}

func gatherTyped[T any](dst, src []T, idx []int32, neg bool) {
	if neg {
		gather(dst, src, idx)
	} else {
		gatherAll(dst, src, idx)
	}
}

// takeFixed gathers a fixed-width column of w bytes per value, or returns
// nil for widths without a typed loop (the caller falls back).
func takeFixed(alloc memory.Allocator, a arrow.Array, w int, idx []int32, neg bool) arrow.Array {
	d := a.Data()
	if len(d.Buffers()) != 2 || d.Buffers()[1] == nil && a.Len() > 0 {
		return nil
	}
	switch w {
	case 1, 2, 4, 8, 16, 32:
	default:
		return nil
	}
	n := len(idx)
	vb := mempool.Buffer(alloc, n*w) // every value is written below
	dst := vb.Bytes()
	var src []byte
	if a.Len() > 0 {
		src = d.Buffers()[1].Bytes()[d.Offset()*w : (d.Offset()+d.Len())*w]
	}
	switch w {
	case 1:
		gatherTyped(dst, src, idx, neg)
	case 2:
		gatherTyped(arrow.GetData[uint16](dst), arrow.GetData[uint16](src), idx, neg)
	case 4:
		gatherTyped(arrow.GetData[uint32](dst), arrow.GetData[uint32](src), idx, neg)
	case 8:
		gatherTyped(arrow.GetData[uint64](dst), arrow.GetData[uint64](src), idx, neg)
	case 16:
		gatherTyped(arrow.GetData[decimal128.Num](dst), arrow.GetData[decimal128.Num](src), idx, neg)
	case 32:
		gatherTyped(arrow.GetData[decimal256.Num](dst), arrow.GetData[decimal256.Num](src), idx, neg)
	}
	nb, nulls := takeValidity(alloc, a, idx, neg)
	return newArray(a.DataType(), n, nb, vb, nil, nulls)
}

// newArray wraps buffers (validity may be nil; extra may be nil) into an
// array and drops the caller's references to them.
func newArray(dt arrow.DataType, n int, validity, b1, b2 *memory.Buffer, nulls int) arrow.Array {
	bufs := []*memory.Buffer{validity, b1}
	if b2 != nil {
		bufs = append(bufs, b2)
	}
	data := array.NewData(dt, n, bufs, nil, nulls, 0)
	out := array.MakeFromData(data)
	data.Release()
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
	return out
}
