package fsql

import (
	"context"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// MySQL never shows a DOUBLE -0: `select -0e0`, `0e0 * -1` and a stored
// -0 all come back as 0 over its protocol, and -0 = 0 everywhere in SQL.
// The output formats print 0 (format.Float); the batches a query hands
// back through Rows hold +0 in its place too, so a program printing them
// sees what a MySQL client would. Only those batches change: plans,
// written tables and keys keep the value (keys already treat the two as
// one).

// positiveZeros returns a next that replaces -0 by +0 in every DOUBLE
// column of each batch of next (copying only a column that holds one);
// next itself when the schema has no DOUBLE column.
func positiveZeros(alloc memory.Allocator, s *arrow.Schema, next func(context.Context) (arrow.RecordBatch, error)) func(context.Context) (arrow.RecordBatch, error) {
	var cols []int
	for i, f := range s.Fields() {
		if f.Type.ID() == arrow.FLOAT64 {
			cols = append(cols, i)
		}
	}
	if len(cols) == 0 {
		return next
	}
	return func(ctx context.Context) (arrow.RecordBatch, error) {
		b, err := next(ctx)
		if err != nil || b == nil {
			return b, err
		}
		var arrs []arrow.Array
		for _, c := range cols {
			a, ok := b.Column(c).(*array.Float64)
			if !ok || !hasNegativeZero(a.Float64Values()) {
				continue
			}
			if arrs == nil {
				arrs = make([]arrow.Array, b.NumCols())
				copy(arrs, b.Columns())
			}
			arrs[c] = withPositiveZeros(alloc, a)
		}
		if arrs == nil {
			return b, nil
		}
		conv := array.NewRecordBatch(b.Schema(), arrs, b.NumRows())
		for _, c := range cols {
			if arrs[c] != b.Column(c) {
				arrs[c].Release()
			}
		}
		b.Release()
		return conv, nil
	}
}

func hasNegativeZero(vs []float64) bool {
	for _, v := range vs {
		if v == 0 && math.Signbit(v) {
			return true
		}
	}
	return false
}

// withPositiveZeros is a with +0 for -0, the same NULLs.
func withPositiveZeros(alloc memory.Allocator, a *array.Float64) arrow.Array {
	bld := array.NewFloat64Builder(alloc)
	defer bld.Release()
	bld.Reserve(a.Len())
	for i, v := range a.Float64Values() {
		switch {
		case a.IsNull(i):
			bld.UnsafeAppendBoolToBitmap(false)
		case v == 0:
			bld.UnsafeAppend(0)
		default:
			bld.UnsafeAppend(v)
		}
	}
	return bld.NewArray()
}
