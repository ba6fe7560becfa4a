package expr

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// NewLiteral returns the constant value of type typ. value follows the
// conventions of Literal; Go ints are accepted for any integer type and
// converted. A nil typ is inferred from value (int → BIGINT, string →
// VARCHAR, ...).
func NewLiteral(value any, typ arrow.DataType) *Literal {
	if typ == nil {
		typ = inferType(value)
	}
	if value == nil {
		return &Literal{Type: typ}
	}
	return &Literal{Value: normalizeValue(value, typ), Type: typ}
}

// ZeroOf is a non-NULL constant of type t (0, the empty string, FALSE, the epoch
// date), the stand-in for NULL in keys such as (x IS NULL,
// COALESCE(x, zero)) that let a hash table match NULLs to each other;
// false for a type without one.
func ZeroOf(t arrow.DataType) (*Literal, bool) {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT64,
		arrow.FLOAT64, arrow.DECIMAL128, arrow.DATE32, arrow.TIMESTAMP, arrow.TIME64:
		return NewLiteral(int64(0), t), true
	case arrow.STRING:
		return NewLiteral("", t), true
	case arrow.BOOL:
		return NewLiteral(false, t), true
	}
	if CollationOf(t) != nil {
		return NewLiteral("", t), true
	}
	return nil, false
}

// Null returns a NULL of type typ; arrow.Null is the untyped NULL.
func Null(typ arrow.DataType) *Literal {
	if typ == nil {
		typ = tNull
	}
	return &Literal{Type: typ}
}

func inferType(v any) arrow.DataType {
	switch v.(type) {
	case bool:
		return tBool
	case int32:
		return tInt32
	case int, int64:
		return tInt64
	case float64, float32:
		return tFloat64
	case string:
		return tString
	case arrow.Date32:
		return tDate
	case arrow.Timestamp:
		return DatetimeType
	case arrow.Time64:
		return TimeType
	case uint64:
		return tUint64
	}
	return tNull
}

// normalizeValue converts the Go integer kinds a caller may hand in to the
// one representation Literal uses for typ.
func normalizeValue(v any, typ arrow.DataType) any {
	var i64 int64
	isI := true
	switch x := v.(type) {
	case int:
		i64 = int64(x)
	case int8:
		i64 = int64(x)
	case int16:
		i64 = int64(x)
	case int32:
		i64 = int64(x)
	case int64:
		i64 = x
	default:
		isI = false
	}
	if isI {
		switch typ.ID() {
		case arrow.INT8:
			return int8(i64)
		case arrow.INT16:
			return int16(i64)
		case arrow.INT32:
			return int32(i64)
		case arrow.INT64:
			return i64
		case arrow.FLOAT64:
			return float64(i64)
		case arrow.DATE32:
			return arrow.Date32(i64)
		case arrow.TIMESTAMP:
			return arrow.Timestamp(i64)
		case arrow.TIME64:
			return arrow.Time64(i64)
		case arrow.UINT64:
			return uint64(i64)
		case arrow.DECIMAL128:
			d := typ.(*arrow.Decimal128Type)
			return decimal128.FromI64(i64).Mul(decimal128.GetScaleMultiplier(int(d.Scale)))
		}
	}
	if f, ok := v.(float32); ok {
		v = float64(f)
	}
	switch typ.ID() {
	case arrow.DECIMAL128:
		d := typ.(*arrow.Decimal128Type)
		switch x := v.(type) {
		case float64:
			if n, ok := floatToDec(x, d); ok {
				return n
			}
		case string:
			if t, ok := numberText(x); ok {
				if r, ok := new(big.Rat).SetString(t); ok {
					if n, ok := ratToDec(r, d.Scale); ok {
						return n
					}
				}
			}
		}
	case arrow.DATE32:
		if x, ok := v.(string); ok {
			if d, ok := parseDate(x); ok {
				return d
			}
		}
	case arrow.TIMESTAMP:
		if x, ok := v.(string); ok {
			if us, ok := parseDatetime(x); ok {
				return arrow.Timestamp(us)
			}
		}
	case arrow.TIME64:
		if x, ok := v.(string); ok {
			if us, ok := parseTime(x); ok {
				return arrow.Time64(us)
			}
		}
	}
	return v
}

// DataType implements Expr.
func (l *Literal) DataType() arrow.DataType { return l.Type }

// Children implements Expr.
func (l *Literal) Children() []Expr { return nil }

// Eval implements Expr: the constant repeated for every row of batch.
func (l *Literal) Eval(ctx *Context, batch arrow.RecordBatch) (arrow.Array, error) {
	return l.broadcast(ctx.Alloc, int(batch.NumRows()))
}

