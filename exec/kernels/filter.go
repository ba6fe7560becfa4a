package kernels

import (
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Selection appends to sel the positions of the rows where mask is valid
// and true (a selection vector) and returns it; pass a reused slice to
// avoid allocating.
func Selection(mask *array.Boolean, sel []int32) []int32 {
	n := mask.Len()
	if n == 0 {
		return sel
	}
	d := mask.Data()
	off := d.Offset()
	vals := d.Buffers()[1].Bytes()
	var valid []byte
	if mask.NullN() > 0 && d.Buffers()[0] != nil {
		valid = d.Buffers()[0].Bytes()
	}
	if off%8 != 0 {
		for i := 0; i < n; i++ {
			k := i + off
			if vals[k>>3]&(1<<(k&7)) != 0 && (valid == nil || valid[k>>3]&(1<<(k&7)) != 0) {
				sel = append(sel, int32(i))
			}
		}
		return sel
	}
	vals = vals[off/8:]
	if valid != nil {
		valid = valid[off/8:]
	}
	return selectBits(vals, valid, n, sel)
}

// SelectionBits appends to sel the positions of the set bits among the
// first n of bitmap and returns it.
func SelectionBits(bitmap []byte, n int, sel []int32) []int32 {
	return selectBits(bitmap, nil, n, sel)
}

// selectBits appends the positions of the first n bits set in vals and,
// when valid is not nil, in valid too.
func selectBits(vals, valid []byte, n int, sel []int32) []int32 {
	for byteIdx := 0; byteIdx*8 < n; byteIdx++ {
		b := vals[byteIdx]
		if valid != nil {
			b &= valid[byteIdx]
		}
		if rest := n - byteIdx*8; rest < 8 {
			b &= byte(1)<<rest - 1
		}
		for b != 0 {
			sel = append(sel, int32(byteIdx*8+bits.TrailingZeros8(b)))
			b &= b - 1
		}
	}
	return sel
}

// CountTrue counts the rows where mask is valid and true.
func CountTrue(mask *array.Boolean) int {
	n := mask.Len()
	if n == 0 {
		return 0
	}
	d := mask.Data()
	off := d.Offset()
	vals := d.Buffers()[1].Bytes()
	var valid []byte
	if mask.NullN() > 0 && d.Buffers()[0] != nil {
		valid = d.Buffers()[0].Bytes()
	}
	count := 0
	if off%8 != 0 {
		for i := 0; i < n; i++ {
			k := i + off
			if vals[k>>3]&(1<<(k&7)) != 0 && (valid == nil || valid[k>>3]&(1<<(k&7)) != 0) {
				count++
			}
		}
		return count
	}
	vals = vals[off/8:]
	if valid != nil {
		valid = valid[off/8:]
	}
	for byteIdx := 0; byteIdx*8 < n; byteIdx++ {
		b := vals[byteIdx]
		if valid != nil {
			b &= valid[byteIdx]
		}
		if rest := n - byteIdx*8; rest < 8 {
			b &= byte(1)<<rest - 1
		}
		count += bits.OnesCount8(b)
	}
	return count
}

// Filter returns the rows of a where mask is valid and true, as a new
// array.
func Filter(alloc memory.Allocator, a arrow.Array, mask *array.Boolean) (arrow.Array, error) {
	return take(alloc, a, Selection(mask, nil), false)
}

// FilterBatch returns the rows of b where mask is valid and true, and
// their selection vector (built in sel's storage, so a caller that keeps
// it allocates once), as SelectBatch does.
func FilterBatch(alloc memory.Allocator, b arrow.RecordBatch, mask *array.Boolean, sel []int32) (arrow.RecordBatch, []int32, error) {
	sel = Selection(mask, sel[:0])
	out, err := SelectBatch(alloc, b, sel)
	return out, sel, err
}

// SelectBatch returns rows sel (ascending, no repeats) of b. It copies
// only when it must: with no row kept it returns nil; with every row
// kept, b itself (retained); with the kept rows one run covering at least
// half of b, a zero-copy slice of b (a smaller run is copied, so that a
// few rows do not hold a whole batch's buffers); otherwise the kept rows
// gathered into new buffers from alloc.
func SelectBatch(alloc memory.Allocator, b arrow.RecordBatch, sel []int32) (arrow.RecordBatch, error) {
	kept := len(sel)
	switch {
	case kept == 0:
		return nil, nil
	case int64(kept) == b.NumRows():
		b.Retain()
		return b, nil
	case int(sel[kept-1]-sel[0])+1 == kept && 2*int64(kept) >= b.NumRows():
		return b.NewSlice(int64(sel[0]), int64(sel[kept-1])+1), nil
	}
	cols := make([]arrow.Array, b.NumCols())
	for i, c := range b.Columns() {
		t, err := take(alloc, c, sel, false)
		if err != nil {
			for _, o := range cols[:i] {
				o.Release()
			}
			return nil, err
		}
		cols[i] = t
	}
	out := array.NewRecordBatch(b.Schema(), cols, int64(kept))
	for _, c := range cols {
		c.Release()
	}
	return out, nil
}
