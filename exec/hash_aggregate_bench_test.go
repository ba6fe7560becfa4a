package exec

import (
	"math/rand"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/exec/expr"
)

// BenchmarkHashAggregate: 1M rows in 10K groups, sum(decimal) and count(*).
func BenchmarkHashAggregate(b *testing.B) {
	const n, groups = 1_000_000, 10_000
	s := opSchema(fld("k", tInt32), fld("d", tDec152))
	src := &benchSource{schema: s}
	r := rand.New(rand.NewSource(1))
	for start := 0; start < n; start += BatchSize {
		end := min(start+BatchSize, n)
		kb := array.NewInt32Builder(memory.DefaultAllocator)
		db := array.NewDecimal128Builder(memory.DefaultAllocator, tDec152)
		for i := start; i < end; i++ {
			kb.Append(int32(r.Intn(groups)))
			db.Append(decimal128.FromI64(int64(r.Intn(1_000_000))))
		}
		k, d := kb.NewArray(), db.NewArray()
		src.batches = append(src.batches, newBatch(s, []arrow.Array{k, d}, end-start))
		kb.Release()
		db.Release()
	}
	defer src.release()
	a := &HashAggregate{Child: src, Mode: AggSingle, GroupBy: []expr.Expr{col(0, tInt32)}, GroupNames: []string{"k"},
		Aggs: []AggFunc{{Fn: "sum", Arg: col(1, tDec152), Type: tDec38_2, Name: "s"}, {Fn: "count_star", Type: tInt64, Name: "n"}}}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if got := drainCount(b, a); got != groups {
			b.Fatalf("groups %d", got)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
