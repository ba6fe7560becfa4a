package pruning

import (
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// BenchmarkRowMask measures the row membership test over one 8K batch of
// INT keys for each filter mode.
func BenchmarkRowMask(b *testing.B) {
	mem := memory.NewGoAllocator()
	rng := rand.New(rand.NewPCG(3, 4))
	const base = 2415022 // TPC-DS d_date_sk range starts here
	vb := array.NewInt32Builder(mem)
	for i := 0; i < 8192; i++ {
		vb.Append(int32(base + rng.IntN(73000)))
	}
	vals := vb.NewArray()
	vb.Release()
	defer vals.Release()
	for _, tc := range []struct {
		name   string
		keys   int
		spread int64
		cap    int
	}{
		{"dense-365", 365, 73000, 0},
		{"map-1000-sparse", 1000, 1 << 40, 0},
		{"map-500-in-range", 500, 1 << 19, 0}, // q84's customer keys
		{"bloom-100k", 100000, 73000 * 4, 1000},
	} {
		c := NewCoordinator(CoordinatorConfig{MaxValues: tc.cap})
		kb := array.NewInt64Builder(mem)
		for i := 0; i < tc.keys; i++ {
			kb.Append(base + rng.Int64N(tc.spread))
		}
		keys := kb.NewArray()
		kb.Release()
		if err := c.Collector(1).Add(0, 0, 1, []arrow.Array{keys}); err != nil {
			b.Fatal(err)
		}
		keys.Release()
		c.Collector(1).Finish(0, 0, 1)
		c.Collector(1).Commit(0, 0)
		f, err := c.Collector(1).filter(0)
		if err != nil {
			b.Fatal(err)
		}
		out := make([]byte, 1024)
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(8192 * 4)
			for i := 0; i < b.N; i++ {
				clear(out)
				f.fillMask(vals, out)
			}
		})
	}
}

// BenchmarkCollectKeys measures a collector gathering 110k build rows of
// 65k distinct int32 keys (q75's store_sales ticket numbers) into its
// exact set, in 4096-row batches, and merging two tasks' sets.
func BenchmarkCollectKeys(b *testing.B) {
	mem := memory.NewGoAllocator()
	rng := rand.New(rand.NewPCG(5, 6))
	var batches []arrow.Array
	for range 27 {
		vb := array.NewInt32Builder(mem)
		for range 4096 {
			vb.Append(int32(rng.IntN(65000)) * 37)
		}
		batches = append(batches, vb.NewArray())
		vb.Release()
	}
	defer func() {
		for _, a := range batches {
			a.Release()
		}
	}()
	b.ResetTimer()
	for range b.N {
		var parts [2]*keyBuilder
		for t := range parts {
			parts[t] = &keyBuilder{maxValues: 1 << 20}
			for _, a := range batches[t*len(batches)/2 : (t+1)*len(batches)/2] {
				if err := parts[t].add(a); err != nil {
					b.Fatal(err)
				}
			}
		}
		all := &keyBuilder{maxValues: 1 << 20}
		for _, p := range parts {
			if err := all.merge(p); err != nil {
				b.Fatal(err)
			}
		}
		if f := all.freeze(); f.count == 0 {
			b.Fatal("no keys")
		}
	}
}
