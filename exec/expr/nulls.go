package expr

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
)

// Every question "is row i NULL?" in fsql goes through IsNull or Validity.
// Arrow's own Array.IsNull reads the validity bitmap, and an array of the
// NULL type (SELECT NULL, a CASE with only NULL branches) has none: its
// IsNull answers false for every row although every row is NULL. NullN is
// right for such arrays (it is their length), so code that only counts
// NULLs may keep using it.

// IsNull reports whether row i of a is NULL, for every array type
// including arrow.NULL.
func IsNull(a arrow.Array, i int) bool {
	if a.DataType().ID() == arrow.NULL {
		return true
	}
	return a.IsNull(i)
}

// IsValid is !IsNull.
func IsValid(a arrow.Array, i int) bool { return !IsNull(a, i) }

// Validity returns a's validity bitmap and the bit offset of its row 0, or
// nil when a has no NULL, so hot loops test one bit (or nothing) per row.
// An array that is NULL in every row without a bitmap (the NULL type) gets
// an all-zero bitmap, so callers need no special case.
func Validity(a arrow.Array) ([]byte, int) {
	if a.NullN() == 0 {
		return nil, 0
	}
	if bits := a.NullBitmapBytes(); len(bits) > 0 {
		return bits, a.Data().Offset()
	}
	return make([]byte, bitutil.BytesForBits(int64(a.Len()))), 0
}

// BitValid reads a bitmap returned by Validity: row i is valid when bits
// is nil or its bit is set.
func BitValid(bits []byte, off, i int) bool { return bits == nil || bitutil.BitIsSet(bits, off+i) }
