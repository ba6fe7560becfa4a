package expr

import (
	"fmt"
	"math"
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
		case arrow.DECIMAL128:
			d := typ.(*arrow.Decimal128Type)
			return decimal128.FromI64(i64).Mul(decimal128.GetScaleMultiplier(int(d.Scale)))
		}
	}
	if f, ok := v.(float32); ok {
		return float64(f)
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
	if l.Value == nil {
		return array.MakeArrayOfNull(alloc, l.Type, n), nil
	}
	switch l.Type.ID() {
	case arrow.BOOL:
		o := newBool(alloc, n)
		if l.Value.(bool) {
			for i := range o.vals {
				o.vals[i] = 0xff
			}
		}
		return o.finish(), nil
	case arrow.INT8:
		return fill(alloc, l.Type, n, l.Value.(int8)), nil
	case arrow.INT16:
		return fill(alloc, l.Type, n, l.Value.(int16)), nil
	case arrow.INT32:
		return fill(alloc, l.Type, n, l.Value.(int32)), nil
	case arrow.INT64:
		return fill(alloc, l.Type, n, l.Value.(int64)), nil
	case arrow.FLOAT64:
		return fill(alloc, l.Type, n, l.Value.(float64)), nil
	case arrow.DATE32:
		return fill(alloc, l.Type, n, l.Value.(arrow.Date32)), nil
	case arrow.DECIMAL128:
		return fill(alloc, l.Type, n, l.Value.(decimal128.Num)), nil
	case arrow.STRING:
		s := l.Value.(string)
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
		return "'" + strings.ReplaceAll(v, "'", "''") + "'"
	case decimal128.Num:
		return v.ToString(l.Type.(*arrow.Decimal128Type).Scale)
	case arrow.Date32:
		return "DATE '" + v.FormattedString() + "'"
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
	if a.IsNull(i) {
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
	}
	return nil
}
