package hive

import (
	"math/rand"
	"testing"
)

func benchDefs() ([]byte, []int32, []int32, int) {
	rng := rand.New(rand.NewSource(1))
	n := 8192
	def := make([]byte, n)
	p := 0
	for i := range def {
		if rng.Float64() >= 0.045 {
			def[i] = 1
			p++
		}
	}
	src := make([]int32, p)
	idx := make([]int32, p)
	for i := range src {
		src[i] = rng.Int31()
		idx[i] = int32(rng.Intn(p))
	}
	return def, src, idx, n
}

// BenchmarkGatherLevels times the per-batch loops over definition levels
// of a flat optional column: 8,192 rows, 4.5% NULL (about what a TPC-DS
// fact column holds).
func BenchmarkGatherLevels(b *testing.B) {
	def, src, idx, n := benchDefs()
	dst := make([]int32, n)
	dec := make([]uint64, 2*n)
	b.Run("int32", func(b *testing.B) {
		for range b.N {
			gather(dst, src, nil, 0, def)
		}
	})
	b.Run("int32-dict", func(b *testing.B) {
		for range b.N {
			gather(dst, src, idx, 0, def)
		}
	})
	b.Run("dec", func(b *testing.B) {
		for range b.N {
			gatherDecimals(dec, src, nil, 0, def)
		}
	})
	b.Run("dec-dict", func(b *testing.B) {
		for range b.N {
			gatherDecimals(dec, src, idx, 0, def)
		}
	})
	b.Run("count", func(b *testing.B) {
		for range b.N {
			countOnes(def)
		}
	})
}
