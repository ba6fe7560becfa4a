package exec

import (
	"math/rand"
	"testing"
)

// BenchmarkSort: 1M rows (int32 key, int64 payload) in random order.
func BenchmarkSort(b *testing.B) {
	const n = 1_000_000
	r := rand.New(rand.NewSource(1))
	in := int32Source(n, func(int) int32 { return int32(r.Intn(n)) })
	defer in.release()
	s := &Sort{Child: in, Keys: []SortKey{{Expr: col(0, tInt32)}}}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if got := drainCount(b, s); got != n {
			b.Fatalf("rows %d", got)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
