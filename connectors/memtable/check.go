package memtable

import (
	"math"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/errs"
)

// MySQL's errors for a value a column does not take (strict mode).
var (
	errBadNull    = errs.Condition{Kind: errs.Execution, Code: 1048, SQLState: "23000", Name: "ER_BAD_NULL_ERROR"}
	errTooLong    = errs.Condition{Kind: errs.Execution, Code: 1406, SQLState: "22001", Name: "ER_DATA_TOO_LONG"}
	errOutOfRange = errs.Condition{Kind: errs.Execution, Code: 1264, SQLState: "22003", Name: "ER_WARN_DATA_OUT_OF_RANGE"}
)

// check checks rows of b (the statement's rows from first, 0-based)
// against def's columns and returns them as the table stores them (CHAR
// without trailing spaces, FLOAT rounded, fractional seconds rounded);
// columns that need no change are b's own. The caller releases the
// result.
func check(def *Def, b arrow.RecordBatch, first int64) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, b.NumCols())
	release := func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}
	for i, c := range def.Columns {
		a := b.Column(i)
		if ext, ok := a.(array.ExtensionArray); ok {
			a = ext.Storage()
		}
		if !arrow.TypeEqual(a.DataType(), c.Type) {
			release()
			return nil, errs.New(errs.Internal, "writing column %s of table %s: values of type %s for a %s column", c.Name, def.Name, a.DataType(), c.Type)
		}
		out, err := checkColumn(def, &c, a, first)
		if err != nil {
			release()
			return nil, err
		}
		cols[i] = out
	}
	rec := array.NewRecordBatch(def.Schema(), cols, b.NumRows())
	release()
	return rec, nil
}

// checkColumn checks and converts one column; the result is retained.
func checkColumn(def *Def, c *Column, a arrow.Array, first int64) (arrow.Array, error) {
	row := func(i int) int64 { return first + int64(i) + 1 }
	if c.NotNull && a.NullN() > 0 {
		for i := 0; i < a.Len(); i++ {
			if a.IsNull(i) {
				return nil, errs.New(errBadNull, "column '%s' of table %s cannot be null (row %d)", c.Name, def.Name, row(i))
			}
		}
	}
	switch x := a.(type) {
	case *array.Int32:
		if c.Bounded {
			for i := 0; i < x.Len(); i++ {
				if v := int64(x.Value(i)); x.IsValid(i) && (v < c.Min || v > c.Max) {
					return nil, errs.New(errOutOfRange, "out of range value %d for column '%s' of table %s, a %s (row %d)", v, c.Name, def.Name, c.Declared, row(i))
				}
			}
		}
	case *array.Int64:
		if c.Bounded {
			for i := 0; i < x.Len(); i++ {
				if v := x.Value(i); x.IsValid(i) && (v < c.Min || v > c.Max) {
					return nil, errs.New(errOutOfRange, "out of range value %d for column '%s' of table %s, a %s (row %d)", v, c.Name, def.Name, c.Declared, row(i))
				}
			}
		}
	case *array.String:
		if c.MaxChars > 0 || c.Char {
			return checkStrings(def, c, x, row)
		}
	case *array.Float64:
		if c.Float32 {
			bld := array.NewFloat64Builder(memory.DefaultAllocator)
			defer bld.Release()
			bld.Reserve(x.Len())
			for i := 0; i < x.Len(); i++ {
				if x.IsNull(i) {
					bld.AppendNull()
					continue
				}
				v := x.Value(i)
				f := float32(v)
				if math.IsInf(float64(f), 0) && !math.IsInf(v, 0) {
					return nil, errs.New(errOutOfRange, "out of range value %g for column '%s' of table %s, a FLOAT (row %d)", v, c.Name, def.Name, row(i))
				}
				bld.Append(float64(f))
			}
			return bld.NewArray(), nil
		}
	case *array.Timestamp:
		if c.FracDigits < 6 {
			return roundMicros(a, c.FracDigits), nil
		}
	case *array.Time64:
		if c.FracDigits < 6 {
			return roundMicros(a, c.FracDigits), nil
		}
	}
	a.Retain()
	return a, nil
}

func checkStrings(def *Def, c *Column, x *array.String, row func(int) int64) (arrow.Array, error) {
	bld := array.NewStringBuilder(memory.DefaultAllocator)
	defer bld.Release()
	for i := 0; i < x.Len(); i++ {
		if x.IsNull(i) {
			bld.AppendNull()
			continue
		}
		v := x.Value(i)
		if c.Char {
			v = strings.TrimRight(v, " ")
		}
		if c.MaxChars > 0 && utf8.RuneCountInString(v) > c.MaxChars {
			return nil, errs.New(errTooLong, "data too long for column '%s' of table %s, a %s: %d characters (row %d)", c.Name, def.Name, c.Declared, utf8.RuneCountInString(v), row(i))
		}
		bld.Append(v)
	}
	return bld.NewArray(), nil
}

// roundMicros rounds microsecond values (timestamps, times) to digits
// fractional digits, half up as MySQL rounds a fractional second.
func roundMicros(a arrow.Array, digits int) arrow.Array {
	unit := int64(math.Pow10(6 - digits))
	raw := a.Data().Buffers()[1]
	vals := arrow.Int64Traits.CastFromBytes(raw.Bytes())[a.Data().Offset() : a.Data().Offset()+a.Len()]
	bld := array.NewInt64Builder(memory.DefaultAllocator)
	defer bld.Release()
	for i, v := range vals {
		if a.IsNull(i) {
			bld.AppendNull()
			continue
		}
		q := v + unit/2
		r := q % unit
		if r < 0 {
			r += unit
		}
		bld.Append(q - r)
	}
	ints := bld.NewArray()
	defer ints.Release()
	d := array.NewData(a.DataType(), ints.Len(), ints.Data().Buffers(), nil, ints.NullN(), 0)
	defer d.Release()
	return array.MakeFromData(d)
}

// concat copies batches (each of def's columns) into one batch of memory
// the store owns (the Go allocator's, freed by the collector once no
// version of the table holds it).
func concat(def *Def, batches []arrow.RecordBatch) (arrow.RecordBatch, error) {
	var rows int64
	for _, b := range batches {
		rows += b.NumRows()
	}
	cols := make([]arrow.Array, len(def.Columns))
	for i := range cols {
		parts := make([]arrow.Array, len(batches))
		for k, b := range batches {
			parts[k] = b.Column(i)
		}
		c, err := array.Concatenate(parts, memory.DefaultAllocator)
		if err != nil {
			for _, done := range cols[:i] {
				done.Release()
			}
			return nil, errs.Wrap(errs.Internal, "copying column %s of table %s: %w", def.Columns[i].Name, def.Name, err)
		}
		cols[i] = c
	}
	rec := array.NewRecordBatch(def.Schema(), cols, rows)
	for _, c := range cols {
		c.Release()
	}
	return rec, nil
}
