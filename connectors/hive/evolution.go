package hive

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Schema evolution: the files of one table need not share one schema.
// Writers add columns over time, drop them, widen an INT to a BIGINT or a
// DECIMAL(7,2) to a DECIMAL(9,2); fsql reads the table as the union of its
// files' columns:
//
//   - Columns are matched by name (ignoring case, as SQL names are), never
//     by position. The table's order is the first file's (files sorted by
//     path), with columns first seen in later files appended in the order
//     they appear.
//   - A column a file lacks reads as NULL in that file's rows (and its
//     row-group statistics say so: all NULL, so pruning skips them for
//     any comparison).
//   - Types widen when no value can change: INT to BIGINT, an integer to a
//     DECIMAL with enough integer digits, DECIMAL(p1,s1) and DECIMAL(p2,s2)
//     to DECIMAL(max integer digits + max scale, max scale) while that is
//     at most 38 digits. FLOAT and DOUBLE are both DOUBLE already, and
//     TIMESTAMP millis, micros and nanos are all microseconds.
//   - Anything else (INT and VARCHAR, DATETIME and TIMESTAMP, BIGINT and
//     BIGINT UNSIGNED, a flat column and a nested one) is a conflict. The
//     table still opens and queries not reading the column run; a query
//     reading it fails with an error naming the column, both files and
//     both types.

// tableColumn is one file column of a table across all its files.
type tableColumn struct {
	name string
	typ  arrow.DataType
	// err is what a query reading the column gets: a conflict between two
	// files, or a column fsql cannot read (nested).
	err error
	// file and parquet say where the column's type comes from, for messages.
	file, parquet string
	// required: every file of the table has the column, as a Parquet
	// REQUIRED column, so it holds no NULL (SHOW COLUMNS says NOT NULL).
	required bool
}

// unionColumns decides the file columns of a table from the columns of its
// files (in listing order) and returns, for every file, the index of each
// table column in the file's columns (-1 for a column the file lacks), or
// nil when the file has exactly the table's columns, names and types.
func unionColumns(table string, files []*File) ([]tableColumn, [][]int) {
	var cols []tableColumn
	byName := map[string]int{}
	for fi, f := range files {
		seen := make(map[int]string, len(f.cols))
		for _, ci := range f.cols {
			key := strings.ToLower(ci.name)
			j, ok := byName[key]
			if !ok {
				byName[key] = len(cols)
				cols = append(cols, tableColumn{name: ci.name, typ: ci.arrow, err: ci.unreadable, file: f.Path, parquet: ci.parquet,
					required: fi == 0 && !ci.optional && ci.unreadable == nil}) // earlier files lack it
				seen[len(cols)-1] = ci.name
				continue
			}
			c := &cols[j]
			c.required = c.required && !ci.optional
			if other, dup := seen[j]; dup {
				if c.err == nil {
					c.err = fmt.Errorf("%w: table %s: %s has two columns named %s and %s; column names are case-insensitive in SQL",
						ErrCorrupt, table, f.Path, other, ci.name)
				}
				continue
			}
			seen[j] = ci.name
			if c.err != nil {
				continue
			}
			if ci.unreadable != nil {
				c.err = conflict(table, c, ci, f.Path)
				continue
			}
			w, ok := widen(c.typ, ci.arrow)
			if !ok {
				c.err = conflict(table, c, ci, f.Path)
				continue
			}
			c.typ = w
		}
		for j := range cols {
			if _, ok := seen[j]; !ok {
				cols[j].required = false // the file lacks it: NULL there
			}
		}
	}
	for j := range cols {
		cols[j].required = cols[j].required && cols[j].err == nil
	}
	return cols, indexColumns(cols, files, true)
}

// indexColumns returns, for every file, the index of each table column in
// the file's columns (-1 for a column the file lacks), or nil when the
// file has exactly the table's columns in the table's order (and, with
// types, the table's types).
func indexColumns(cols []tableColumn, files []*File, types bool) [][]int {
	byName := make(map[string]int, len(cols))
	for j, c := range cols {
		byName[strings.ToLower(c.name)] = j
	}
	index := make([][]int, len(files))
	for i, f := range files {
		if sameColumns(cols, f.cols, types) {
			continue
		}
		idx := make([]int, len(cols))
		for j := range idx {
			idx[j] = -1
		}
		for k, ci := range f.cols {
			if j, ok := byName[strings.ToLower(ci.name)]; ok && idx[j] < 0 {
				idx[j] = k
			}
		}
		index[i] = idx
	}
	return index
}

