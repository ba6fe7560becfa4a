package kernels

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/internal/mempool"
)

// The benchmarks run each kernel beside arrow-go's compute path on the same
// input in the same run, so their ratio holds under machine load:
//
//	go test -run '^$' -bench . -benchmem ./exec/kernels/

var benchTypes = []arrow.DataType{
	arrow.PrimitiveTypes.Int64,
	&arrow.Decimal128Type{Precision: 7, Scale: 2},
	arrow.BinaryTypes.String,
	arrow.FixedWidthTypes.Boolean,
}

func BenchmarkTake(b *testing.B) {
	alloc := memory.NewGoAllocator()
	for _, dt := range benchTypes {
		for _, n := range []int{1500, 8192} {
			// random: a build side's rows in probe order; in-order: a probe
			// side of which 90% matched, in runs.
			for _, order := range []string{"random", "in-order"} {
				r := rand.New(rand.NewPCG(1, uint64(n)))
				a := randomArray(b, alloc, dt, n, 5, r)
				idx := randomIdx(0)(r, n)[:n]
				if order == "in-order" {
					idx = inOrder(r, n, 90)
				}
				ib := array.NewInt32Builder(alloc)
				ib.AppendValues(idx, nil)
				ia := ib.NewArray()
				ib.Release()
				name := fmt.Sprintf("%s/rows=%d/%s", dt, n, order)
				b.Run(name+"/kernels", func(b *testing.B) {
					for b.Loop() {
						out, err := Take(alloc, a, idx)
						if err != nil {
							b.Fatal(err)
						}
						out.Release()
					}
				})
				b.Run(name+"/compute", func(b *testing.B) {
					ctx := compute.WithAllocator(context.Background(), alloc)
					for b.Loop() {
						// The index array is built per call, as callers did.
						ib := array.NewInt32Builder(alloc)
						ib.AppendValues(idx, nil)
						ia := ib.NewArray()
						ib.Release()
						out, err := compute.TakeArray(ctx, a, ia)
						if err != nil {
							b.Fatal(err)
						}
						out.Release()
						ia.Release()
					}
				})
				ia.Release()
				a.Release()
			}
		}
	}
}

// inOrder keeps keepPct percent of rows 0..n-1, in order.
func inOrder(r *rand.Rand, n, keepPct int) []int32 {
	idx := make([]int32, 0, n)
	for j := range n {
		if r.IntN(100) < keepPct {
			idx = append(idx, int32(j))
		}
	}
	return idx
}

func BenchmarkFilterBatch(b *testing.B) {
	alloc := memory.NewGoAllocator()
	const n = 1570 // store_sales' batch size on the partitioned layout
	r := rand.New(rand.NewPCG(7, 8))
	fields := make([]arrow.Field, len(benchTypes))
	cols := make([]arrow.Array, len(benchTypes))
	for i, dt := range benchTypes {
		fields[i] = arrow.Field{Name: fmt.Sprint("c", i), Type: dt, Nullable: true}
		cols[i] = randomArray(b, alloc, dt, n, 5, r)
	}
	batch := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, n)
	for _, c := range cols {
		c.Release()
	}
	defer batch.Release()
	for _, pct := range []int{10, 50, 90} {
		mb := array.NewBooleanBuilder(alloc)
		for i := 0; i < n; i++ {
			mb.Append(r.IntN(100) < pct)
		}
		mask := mb.NewArray().(*array.Boolean)
		mb.Release()
		name := fmt.Sprintf("cols=%d/rows=%d/kept=%d%%", len(cols), n, pct)
		b.Run(name+"/kernels", func(b *testing.B) {
			var sel []int32
			for b.Loop() {
				out, s, err := FilterBatch(alloc, batch, mask, sel)
				if err != nil {
					b.Fatal(err)
				}
				sel = s
				out.Release()
			}
		})
		b.Run(name+"/compute", func(b *testing.B) {
			ctx := compute.WithAllocator(context.Background(), alloc)
			for b.Loop() {
				out, err := compute.FilterRecordBatch(ctx, batch, mask, compute.DefaultFilterOptions())
				if err != nil {
					b.Fatal(err)
				}
				out.Release()
			}
		})
		mask.Release()
	}
}

// BenchmarkConcat gathers 16 batches of 8,192 rows into one column, as a
// hash join's build side or a sort's buffer is, from the recycling pool
// the queries use: Concat against arrow's Concatenate.
func BenchmarkConcat(b *testing.B) {
	pool := mempool.New()
	for _, dt := range benchTypes {
		r := rand.New(rand.NewPCG(2, 16))
		parts := make([]arrow.Array, 16)
		for i := range parts {
			parts[i] = randomArray(b, memory.NewGoAllocator(), dt, 8192, 5, r)
		}
		b.Run(dt.String()+"/kernels", func(b *testing.B) {
			for b.Loop() {
				out, err := Concat(pool, parts)
				if err != nil {
					b.Fatal(err)
				}
				out.Release()
			}
		})
		b.Run(dt.String()+"/arrow", func(b *testing.B) {
			for b.Loop() {
				out, err := array.Concatenate(parts, pool)
				if err != nil {
					b.Fatal(err)
				}
				out.Release()
			}
		})
	}
}
