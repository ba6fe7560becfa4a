package kernels

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/internal/mempool"
)

// validityOf returns an array's validity bitmap and its bit offset, or nil
// when every row is valid.
func validityOf(a arrow.Array) ([]byte, int) {
	if a.NullN() == 0 {
		return nil, 0
	}
	d := a.Data()
	b := d.Buffers()[0]
	if b == nil {
		return nil, 0
	}
	return b.Bytes(), d.Offset()
}

// anyNegative reports whether some index asks for a NULL row.
func anyNegative(idx []int32) bool {
	for _, j := range idx {
		if j < 0 {
			return true
		}
	}
	return false
}

// takeValidity gathers the validity of rows idx of a into a new bitmap,
// returning it and the number of NULL rows; it returns nil, 0 when every
// gathered row is valid (the input has no NULLs and no index is negative).
func takeValidity(alloc memory.Allocator, a arrow.Array, idx []int32, neg bool) (*memory.Buffer, int) {
	bits, off := validityOf(a)
	if bits == nil && !neg {
		return nil, 0
	}
	n := len(idx)
	buf := mempool.Buffer(alloc, int(bitutil.BytesForBits(int64(n))))
	out := buf.Bytes()
	clear(out)
	valid := 0
	if bits == nil {
		for i, j := range idx {
			if j >= 0 {
				out[i>>3] |= 1 << (i & 7)
				valid++
			}
		}
	} else {
		for i, j := range idx {
			if j >= 0 {
				k := int(j) + off
				if bits[k>>3]&(1<<(k&7)) != 0 {
					out[i>>3] |= 1 << (i & 7)
					valid++
				}
			}
		}
	}
	return buf, n - valid
}
