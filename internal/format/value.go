package format

import (
	"fmt"
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
		return timestampRenderer(a)
	case *array.Time64:
		return time64Renderer(a)
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
// magnitudes; -0 is 0, as MySQL prints it. bits is 32 or 64.
func Float(f float64, bits int) string {
	switch {
	case f == 0:
		return "0"
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

// timestampRenderer renders MySQL's DATETIME and TIMESTAMP (Arrow
// timestamps; those with a time zone in UTC, fsql's session zone) as
// 'YYYY-MM-DD HH:MM:SS', with the fraction only when it is not zero and
// then with all the digits of the unit (six for microseconds), as MySQL
// prints a DATETIME(6).
func timestampRenderer(a *array.Timestamp) func(i int) string {
	typ := a.DataType().(*arrow.TimestampType)
	toTime, err := typ.GetToTimeFunc()
	if err != nil {
		return a.ValueStr
	}
	digits := map[arrow.TimeUnit]int{arrow.Second: 0, arrow.Millisecond: 3, arrow.Microsecond: 6, arrow.Nanosecond: 9}[typ.Unit]
	layouts := map[int]string{3: ".000", 6: ".000000", 9: ".000000000"}
	return func(i int) string {
		t := toTime(a.Value(i)).UTC()
		if t.Nanosecond() == 0 || digits == 0 {
			return t.Format(time.DateTime)
		}
		return t.Format(time.DateTime + layouts[digits])
	}
}

// time64Renderer renders MySQL's TIME (an Arrow Time64) as 'HH:MM:SS',
// with the fraction only when it is not zero, as timestamps are.
func time64Renderer(a *array.Time64) func(i int) string {
	perSecond := int64(1_000_000)
	digits := 6
	if a.DataType().(*arrow.Time64Type).Unit == arrow.Nanosecond {
		perSecond, digits = 1_000_000_000, 9
	}
	return func(i int) string {
		v := int64(a.Value(i))
		neg := v < 0
		if neg {
			v = -v
		}
		s, frac := v/perSecond, v%perSecond
		out := fmt.Sprintf("%02d:%02d:%02d", s/3600, s/60%60, s%60)
		if frac != 0 {
			out += fmt.Sprintf(".%0*d", digits, frac)
		}
		if neg {
			out = "-" + out
		}
		return out
	}
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
