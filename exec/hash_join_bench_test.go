package exec

import (
	"context"
	"fmt"
	"io"
	"math/rand"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/exec/expr"
)

// benchSource hands out prebuilt batches (retained per Open) so benchmarks
// time the operator, not input construction.
type benchSource struct {
	schema  *arrow.Schema
	batches []arrow.RecordBatch
}

func (s *benchSource) Schema() *arrow.Schema { return s.schema }
func (s *benchSource) Children() []Node      { return nil }
func (s *benchSource) String() string        { return "BenchSource" }
func (s *benchSource) Open(*TaskContext, []Stream) (Stream, error) {
	bs := make([]arrow.RecordBatch, len(s.batches))
	for i, b := range s.batches {
		b.Retain()
		bs[i] = b
	}
	return &batchesStream{bs: bs}, nil
}

func (s *benchSource) release() { releaseBatches(s.batches) }

// int32Source makes n rows of (key int32 = key(i), payload int64 = i).
func int32Source(n int, key func(i int) int32) *benchSource {
	s := opSchema(fld("k", tInt32), fld("p", tInt64))
	src := &benchSource{schema: s}
	for start := 0; start < n; start += BatchSize {
		end := min(start+BatchSize, n)
		kb := array.NewInt32Builder(memory.DefaultAllocator)
		pb := array.NewInt64Builder(memory.DefaultAllocator)
		for i := start; i < end; i++ {
			kb.Append(key(i))
			pb.Append(int64(i))
		}
		k, p := kb.NewArray(), pb.NewArray()
		src.batches = append(src.batches, newBatch(s, []arrow.Array{k, p}, end-start))
		kb.Release()
		pb.Release()
	}
	return src
}

func drainCount(b *testing.B, n Node) int {
	tc := &TaskContext{Alloc: memory.DefaultAllocator, Memory: NewMemoryBudget(0), Parallelism: 1}
	s, err := openTree(tc, n)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	rows := 0
	for {
		batch, err := s.Next(context.Background())
		if err == io.EOF {
			return rows
		}
		if err != nil {
			b.Fatal(err)
		}
		rows += int(batch.NumRows())
		batch.Release()
	}
}

// BenchmarkHashJoin: 1M probe rows against 100K build rows on an int32 key
// (each probe row matches exactly one build row).
func BenchmarkHashJoin(b *testing.B) {
	const nBuild, nProbe = 100_000, 1_000_000
	r := rand.New(rand.NewSource(1))
	perm := r.Perm(nBuild)
	build := int32Source(nBuild, func(i int) int32 { return int32(perm[i]) })
	probe := int32Source(nProbe, func(int) int32 { return int32(r.Intn(nBuild)) })
	defer build.release()
	defer probe.release()
	j := &HashJoin{Type: InnerJoin, Build: build, Probe: probe,
		BuildKeys: []expr.Expr{col(0, tInt32)}, ProbeKeys: []expr.Expr{col(0, tInt32)}}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if got := drainCount(b, j); got != nProbe {
			b.Fatalf("rows %d", got)
		}
	}
	b.ReportMetric(float64(nProbe)*float64(b.N)/b.Elapsed().Seconds(), "probe_rows/s")
}

// stringSource makes n rows of (key string = "item" + key(i), payload
// int64 = i), TPC-DS-like 16-byte ids.
func stringSource(n int, key func(i int) int32) *benchSource {
	s := opSchema(fld("k", tStr), fld("p", tInt64))
	src := &benchSource{schema: s}
	for start := 0; start < n; start += BatchSize {
		end := min(start+BatchSize, n)
		kb := array.NewStringBuilder(memory.DefaultAllocator)
		pb := array.NewInt64Builder(memory.DefaultAllocator)
		for i := start; i < end; i++ {
			kb.Append(fmt.Sprintf("AAAAAAAA%08d", key(i)))
			pb.Append(int64(i))
		}
		k, p := kb.NewArray(), pb.NewArray()
		src.batches = append(src.batches, newBatch(s, []arrow.Array{k, p}, end-start))
		kb.Release()
		pb.Release()
	}
	return src
}

// BenchmarkHashJoinKeys: 1M probe rows against 100K build rows on a
// string key and on a key of the string and the payload's key again
// (each probe row matches exactly one build row), through the join table.
func BenchmarkHashJoinKeys(b *testing.B) {
	const nBuild, nProbe = 100_000, 1_000_000
	r := rand.New(rand.NewSource(1))
	perm := r.Perm(nBuild)
	build := stringSource(nBuild, func(i int) int32 { return int32(perm[i]) })
	probe := stringSource(nProbe, func(int) int32 { return int32(r.Intn(nBuild)) })
	defer build.release()
	defer probe.release()
	for _, c := range []struct {
		name string
		keys []expr.Expr
	}{
		{"string", []expr.Expr{col(0, tStr)}},
		{"string,string", []expr.Expr{col(0, tStr), col(0, tStr)}},
	} {
		b.Run(c.name, func(b *testing.B) {
			j := &HashJoin{Type: InnerJoin, Build: build, Probe: probe, BuildKeys: c.keys, ProbeKeys: c.keys}
			for i := 0; i < b.N; i++ {
				if got := drainCount(b, j); got != nProbe {
					b.Fatalf("rows %d", got)
				}
			}
			b.ReportMetric(float64(nProbe)*float64(b.N)/b.Elapsed().Seconds(), "probe_rows/s")
		})
	}
}
