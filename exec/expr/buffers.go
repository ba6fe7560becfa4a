package expr

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/internal/mempool"
)

// fixedOut is a fixed-width result array under construction: a value
// slice and a validity bitmap, both allocated with the context allocator,
// written in place by kernels (no builders, no per-value calls).
type fixedOut[T arrow.FixedWidthType] struct {
	typ   arrow.DataType
	n     int
	data  *memory.Buffer
	valid *memory.Buffer
	vals  []T
	bits  []byte
}

// newFixed allocates an all-valid result of n values of typ.
func newFixed[T arrow.FixedWidthType](alloc memory.Allocator, typ arrow.DataType, n int) *fixedOut[T] {
	o := &fixedOut[T]{typ: typ, n: n}
	o.data = memory.NewResizableBuffer(alloc)
	o.data.Resize(n * int(sizeOf[T]()))
	o.vals = arrow.GetData[T](o.data.Bytes())[:n]
	o.valid = mempool.Buffer(alloc, int(bitutil.BytesForBits(int64(n)))) // filled below
	o.bits = o.valid.Bytes()
	for i := range o.bits {
		o.bits[i] = 0xff
	}
	return o
}

func sizeOf[T arrow.FixedWidthType]() uintptr {
	var z T
	switch any(z).(type) {
	case int8, uint8, bool:
		return 1
	case int16, uint16:
		return 2
	case int32, uint32, float32, arrow.Date32:
		return 4
	case int64, uint64, float64, arrow.Date64, arrow.Timestamp:
		return 8
	default:
		return 16
	}
}

// andValidity clears the result's validity wherever one of arrs is NULL.
func (o *fixedOut[T]) andValidity(arrs ...arrow.Array) { andValidity(o.bits, arrs...) }

func (o *fixedOut[T]) setNull(i int) { bitutil.ClearBit(o.bits, i) }

func (o *fixedOut[T]) isValid(i int) bool { return bitutil.BitIsSet(o.bits, i) }

// finish turns the buffers into an array; the validity bitmap is dropped
// when there is no NULL.
func (o *fixedOut[T]) finish() arrow.Array {
	return finishArray(o.typ, o.n, o.valid, o.data)
}

// release frees the buffers of a result abandoned on error.
func (o *fixedOut[T]) release() {
	o.data.Release()
	o.valid.Release()
}

// boolOut is a Boolean result under construction: value and validity bitmaps.
type boolOut struct {
	n     int
	data  *memory.Buffer
	valid *memory.Buffer
	vals  []byte
	bits  []byte
}

func newBool(alloc memory.Allocator, n int) *boolOut {
	o := &boolOut{n: n}
	nb := int(bitutil.BytesForBits(int64(n)))
	// Both bitmaps are filled here, so recycled memory needs no clearing.
	o.data = mempool.Buffer(alloc, nb)
	o.vals = o.data.Bytes()
	for i := range o.vals {
		o.vals[i] = 0
	}
	o.valid = mempool.Buffer(alloc, nb)
	o.bits = o.valid.Bytes()
	for i := range o.bits {
		o.bits[i] = 0xff
	}
	return o
}

func (o *boolOut) set(i int, v bool) {
	if v {
		bitutil.SetBit(o.vals, i)
	} else {
		bitutil.ClearBit(o.vals, i)
	}
}
func (o *boolOut) setNull(i int)                   { bitutil.ClearBit(o.bits, i) }
func (o *boolOut) andValidity(arrs ...arrow.Array) { andValidity(o.bits, arrs...) }
func (o *boolOut) finish() arrow.Array {
	return finishArray(arrow.FixedWidthTypes.Boolean, o.n, o.valid, o.data)
}

func andValidity(bits []byte, arrs ...arrow.Array) {
	for _, a := range arrs {
		if a.NullN() == 0 {
			continue
		}
		if a.NullN() == a.Len() {
			for i := range bits {
				bits[i] = 0
			}
			return
		}
		nb := a.NullBitmapBytes()
		if nb == nil {
			continue
		}
		bitutil.BitmapAnd(bits, nb, 0, int64(a.Data().Offset()), bits, 0, int64(a.Len()))
	}
}

func finishArray(typ arrow.DataType, n int, valid, data *memory.Buffer) arrow.Array {
	nulls := n - bitutil.CountSetBits(valid.Bytes(), 0, n)
	if nulls == 0 {
		valid.Release()
		valid = nil
	}
	d := array.NewData(typ, n, []*memory.Buffer{valid, data}, nil, nulls, 0)
	if valid != nil {
		valid.Release()
	}
	data.Release()
	defer d.Release()
	return array.MakeFromData(d)
}

// vals returns the value slice of a fixed-width array (offset applied).
func vals[T arrow.FixedWidthType](a arrow.Array) []T {
	if a.Len() > 0 && a.NullN() == a.Len() {
		// An all-NULL array (e.g. from array.MakeArrayOfNull) may carry a
		// value buffer shorter than its length; its values are never read.
		return make([]T, a.Len())
	}
	v := arrow.GetValues[T](a.Data(), 1)
	if v == nil {
		return make([]T, a.Len())
	}
	return v
}

// validAt reports whether row i of a is not NULL, cheaply when a has no NULL.
func validAt(a arrow.Array, i int) bool {
	return a.NullN() == 0 || IsValid(a, i)
}

func releaseAll(arrs []arrow.Array) {
	for _, a := range arrs {
		if a != nil {
			a.Release()
		}
	}
}
