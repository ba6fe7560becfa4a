package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/internal/mempool"
)

// TestConcatMatchesArrow concatenates parts of every type (sliced at odd
// offsets, some empty, some all NULL, some without NULLs) from a checked
// allocator and from a poisoned pool, and compares with arrow's
// Concatenate.
func TestConcatMatchesArrow(t *testing.T) {
	pool := mempool.New()
	pool.Poison = true
	for _, dt := range testTypes {
		for _, nullPct := range []int{0, 20, 100} {
			t.Run(fmt.Sprintf("%s/nulls%d", dt, nullPct), func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				r := rand.New(rand.NewPCG(uint64(nullPct), 3))
				var parts []arrow.Array
				for k, n := range []int{70, 0, 13, 300, 1} {
					a := randomArray(t, mem, dt, n+9, nullPct*(k%2), r)
					s := array.NewSlice(a, int64(k%5), int64(k%5+n))
					a.Release()
					parts = append(parts, s)
				}
				defer func() {
					for _, p := range parts {
						p.Release()
					}
				}()
				want, err := array.Concatenate(parts, mem)
				if err != nil {
					t.Fatal(err)
				}
				defer want.Release()
				for _, alloc := range []memory.Allocator{mem, pool} {
					if alloc == pool {
						var bufs [][]byte
						for size := 64; size <= 1<<14; size *= 2 {
							bufs = append(bufs, pool.Allocate(size), pool.Allocate(size))
						}
						for _, b := range bufs {
							pool.Free(b)
						}
					}
					got, err := Concat(alloc, parts)
					if err != nil {
						t.Fatal(err)
					}
					checkSame(t, got, want)
					got.Release()
				}
			})
		}
	}
	if _, err := Concat(memory.NewGoAllocator(), nil); err == nil {
		t.Fatal("concatenating nothing: want an error")
	}
}
