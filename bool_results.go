package fsql

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// MySQL has no boolean type: a comparison, IN, LIKE, EXISTS, AND/OR/NOT
// and IS [NOT] TRUE give INT 0 or 1 (INT(1)), and a BOOLEAN column is a
// TINYINT(1), so every MySQL client (the mysql command line, drivers,
// CSV, JSON) shows 1 and 0, never true and false. fsql's plans keep a
// boolean type (filters, CASE, joins): only the columns a query hands
// back through Rows are retyped, here, as INT (Arrow int32) 0/1 with the
// same NULLs, and those CREATE TABLE ... AS SELECT a = b writes
// (sql.intBooleans). (1 = 1) + 1 is 2 either way: arithmetic already reads a
// boolean as 0/1.

// boolsAsInts returns the result schema with every BOOLEAN field an INT
// field, and a next that converts each batch; s and next themselves when
// the result has no boolean column.
func boolsAsInts(alloc memory.Allocator, s *arrow.Schema, next func(context.Context) (arrow.RecordBatch, error)) (*arrow.Schema, func(context.Context) (arrow.RecordBatch, error)) {
	var cols []int
	fields := s.Fields()
	for i, f := range fields {
		if f.Type.ID() == arrow.BOOL {
			cols = append(cols, i)
			fields[i].Type = arrow.PrimitiveTypes.Int32
		}
	}
	if len(cols) == 0 {
		return s, next
	}
	md := s.Metadata()
	out := arrow.NewSchema(fields, &md)
	return out, func(ctx context.Context) (arrow.RecordBatch, error) {
		b, err := next(ctx)
		if err != nil {
			return nil, err
		}
		arrs := make([]arrow.Array, b.NumCols())
		copy(arrs, b.Columns())
		for _, c := range cols {
			arrs[c] = boolToInt32(alloc, arrs[c].(*array.Boolean))
		}
		conv := array.NewRecordBatch(out, arrs, b.NumRows())
		for _, c := range cols {
			arrs[c].Release()
		}
		b.Release()
		return conv, nil
	}
}

// boolToInt32 is a's values as 1 and 0, NULL where a is NULL.
func boolToInt32(alloc memory.Allocator, a *array.Boolean) arrow.Array {
	bld := array.NewInt32Builder(alloc)
	defer bld.Release()
	bld.Reserve(a.Len())
	for i := 0; i < a.Len(); i++ {
		switch {
		case a.IsNull(i):
			bld.AppendNull()
		case a.Value(i):
			bld.UnsafeAppend(1)
		default:
			bld.UnsafeAppend(0)
		}
	}
	return bld.NewArray()
}
