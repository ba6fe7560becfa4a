package mempool

import (
	"math/bits"
	"sync"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

const (
	minShift = 6  // 64 bytes: Arrow's alignment, and the smallest class
	maxShift = 26 // 64 MiB: bigger buffers come from the Go allocator, unpooled
	// alignment is Arrow's buffer alignment.
	alignment = 1 << minShift
	// poisonByte fills freed buffers when Pool.Poison is set.
	poisonByte = 0xA5
)

// Pool is a memory.Allocator that recycles freed buffers by size class.
// Allocate returns zeroed memory like memory.GoAllocator, 64-byte aligned.
// The zero value is not usable; call New. Safe for concurrent use.
type Pool struct {
	classes [maxShift - minShift + 1]sync.Pool
	// Poison, when set before first use, overwrites every freed buffer so
	// that reads after Release return garbage rather than plausible data.
	// For tests.
	Poison bool
}

var _ memory.Allocator = (*Pool)(nil)

// New returns an empty pool.
func New() *Pool { return &Pool{} }

// class returns the size class index for size and its capacity, or -1 when
// size is too big to pool.
func class(size int) (int, int) {
	if size <= alignment {
		return 0, alignment
	}
	shift := bits.Len(uint(size - 1))
	if shift > maxShift {
		return -1, 0
	}
	return shift - minShift, 1 << shift
}

// AllocateUninit returns a buffer of size bytes whose contents are
// undefined (a recycled buffer keeps its previous bytes). Only for callers
// that overwrite every byte they expose; the buffer goes back with Free.
func (p *Pool) AllocateUninit(size int) []byte {
	c, capacity := class(size)
	if c < 0 {
		return alignedMake(size)
	}
	if v := p.classes[c].Get(); v != nil {
		return (*v.(*[]byte))[:size]
	}
	return alignedMake(capacity)[:size]
}

// Allocate returns size zeroed bytes.
func (p *Pool) Allocate(size int) []byte {
	b := p.AllocateUninit(size)
	clear(b)
	return b
}

// Reallocate grows or shrinks b to size bytes, keeping its contents; bytes
// past the old length are zero.
func (p *Pool) Reallocate(size int, b []byte) []byte {
	if size <= cap(b) {
		if size > len(b) {
			clear(b[len(b):size])
		}
		return b[:size]
	}
	nb := p.AllocateUninit(size)
	n := copy(nb, b)
	clear(nb[n:])
	p.Free(b)
	return nb
}

// Free returns b to its size class. Buffers this pool did not allocate are
// recognised by their capacity and left to the garbage collector.
func (p *Pool) Free(b []byte) {
	c := cap(b)
	if c < alignment || c&(c-1) != 0 || c > 1<<maxShift {
		return
	}
	b = b[:c]
	if uintptr(unsafe.Pointer(unsafe.SliceData(b)))&(alignment-1) != 0 {
		return
	}
	if p.Poison {
		for i := range b {
			b[i] = poisonByte
		}
	}
	p.classes[bits.Len(uint(c))-1-minShift].Put(&b)
}

// alignedMake returns size bytes aligned to 64 with capacity exactly size
// (power-of-two sizes from the Go allocator are aligned already; the
// fallback keeps this correct if that ever changes).
func alignedMake(size int) []byte {
	b := make([]byte, size)
	if uintptr(unsafe.Pointer(unsafe.SliceData(b)))&(alignment-1) == 0 {
		return b
	}
	b = make([]byte, size+alignment)
	shift := int(-uintptr(unsafe.Pointer(unsafe.SliceData(b))) & (alignment - 1))
	return b[shift : shift+size : shift+size]
}