// broadcast builds an array of n copies of the literal.
func (l *Literal) broadcast(alloc memory.Allocator, n int) (arrow.Array, error) {
	if c := CollationOf(l.Type); c != nil {
		s, err := (&Literal{Value: l.Value, Type: tString}).broadcast(alloc, n)
		if err != nil {
			return nil, err
		}
		return Collated(l.Type, s), nil
	}
	if l.Value == nil {
		return array.MakeArrayOfNull(alloc, l.Type, n), nil
	}
	switch l.Type.ID() {
	case arrow.BOOL:
		v, ok := l.Value.(bool)
		if !ok {
			return nil, badLiteral(l)
		}
		o := newBool(alloc, n)
		if v {
			for i := range o.vals {
				o.vals[i] = 0xff
			}
		}
		return o.finish(), nil
	case arrow.INT8:
		return fillAs[int8](alloc, l.Type, n, l.Value)
	case arrow.INT16:
		return fillAs[int16](alloc, l.Type, n, l.Value)
	case arrow.INT32:
		return fillAs[int32](alloc, l.Type, n, l.Value)
	case arrow.INT64:
		return fillAs[int64](alloc, l.Type, n, l.Value)
	case arrow.FLOAT64:
		return fillAs[float64](alloc, l.Type, n, l.Value)
	case arrow.DATE32:
		return fillAs[arrow.Date32](alloc, l.Type, n, l.Value)
	case arrow.TIMESTAMP:
		return fillAs[arrow.Timestamp](alloc, l.Type, n, l.Value)
	case arrow.TIME64:
		return fillAs[arrow.Time64](alloc, l.Type, n, l.Value)
	case arrow.UINT64:
		return fillAs[uint64](alloc, l.Type, n, l.Value)
	case arrow.DECIMAL128:
		return fillAs[decimal128.Num](alloc, l.Type, n, l.Value)
	case arrow.STRING:
		s, ok := l.Value.(string)
		if !ok {
			return nil, badLiteral(l)
		}
		b := array.NewStringBuilder(alloc)
		defer b.Release()
		b.ReserveData(len(s) * n)
		b.Reserve(n)
		for i := 0; i < n; i++ {
			b.Append(s)
		}
		return b.NewArray(), nil
	}
	return nil, fmt.Errorf("%w: literal of type %s", ErrUnsupported, typeSQL(l.Type))
}

func badLiteral(l *Literal) error {
	return fmt.Errorf("%w: literal value %v (%T) does not match its type %s", ErrType, l.Value, l.Value, typeSQL(l.Type))
}

func fillAs[T arrow.FixedWidthType](alloc memory.Allocator, typ arrow.DataType, n int, v any) (arrow.Array, error) {
	x, ok := v.(T)
	if !ok {
		return nil, badLiteral(&Literal{Value: v, Type: typ})
	}
	return fill(alloc, typ, n, x), nil
}

func fill[T arrow.FixedWidthType](alloc memory.Allocator, typ arrow.DataType, n int, v T) arrow.Array {
	o := newFixed[T](alloc, typ, n)
	for i := range o.vals {
		o.vals[i] = v
	}
	return o.finish()
}

// String implements Expr, in SQL spelling: 'abc', 12.50, DATE '2000-01-01',
// NULL.
func (l *Literal) String() string {
	if l.Value == nil {
		return "NULL"
	}
	switch v := l.Value.(type) {
	case bool:
		if v {
			return "TRUE"
		}
		return "FALSE"
	case string:
		q := "'" + strings.ReplaceAll(v, "'", "''") + "'"
		if c := CollationOf(l.Type); c != nil {
			q += " COLLATE " + c.name
		}
		return q
	case decimal128.Num:
		return v.ToString(l.Type.(*arrow.Decimal128Type).Scale)
	case arrow.Date32:
		return "DATE '" + v.FormattedString() + "'"
	case arrow.Timestamp:
		if isTimestampTZ(l.Type) {
			return "CAST('" + formatDatetime(int64(v)) + "' AS TIMESTAMP)"
		}
		return "TIMESTAMP '" + formatDatetime(int64(v)) + "'"
	case arrow.Time64:
		return "TIME '" + formatTime(int64(v)) + "'"
	case float64:
		if math.Trunc(v) == v && math.Abs(v) < 1e15 {
			return strconv.FormatFloat(v, 'f', 1, 64)
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return fmt.Sprint(l.Value)
}

// ScalarFromArray returns row i of a as a Go value in the Literal
// conventions (nil for NULL).
func ScalarFromArray(a arrow.Array, i int) any {
	if IsNull(a, i) {
		return nil
	}
	switch x := a.(type) {
	case *array.Boolean:
		return x.Value(i)
	case *array.Int8:
		return x.Value(i)
	case *array.Int16:
		return x.Value(i)
	case *array.Int32:
		return x.Value(i)
	case *array.Int64:
		return x.Value(i)
	case *array.Float32:
		return float64(x.Value(i))
	case *array.Float64:
		return x.Value(i)
	case *array.Decimal128:
		return x.Value(i)
	case *array.String:
		return strings.Clone(x.Value(i))
	case *array.LargeString:
		return strings.Clone(x.Value(i))
	case *array.Date32:
		return x.Value(i)
	case *array.Timestamp:
		return x.Value(i)
	case *array.Time64:
		return x.Value(i)
	case *array.Uint64:
		return x.Value(i)
	case *array.Binary:
		return string(x.Value(i))
	case *CollatedArray:
		return ScalarFromArray(x.Storage(), i)
	}
	return nil
}
