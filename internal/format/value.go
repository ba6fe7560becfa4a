package format

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// kind says how a column's values are punctuated in each format.
type kind int

const (
	kindText   kind = iota // left-aligned; quoted in JSON
	kindNumber             // right-aligned; bare in JSON
	kindBool               // left-aligned; bare in JSON
)

func kindOf(t arrow.DataType) kind {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64,
		arrow.DECIMAL32, arrow.DECIMAL64, arrow.DECIMAL128, arrow.DECIMAL256:
		return kindNumber
	case arrow.BOOL:
		return kindBool
	}
	return kindText
}

// render returns a function that renders row i of col, valid for rows
// that are not NULL. Choosing the function once per column keeps the type
// switch off the per-value path.
func render(col arrow.Array) func(i int) string {
	switch a := col.(type) {
	case *array.Int8:
		return func(i int) string { return strconv.FormatInt(int64(a.Value(i)), 10) }
	case *array.Int16:
		return func(i int) string { return strconv.FormatInt(int64(a.Value(i)), 10) }
	case *array.Int32:
		return func(i int) string { return strconv.FormatInt(int64(a.Value(i)), 10) }
	case *array.Int64:
		return func(i int) string { return strconv.FormatInt(a.Value(i), 10) }
	case *array.Uint8:
		return func(i int) string { return strconv.FormatUint(uint64(a.Value(i)), 10) }
	case *array.Uint16:
		return func(i int) string { return strconv.FormatUint(uint64(a.Value(i)), 10) }
	case *array.Uint32:
		return func(i int) string { return strconv.FormatUint(uint64(a.Value(i)), 10) }
	case *array.Uint64:
		return func(i int) string { return strconv.FormatUint(a.Value(i), 10) }
	case *array.Float32:
		return func(i int) string { return Float(float64(a.Value(i)), 32) }
	case *array.Float64:
		return func(i int) string { return Float(a.Value(i), 64) }
	case *array.Decimal128:
		scale := a.DataType().(*arrow.Decimal128Type).Scale
		return func(i int) string { return Decimal128(a.Value(i), scale) }
	case *array.Decimal64:
		scale := a.DataType().(*arrow.Decimal64Type).Scale
		return func(i int) string { return Decimal128(decimal128.FromI64(int64(a.Value(i))), scale) }
	case *array.Decimal32:
		scale := a.DataType().(*arrow.Decimal32Type).Scale
		return func(i int) string { return Decimal128(decimal128.FromI64(int64(a.Value(i))), scale) }
	case *array.Decimal256:
		scale := a.DataType().(*arrow.Decimal256Type).Scale
		return func(i int) string { return a.Value(i).ToString(scale) }
	case *array.String:
		return a.Value
	case *array.LargeString:
		return a.Value
	case *array.StringView:
		return a.Value
	case *array.Binary:
		return func(i int) string { return string(a.Value(i)) }
	case *array.Boolean:
		return func(i int) string { return strconv.FormatBool(a.Value(i)) }
	case *array.Date32:
		return func(i int) string { return Date(a.Value(i)) }
	case *array.Date64:
		return func(i int) string { return a.Value(i).ToTime().UTC().Format(time.DateOnly) }
	case *array.Timestamp:
		toTime, err := a.DataType().(*arrow.TimestampType).GetToTimeFunc()
		if err != nil {
			return a.ValueStr
		}
		return func(i int) string { return toTime(a.Value(i)).UTC().Format("2006-01-02 15:04:05.999999999") }
	}
	return col.ValueStr
}

// nulls returns a function reporting whether row i of col is NULL. An
// array of Arrow's null type (SELECT NULL) has no validity bitmap, so its
// IsNull says false; every one of its rows is NULL.
func nulls(col arrow.Array) func(i int) bool {
	if col.DataType().ID() == arrow.NULL {
		return func(int) bool { return true }
	}
	return col.IsNull
}

// Float renders a float the way every format prints it: the shortest
// digits that read back to the same value, in plain notation for ordinary
// magnitudes. bits is 32 or 64.
func Float(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	if a := math.Abs(f); a != 0 && (a < 1e-4 || a >= 1e15) {
		return strconv.FormatFloat(f, 'g', -1, bits)
	}
	return strconv.FormatFloat(f, 'f', -1, bits)
}

// Decimal128 renders a decimal with exactly scale digits after the point.
func Decimal128(n decimal128.Num, scale int32) string {
	hi, lo := n.HighBits(), n.LowBits()
	// Fast path: the value fits in an int64, which is every TPC-DS money
	// column; the general path goes through math/big.
	if (hi == 0 && lo <= math.MaxInt64) || (hi == -1 && lo > math.MaxInt64) {
		return scaledInt(int64(lo), scale)
	}
	return n.ToString(scale)
}

// scaledInt renders v / 10^scale with scale digits after the point.
func scaledInt(v int64, scale int32) string {
	if scale <= 0 {
		s := strconv.FormatInt(v, 10)
		if scale < 0 && v != 0 {
			s += strings.Repeat("0", int(-scale))
		}
		return s
	}
	neg := v < 0
	var u uint64
	if neg {
		u = uint64(-v) // wraps correctly for MinInt64
	} else {
		u = uint64(v)
	}
	digits := strconv.FormatUint(u, 10)
	if len(digits) <= int(scale) {
		digits = strings.Repeat("0", int(scale)-len(digits)+1) + digits
	}
	cut := len(digits) - int(scale)
	var b strings.Builder
	b.Grow(len(digits) + 2)
	if neg {
		b.WriteByte('-')
	}
	b.WriteString(digits[:cut])
	b.WriteByte('.')
	b.WriteString(digits[cut:])
	return b.String()
}

// Date renders a Date32 (days since 1970-01-01) as YYYY-MM-DD.
func Date(d arrow.Date32) string {
	return time.Unix(int64(d)*86400, 0).UTC().Format(time.DateOnly)
}

// Value renders row i of col as the table format prints it, and reports
// whether it is NULL (then the text is "NULL"). It is meant for tests and
// single values; writers render whole columns without per-value dispatch.
func Value(col arrow.Array, i int) (string, bool) {
	if nulls(col)(i) {
		return "NULL", true
	}
	return render(col)(i), false
}

// Rows renders every row of a batch as strings, NULL as "NULL". It is what
// a test compares with an expected result.
func Rows(b arrow.RecordBatch) [][]string {
	n := int(b.NumRows())
	out := make([][]string, n)
	cells := make([]string, n*int(b.NumCols()))
	for r := range out {
		out[r] = cells[r*int(b.NumCols()) : (r+1)*int(b.NumCols())]
	}
	for c, col := range b.Columns() {
		f, isNull := render(col), nulls(col)
		for r := 0; r < n; r++ {
			if isNull(r) {
				out[r][c] = "NULL"
			} else {
				out[r][c] = f(r)
			}
		}
	}
	return out
}
