package exec

import (
	"math/rand"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// int64Pairs makes two int64 key columns of n rows from key(i).
func int64Pairs(n int, key func(i int) (int64, int64)) []arrow.Array {
	a := array.NewInt64Builder(memory.DefaultAllocator)
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer a.Release()
	defer b.Release()
	for i := 0; i < n; i++ {
		x, y := key(i)
		a.Append(x)
		b.Append(y)
	}
	return []arrow.Array{a.NewArray(), b.NewArray()}
}

// BenchmarkJoinTable builds a two-key table the size of q78's
// store_returns (287k rows) and probes it with batches the size of its
// store_sales side, most of which find nothing (an anti join keeping
// ~90%): the cost is the random slot and key reads.
func BenchmarkJoinTable(b *testing.B) {
	const buildRows, probeRows = 287_000, 555_000
	r := rand.New(rand.NewSource(1))
	perm := r.Perm(buildRows * 10)
	build := int64Pairs(buildRows, func(i int) (int64, int64) { return int64(perm[i]), int64(perm[i] % 1000) })
	defer releaseArrays(build)
	probe := int64Pairs(probeRows, func(i int) (int64, int64) {
		v := perm[r.Intn(buildRows*10)]
		return int64(v), int64(v % 1000)
	})
	defer releaseArrays(probe)
	b.Run("build", func(b *testing.B) {
		next := make([]int32, buildRows)
		for i := 0; i < b.N; i++ {
			t, err := newJoinTable(build, buildRows, nil, next)
			if err != nil {
				b.Fatal(err)
			}
			t.release()
		}
	})
	b.Run("probe", func(b *testing.B) {
		next := make([]int32, buildRows)
		t, err := newJoinTable(build, buildRows, nil, next)
		if err != nil {
			b.Fatal(err)
		}
		defer t.release()
		var p joinProbe
		heads := make([]int32, BatchSize)
		null := make([]bool, BatchSize)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			for lo := 0; lo < probeRows; lo += BatchSize {
				hi := min(lo+BatchSize, probeRows)
				part := sliceArrays(probe, lo, hi)
				if err := t.lookup(&p, part, hi-lo, heads, null); err != nil {
					b.Fatal(err)
				}
				releaseArrays(part)
			}
		}
	})
}
