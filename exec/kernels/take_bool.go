package kernels

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/internal/mempool"
)

// takeBool gathers a bit-packed boolean column; a NULL row's value bit is
// left clear.
func takeBool(alloc memory.Allocator, a arrow.Array, idx []int32, neg bool) arrow.Array {
	d := a.Data()
	n := len(idx)
	vb := mempool.Buffer(alloc, int(bitutil.BytesForBits(int64(n))))
	dst := vb.Bytes()
	clear(dst)
	if a.Len() > 0 {
		src, off := d.Buffers()[1].Bytes(), d.Offset()
		for i, j := range idx {
			if j >= 0 {
				k := int(j) + off
				if src[k>>3]&(1<<(k&7)) != 0 {
					dst[i>>3] |= 1 << (i & 7)
				}
			}
		}
	}
	nb, nulls := takeValidity(alloc, a, idx, neg)
	return newArray(a.DataType(), n, nb, vb, nil, nulls)
}
