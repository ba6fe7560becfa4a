package mempool

import "github.com/apache/arrow-go/v18/arrow/memory"

// Buffer returns a buffer of size bytes for a caller that writes every
// one of them before anyone reads it (a gather, a copy, a bitmap it
// clears or fills itself). From a Pool, recycled memory is not cleared
// first: clearing buffers that are overwritten at once was 13% of q78's
// CPU samples (memclrNoHeapPointers under Pool.Allocate and large Go
// allocations). Any other allocator is asked as usual (zeroed, and
// counted by checked allocators). The buffer goes back to alloc when its
// last reference is released, like one from memory.NewResizableBuffer.
func Buffer(alloc memory.Allocator, size int) *memory.Buffer {
	if p, ok := alloc.(*Pool); ok {
		return memory.NewBufferWithAllocator(p.AllocateUninit(size), p)
	}
	b := memory.NewResizableBuffer(alloc)
	b.Resize(size)
	return b
}
