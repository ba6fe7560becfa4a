package mempool

import (
	"bytes"
	"sync"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func aligned(b []byte) bool {
	return uintptr(unsafe.Pointer(unsafe.SliceData(b)))%64 == 0
}

func TestAllocateIsZeroedAlignedAndRecycled(t *testing.T) {
	p := New()
	for _, size := range []int{0, 1, 63, 64, 65, 1000, 4096, 40000, 1 << 20} {
		b := p.Allocate(size)
		if len(b) != size || !aligned(b) {
			t.Fatalf("size %d: len %d, aligned %v", size, len(b), aligned(b))
		}
		for i := range b {
			b[i] = 0xFF
		}
		p.Free(b)
		c := p.Allocate(size)
		if !bytes.Equal(c, make([]byte, size)) {
			t.Fatalf("size %d: recycled buffer not zeroed", size)
		}
		if !aligned(c) {
			t.Fatalf("size %d: recycled buffer not aligned", size)
		}
		p.Free(c)
	}
}

func TestReallocateKeepsContentsAndZeroesGrowth(t *testing.T) {
	p := New()
	b := p.Allocate(100)
	for i := range b {
		b[i] = byte(i)
	}
	b = b[:50] // shrink within capacity, then grow back: growth must be zero
	b = p.Reallocate(100, b)
	for i := 50; i < 100; i++ {
		if b[i] != 0 {
			t.Fatalf("byte %d = %d after growth within capacity", i, b[i])
		}
	}
	b = p.Reallocate(5000, b) // past the class: moves
	for i := range 50 {
		if b[i] != byte(i) {
			t.Fatalf("byte %d lost on reallocation", i)
		}
	}
	for i := 50; i < 5000; i++ {
		if b[i] != 0 {
			t.Fatalf("byte %d = %d after reallocation", i, b[i])
		}
	}
	p.Free(b)
}

func TestHugeAndForeignBuffers(t *testing.T) {
	p := New()
	b := p.Allocate(1<<maxShift + 1)
	if len(b) != 1<<maxShift+1 || !aligned(b) {
		t.Fatal("huge buffer")
	}
	p.Free(b)
	p.Free(make([]byte, 100)) // not a class size: ignored
	p.Free(nil)
}

func TestPoisonOnFree(t *testing.T) {
	p := New()
	p.Poison = true
	b := p.Allocate(128)
	keep := b
	p.Free(b)
	if keep[0] != poisonByte {
		t.Fatal("freed buffer not poisoned")
	}
}

// Arrow builders and arrays work on top of the pool, and a checked
// allocator wrapping it balances.
func TestWithArrowAndCheckedAllocator(t *testing.T) {
	mem := memory.NewCheckedAllocator(New())
	defer mem.AssertSize(t, 0)
	for range 3 {
		b := array.NewStringBuilder(mem)
		for i := range 10000 {
			if i%7 == 0 {
				b.AppendNull()
			} else {
				b.Append("value")
			}
		}
		a := b.NewStringArray()
		b.Release()
		if a.NullN() != 10000/7+1 || a.Value(1) != "value" || a.IsValid(0) {
			t.Fatalf("nulls %d", a.NullN())
		}
		a.Release()
	}
}

func TestConcurrentUse(t *testing.T) {
	p := New()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				b := p.Allocate(64 << (i % 8))
				for j := range b {
					if b[j] != 0 {
						t.Errorf("goroutine %d: dirty buffer", g)
						return
					}
					b[j] = byte(g + 1)
				}
				p.Free(b)
			}
		}()
	}
	wg.Wait()
}

// TestBuffer: from a Pool a Buffer is recycled memory, not cleared, that
// goes back to the pool on release; from any other allocator it is an
// ordinary zeroed, counted buffer.
func TestBuffer(t *testing.T) {
	p := New()
	b := Buffer(p, 1000)
	if b.Len() != 1000 || !aligned(b.Bytes()) {
		t.Fatalf("len %d, aligned %v", b.Len(), aligned(b.Bytes()))
	}
	for i := range b.Bytes() {
		b.Bytes()[i] = 0xEE
	}
	first := unsafe.SliceData(b.Bytes())
	b.Release()
	c := Buffer(p, 900) // the same size class
	if unsafe.SliceData(c.Bytes()) == first && c.Bytes()[0] != 0xEE {
		t.Fatalf("recycled buffer was cleared")
	}
	c.Release()

	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	d := Buffer(mem, 100)
	if d.Len() != 100 || !bytes.Equal(d.Bytes(), make([]byte, 100)) || mem.CurrentAlloc() == 0 {
		t.Fatalf("len %d, zeroed %v, counted %d", d.Len(), bytes.Equal(d.Bytes(), make([]byte, 100)), mem.CurrentAlloc())
	}
	d.Release()
	mem.AssertSize(t, 0)
}