func conflict(table string, c *tableColumn, ci columnInfo, path string) error {
	return fmt.Errorf("%w: table %s: column %s is %s (Parquet %s) in %s but %s (Parquet %s) in %s; fsql widens INT to BIGINT, integers and DECIMALs to a wider DECIMAL, and nothing else: rewrite one of the files, or leave the column out of the query",
		ErrCorrupt, table, c.name, SQLTypeName(c.typ), c.parquet, c.file, SQLTypeName(ci.arrow), ci.parquet, path)
}

// sameColumns reports whether a file's columns are exactly the table's.
func sameColumns(cols []tableColumn, fc []columnInfo, types bool) bool {
	if len(cols) != len(fc) {
		return false
	}
	for i := range cols {
		if cols[i].name != fc[i].name || (types && !arrow.TypeEqual(cols[i].typ, fc[i].arrow)) {
			return false
		}
	}
	return true
}

// widen returns the type that holds every value of a and of b exactly,
// if fsql widens a to it.
func widen(a, b arrow.DataType) (arrow.DataType, bool) {
	if arrow.TypeEqual(a, b) {
		return a, true
	}
	da, okA := exactDecimal(a)
	db, okB := exactDecimal(b)
	if !okA || !okB {
		return nil, false
	}
	if a.ID() != arrow.DECIMAL128 && b.ID() != arrow.DECIMAL128 {
		return arrow.PrimitiveTypes.Int64, true // INT and BIGINT
	}
	scale := max(da.Scale, db.Scale)
	digits := max(da.Precision-da.Scale, db.Precision-db.Scale) + scale
	if digits > 38 {
		return nil, false
	}
	return &arrow.Decimal128Type{Precision: digits, Scale: scale}, true
}

// exactDecimal is the decimal an exact numeric type fits in.
func exactDecimal(t arrow.DataType) (*arrow.Decimal128Type, bool) {
	switch t := t.(type) {
	case *arrow.Decimal128Type:
		return t, true
	case *arrow.Int32Type:
		return &arrow.Decimal128Type{Precision: 10}, true
	case *arrow.Int64Type:
		return &arrow.Decimal128Type{Precision: 19}, true
	}
	return nil, false
}

// remapFile returns a copy of f whose row-group statistics are in the
// table's column order and types: a column f lacks is all NULL, a widened
// one has its min and max converted. The copy belongs to one table view.
func remapFile(f *File, cols []tableColumn, index []int) *File {
	c := *f
	c.index = index
	c.RowGroups = make([]RowGroup, len(f.RowGroups))
	for g, rg := range f.RowGroups {
		out := RowGroup{NumRows: rg.NumRows, Bytes: rg.Bytes, Columns: make([]ColumnStats, len(cols))}
		for j, k := range index {
			if k < 0 {
				out.Columns[j] = ColumnStats{NullCount: rg.NumRows}
				continue
			}
			s := rg.Columns[k]
			if from := f.cols[k].arrow; !arrow.TypeEqual(from, cols[j].typ) {
				s = convertStats(s, from, cols[j].typ)
			}
			out.Columns[j] = s
		}
		c.RowGroups[g] = out
	}
	return &c
}

// convertValue widens one statistics value to type to.
func convertValue(v any, to arrow.DataType) (any, bool) {
	switch to := to.(type) {
	case *arrow.Int64Type:
		if x, ok := v.(int32); ok {
			return int64(x), true
		}
	case *arrow.Decimal128Type:
		var n decimal128.Num
		from := int32(0)
		switch x := v.(type) {
		case int32:
			n = decimal128.FromI64(int64(x))
		case int64:
			n = decimal128.FromI64(x)
		case scaledDecimal:
			n, from = x.n, x.scale
		default:
			return nil, false
		}
		return n.Mul(decimal128.GetScaleMultiplier(int(to.Scale - from))), true
	}
	return nil, false
}

