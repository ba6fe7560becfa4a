package expr

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func benchBatch(b *testing.B) arrow.RecordBatch {
	mem := memory.NewGoAllocator()
	const n = 8192
	db := array.NewDecimal128Builder(mem, decType(7, 2))
	ib := array.NewInt64Builder(mem)
	for i := 0; i < n; i++ {
		db.Append(decimal128.FromI64(int64(i*37%100000 - 50000)))
		ib.Append(int64(i * 7919 % 10007))
	}
	d, iv := db.NewArray(), ib.NewArray()
	db.Release()
	ib.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "d", Type: d.DataType()}, {Name: "i", Type: iv.DataType()}}, nil)
	batch := array.NewRecordBatch(schema, []arrow.Array{d, iv}, n)
	d.Release()
	iv.Release()
	b.Cleanup(batch.Release)
	return batch
}

func benchEval(b *testing.B, e Expr, batch arrow.RecordBatch) {
	ctx := &Context{Alloc: memory.NewGoAllocator()}
	b.SetBytes(8192)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		a, err := e.Eval(ctx, batch)
		if err != nil {
			b.Fatal(err)
		}
		a.Release()
	}
}

func BenchmarkDecimalMultiply(b *testing.B) {
	batch := benchBatch(b)
	d := NewColumn(0, batch.Column(0).DataType(), "d")
	e, err := NewCall("*", d, dec("1.05", 3, 2))
	if err != nil {
		b.Fatal(err)
	}
	benchEval(b, e, batch)
}

func BenchmarkCompareInt64(b *testing.B) {
	batch := benchBatch(b)
	e, err := NewCall("<", NewColumn(1, tInt64, "i"), i64(5000))
	if err != nil {
		b.Fatal(err)
	}
	benchEval(b, e, batch)
}

// BenchmarkCompareInt32 is q9's ss_quantity <= 20 over random values.
func BenchmarkCompareInt32(b *testing.B) {
	mem := memory.NewGoAllocator()
	ib := array.NewInt32Builder(mem)
	for i := 0; i < 8192; i++ {
		ib.Append(int32(i*7919%10007) % 100)
	}
	a := ib.NewArray()
	ib.Release()
	batch := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "q", Type: a.DataType()}}, nil), []arrow.Array{a}, 8192)
	a.Release()
	b.Cleanup(batch.Release)
	e, err := NewCall("<=", NewColumn(0, tInt32, "q"), NewLiteral(int32(20), tInt32))
	if err != nil {
		b.Fatal(err)
	}
	benchEval(b, e, batch)
}

func BenchmarkCompareDecimal(b *testing.B) {
	batch := benchBatch(b)
	e, err := NewCall(">=", NewColumn(0, batch.Column(0).DataType(), "d"), dec("12.50", 4, 2))
	if err != nil {
		b.Fatal(err)
	}
	benchEval(b, e, batch)
}

// BenchmarkCompareStringLiteral is a dimension filter's test (cd_gender =
// 'F') over a batch of short strings.
func BenchmarkCompareStringLiteral(b *testing.B) {
	mem := memory.NewGoAllocator()
	sb := array.NewStringBuilder(mem)
	vals := []string{"F", "M", "Primary", "Secondary", "College", "Sunday", "Monday"}
	for i := 0; i < 8192; i++ {
		sb.Append(vals[i*7919%len(vals)])
	}
	a := sb.NewArray()
	sb.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "s", Type: a.DataType()}}, nil)
	batch := array.NewRecordBatch(schema, []arrow.Array{a}, 8192)
	a.Release()
	b.Cleanup(batch.Release)
	e, err := NewCall("=", NewColumn(0, a.DataType(), "s"), NewLiteral("Primary", a.DataType()))
	if err != nil {
		b.Fatal(err)
	}
	benchEval(b, e, batch)
}

// BenchmarkAndMayFail is q99's bucket test, an AND of comparisons of an
// integer difference (which may overflow, so the operands may fail).
func BenchmarkAndMayFail(b *testing.B) {
	batch := benchBatch(b)
	i := NewColumn(1, tInt64, "i")
	diff, err := NewCall("-", i, i64(5000))
	if err != nil {
		b.Fatal(err)
	}
	lo, err := NewCall(">", diff, i64(30))
	if err != nil {
		b.Fatal(err)
	}
	hi, err := NewCall("<=", diff, i64(3000))
	if err != nil {
		b.Fatal(err)
	}
	e, err := NewCall("and", lo, hi)
	if err != nil {
		b.Fatal(err)
	}
	benchEval(b, e, batch)
}