// scaledDecimal is a decimal statistics value with its scale: the values
// themselves are decimal128.Num at the column's scale, which convertStats
// knows from the file column's type.
type scaledDecimal struct {
	n     decimal128.Num
	scale int32
}

// convertStats widens a decimal statistics value, which carries no scale
// of its own.
func convertStats(s ColumnStats, from, to arrow.DataType) ColumnStats {
	if !s.HasMinMax {
		return s
	}
	conv := func(v any) (any, bool) {
		if n, ok := v.(decimal128.Num); ok {
			if d, ok := from.(*arrow.Decimal128Type); ok {
				return convertValue(scaledDecimal{n, d.Scale}, to)
			}
		}
		return convertValue(v, to)
	}
	mn, ok1 := conv(s.Min)
	mx, ok2 := conv(s.Max)
	s.Min, s.Max, s.HasMinMax = mn, mx, ok1 && ok2
	return s
}

// convertArray widens a column read from a file to the table's type. It
// returns a new array; the caller releases a.
func convertArray(alloc memory.Allocator, a arrow.Array, to arrow.DataType) (arrow.Array, error) {
	n := a.Len()
	switch to := to.(type) {
	case *arrow.Int64Type:
		src, ok := a.(*array.Int32)
		if !ok {
			break
		}
		b := array.NewInt64Builder(alloc)
		defer b.Release()
		b.Reserve(n)
		for i := range n {
			if src.IsNull(i) {
				b.UnsafeAppendBoolToBitmap(false)
			} else {
				b.UnsafeAppend(int64(src.Value(i)))
			}
		}
		return b.NewArray(), nil
	case *arrow.Decimal128Type:
		b := array.NewDecimal128Builder(alloc, to)
		defer b.Release()
		b.Reserve(n)
		var get func(i int) decimal128.Num
		switch src := a.(type) {
		case *array.Int32:
			mul := decimal128.GetScaleMultiplier(int(to.Scale))
			get = func(i int) decimal128.Num { return decimal128.FromI64(int64(src.Value(i))).Mul(mul) }
		case *array.Int64:
			mul := decimal128.GetScaleMultiplier(int(to.Scale))
			get = func(i int) decimal128.Num { return decimal128.FromI64(src.Value(i)).Mul(mul) }
		case *array.Decimal128:
			from := src.DataType().(*arrow.Decimal128Type)
			mul := decimal128.GetScaleMultiplier(int(to.Scale - from.Scale))
			get = func(i int) decimal128.Num { return src.Value(i).Mul(mul) }
		default:
			return nil, fmt.Errorf("%w: cannot widen %s to %s", ErrCorrupt, a.DataType(), to)
		}
		for i := range n {
			if a.IsNull(i) {
				b.UnsafeAppendBoolToBitmap(false)
			} else {
				b.UnsafeAppend(get(i))
			}
		}
		return b.NewArray(), nil
	}
	return nil, fmt.Errorf("%w: cannot widen %s to %s", ErrCorrupt, a.DataType(), to)
}

// SQLTypeName names an Arrow type as MySQL would, for messages and docs.
func SQLTypeName(t arrow.DataType) string {
	switch t := t.(type) {
	case *arrow.Int32Type:
		return "INT"
	case *arrow.Int64Type:
		return "BIGINT"
	case *arrow.Uint64Type:
		return "BIGINT UNSIGNED"
	case *arrow.Float64Type:
		return "DOUBLE"
	case *arrow.Decimal128Type:
		return fmt.Sprintf("DECIMAL(%d,%d)", t.Precision, t.Scale)
	case *arrow.Date32Type:
		return "DATE"
	case *arrow.TimestampType:
		if t.TimeZone == "" {
			return "DATETIME"
		}
		return "TIMESTAMP"
	case *arrow.Time64Type:
		return "TIME"
	case *arrow.StringType:
		return "VARCHAR"
	case *arrow.BooleanType:
		return "BOOLEAN"
	}
	return t.String()
}
