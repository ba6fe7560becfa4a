package expr

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// Casts follow MySQL where it is exact and are stricter where MySQL is
// lenient: a string that does not parse as the target type (cast('abc' as
// date), cast('x1' as signed)) is an error wrapping ErrInvalidValue that
// names the value, not a silent NULL or 0, so bad data is noticed. Decimal
// rescaling and float → decimal/integer round half away from zero; a
// value that does not fit the target is an ErrOverflow error. A string
// read as a number follows the one rule of number.go (the whole string,
// whitespace aside, is a decimal number); read as an integer it rounds
// half away from zero.

// NewCast converts x to type to (CAST(x AS to)). Casting to x's own type
// returns x.
func NewCast(x Expr, to arrow.DataType) (Expr, error) {
	if x == nil || to == nil {
		return nil, fmt.Errorf("%w: cast of a missing expression or to a missing type", ErrType)
	}
	if arrow.TypeEqual(x.DataType(), to) {
		return x, nil
	}
	if err := checkCast(x.DataType(), to); err != nil {
		return nil, err
	}
	return newCall("cast", to, castKernel{to: to}, x), nil
}

// castKernel evaluates CAST. implicit marks the casts NewCall inserts, so
// Rewrite can drop them and let NewCall derive them again for the new
// argument types.
type castKernel struct {
	to       arrow.DataType
	implicit bool
}

func (k castKernel) eval(ctx *Context, c *Call, batch arrow.RecordBatch) (arrow.Array, error) {
	a, err := c.Args[0].Eval(ctx, batch)
	if err == nil {
		err = checkType(c.Args[0], a)
	}
	if err != nil {
		return nil, err
	}
	defer a.Release()
	return castArray(ctx, a, k.to)
}

func isImplicitCast(e Expr) (Expr, bool) {
	if c, ok := e.(*Call); ok && c.Fn == "cast" {
		if k, ok := c.impl.(castKernel); ok && k.implicit {
			return c.Args[0], true
		}
	}
	return nil, false
}

// newImplicitCast is NewCast for the conversions NewCall inserts.
func newImplicitCast(x Expr, to arrow.DataType) (Expr, error) {
	e, err := NewCast(x, to)
	if c, ok := e.(*Call); ok && err == nil && c.Fn == "cast" && c.Args[0] == x {
		c.impl = castKernel{to: to, implicit: true}
	}
	return e, err
}

func castable(t arrow.DataType) bool {
	if CollationOf(t) != nil {
		return true
	}
	switch t.ID() {
	case arrow.NULL, arrow.BOOL, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT64,
		arrow.FLOAT64, arrow.DECIMAL128, arrow.STRING, arrow.DATE32:
		return true
	}
	return isDatetime(t) || isTime(t)
}

func checkCast(from, to arrow.DataType) error {
	if !castable(from) || !castable(to) {
		return fmt.Errorf("%w: CAST from %s to %s", ErrUnsupported, typeSQL(from), typeSQL(to))
	}
	if CollationOf(to) != nil && !isText(from) && !isNullType(from) {
		// MySQL: COLLATE applies to strings only.
		return fmt.Errorf("%w: COLLATE %s of a %s value; only strings have a collation", ErrType, CollationOf(to).name, typeSQL(from))
	}
	from, to = plainType(from), plainType(to)
	textual := func(t arrow.DataType) bool { return isString(t) || isTime(t) || isNullType(t) }
	if (isTime(from) && !textual(to)) || (isTime(to) && !textual(from)) {
		return fmt.Errorf("%w: CAST from %s to %s (a TIME converts to and from text only)", ErrUnsupported, typeSQL(from), typeSQL(to))
	}
	if (isTemporal(from) && to.ID() == arrow.BOOL) || (isTemporal(to) && from.ID() == arrow.BOOL) ||
		(isTemporal(from) && isUint(to)) || (isUint(from) && isTemporal(to)) {
		return fmt.Errorf("%w: CAST from %s to %s", ErrUnsupported, typeSQL(from), typeSQL(to))
	}
	return nil
}

// castArray converts a to type to; the result is a new reference.
func castArray(ctx *Context, a arrow.Array, to arrow.DataType) (arrow.Array, error) {
	from := a.DataType()
	if arrow.TypeEqual(from, to) {
		a.Retain()
		return a, nil
	}
	if err := checkCast(from, to); err != nil {
		return nil, err
	}
	if CollationOf(from) != nil {
		// The values are the storage's; the target decides the rest.
		return castArray(ctx, Storage(a), to)
	}
	if c := CollationOf(to); c != nil {
		s, err := castArray(ctx, a, tString)
		if err != nil {
			return nil, err
		}
		ss := s.(*array.String)
		for i := 0; i < ss.Len(); i++ {
			if ss.IsValid(i) {
				if err := c.check(ss.Value(i)); err != nil {
					s.Release()
					return nil, err
				}
			}
		}
		return Collated(to, s), nil
	}
	n := a.Len()
	if from.ID() == arrow.NULL || to.ID() == arrow.NULL || a.NullN() == n {
		return array.MakeArrayOfNull(ctx.Alloc, to, n), nil
	}
	switch {
	case isTime(from):
		return castTimeToString(ctx, a)
	case isTemporal(from):
		return castTemporalFrom(ctx, a, to)
	case isUint(from):
		return castFromUint(ctx, a, to)
	case isUint(to):
		return castToUint(ctx, a)
	case isTemporal(to) && from.ID() != arrow.STRING:
		return castNumberToTemporal(ctx, a, to)
	}
	switch from.ID() {
	case arrow.INT8:
		return castInt(ctx, vals[int8](a), a, to)
	case arrow.INT16:
		return castInt(ctx, vals[int16](a), a, to)
	case arrow.INT32:
		return castInt(ctx, vals[int32](a), a, to)
	case arrow.INT64:
		return castInt(ctx, vals[int64](a), a, to)
	case arrow.BOOL:
		b := a.(*array.Boolean)
		tmp := newFixed[int8](ctx.Alloc, arrow.PrimitiveTypes.Int8, n)
		for i := range tmp.vals {
			if b.Value(i) {
				tmp.vals[i] = 1
			}
		}
		tmp.andValidity(a)
		ia := tmp.finish()
		defer ia.Release()
		if to.ID() == arrow.STRING {
			return castInt(ctx, vals[int8](ia), ia, to)
		}
		return castInt(ctx, vals[int8](ia), ia, to)
	case arrow.FLOAT64:
		return castFloat(ctx, a.(*array.Float64), to)
	case arrow.DECIMAL128:
		return castDecimal(ctx, a.(*array.Decimal128), to)
	case arrow.STRING:
		return castString(ctx, a.(*array.String), to)
	}
	return nil, fmt.Errorf("%w: CAST from %s to %s", ErrUnsupported, typeSQL(from), typeSQL(to))
}

type intT interface {
	~int8 | ~int16 | ~int32 | ~int64
}

func castInt[S intT](ctx *Context, src []S, a arrow.Array, to arrow.DataType) (arrow.Array, error) {
	switch to.ID() {
	case arrow.INT8:
		return intToInt[S, int8](ctx, src, a, to, math.MinInt8, math.MaxInt8)
	case arrow.INT16:
		return intToInt[S, int16](ctx, src, a, to, math.MinInt16, math.MaxInt16)
	case arrow.INT32:
		return intToInt[S, int32](ctx, src, a, to, math.MinInt32, math.MaxInt32)
	case arrow.INT64:
		return intToInt[S, int64](ctx, src, a, to, math.MinInt64, math.MaxInt64)
	case arrow.FLOAT64:
		o := newFixed[float64](ctx.Alloc, to, len(src))
		for i, v := range src {
			o.vals[i] = float64(v)
		}
		o.andValidity(a)
		return o.finish(), nil
	case arrow.BOOL:
		o := newBool(ctx.Alloc, len(src))
		for i, v := range src {
			o.set(i, v != 0)
		}
		o.andValidity(a)
		return o.finish(), nil
	case arrow.DECIMAL128:
		d := to.(*arrow.Decimal128Type)
		o := newFixed[decimal128.Num](ctx.Alloc, to, len(src))
		o.andValidity(a)
		mul := pow10(d.Scale)
		for i, v := range src {
			if !o.isValid(i) {
				continue
			}
			r, ok := decMul(decimal128.FromI64(int64(v)), mul)
			if !ok || !fitsPrecision(r, d.Precision) {
				o.release()
				return nil, fmt.Errorf("%w: %d does not fit %s", ErrOverflow, v, typeSQL(to))
			}
			o.vals[i] = r
		}
		return o.finish(), nil
	case arrow.STRING:
		b := array.NewStringBuilder(ctx.Alloc)
		defer b.Release()
		b.Reserve(len(src))
		var buf []byte
		for i, v := range src {
			if validAt(a, i) {
				buf = strconv.AppendInt(buf[:0], int64(v), 10)
				b.BinaryBuilder.Append(buf)
			} else {
				b.AppendNull()
			}
		}
		return b.NewArray(), nil
	}
	return nil, fmt.Errorf("%w: CAST from %s to %s", ErrUnsupported, typeSQL(a.DataType()), typeSQL(to))
}

func intToInt[S, D intT](ctx *Context, src []S, a arrow.Array, to arrow.DataType, lo, hi int64) (arrow.Array, error) {
	o := newFixed[D](ctx.Alloc, to, len(src))
	o.andValidity(a)
	for i, v := range src {
		if int64(v) < lo || int64(v) > hi {
			if !o.isValid(i) {
				continue
			}
			o.release()
			return nil, fmt.Errorf("%w: %d does not fit %s", ErrOverflow, v, typeSQL(to))
		}
		o.vals[i] = D(v)
	}
	return o.finish(), nil
}

// int64Range reports whether a float rounds into an int64.
func roundFloatToInt(v float64) (int64, bool) {
	r := math.Round(v)
	if math.IsNaN(r) || r < -9.223372036854775808e18 || r >= 9.223372036854775808e18 {
		return 0, false
	}
	return int64(r), true
}

func castFloat(ctx *Context, a *array.Float64, to arrow.DataType) (arrow.Array, error) {
	src := a.Float64Values()
	n := len(src)
	switch to.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
		tmp := newFixed[int64](ctx.Alloc, tInt64, n)
		tmp.andValidity(a)
		for i, v := range src {
			if !tmp.isValid(i) {
				continue
			}
			r, ok := roundFloatToInt(v)
			if !ok {
				tmp.release()
				return nil, fmt.Errorf("%w: %g does not fit %s", ErrOverflow, v, typeSQL(to))
			}
			tmp.vals[i] = r
		}
		ia := tmp.finish()
		defer ia.Release()
		return castArray(ctx, ia, to)
	case arrow.BOOL:
		o := newBool(ctx.Alloc, n)
		for i, v := range src {
			o.set(i, v != 0)
		}
		o.andValidity(a)
		return o.finish(), nil
	case arrow.DECIMAL128:
		d := to.(*arrow.Decimal128Type)
		o := newFixed[decimal128.Num](ctx.Alloc, to, n)
		o.andValidity(a)
		for i, v := range src {
			if !o.isValid(i) {
				continue
			}
			r, ok := floatToDec(v, d)
			if !ok {
				o.release()
				return nil, fmt.Errorf("%w: %g does not fit %s", ErrOverflow, v, typeSQL(to))
			}
			o.vals[i] = r
		}
		return o.finish(), nil
	case arrow.STRING:
		b := array.NewStringBuilder(ctx.Alloc)
		defer b.Release()
		b.Reserve(n)
		for i, v := range src {
			if validAt(a, i) {
				b.Append(formatFloat(v))
			} else {
				b.AppendNull()
			}
		}
		return b.NewArray(), nil
	}
	return nil, fmt.Errorf("%w: CAST from DOUBLE to %s", ErrUnsupported, typeSQL(to))
}

// formatFloat prints a double the shortest way that reads back exactly,
// as MySQL does; -0 is 0, as MySQL prints it.
func formatFloat(v float64) string {
	if v == 0 {
		return "0"
	}
	if math.Abs(v) >= 1e15 || (v != 0 && math.Abs(v) < 1e-5) {
		return strconv.FormatFloat(v, 'e', -1, 64)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// floatToDec converts through the shortest decimal spelling of v, so
// 1.005e0 becomes 1.01 at scale 2 as in MySQL, not 1.00 from its binary
// value 1.00499999...
func floatToDec(v float64, d *arrow.Decimal128Type) (decimal128.Num, bool) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return decimal128.Num{}, false
	}
	if math.Abs(v) < 1e18 && d.Scale <= 2 {
		// Fast path for common money-like scales; exact when the scaled
		// value is far from a rounding boundary.
		sc := v * float64(int64(pow10(d.Scale).LowBits()))
		if math.Abs(sc-math.Trunc(sc)-0.5) > 1e-6 && math.Abs(sc-math.Trunc(sc)+0.5) > 1e-6 {
			r, _ := roundFloatToInt(sc)
			n := decimal128.FromI64(r)
			return n, fitsPrecision(n, d.Precision)
		}
	}
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(v, 'g', -1, 64))
	if !ok {
		return decimal128.Num{}, false
	}
	n, ok := ratToDec(r, d.Scale)
	return n, ok && fitsPrecision(n, d.Precision)
}

func castDecimal(ctx *Context, a *array.Decimal128, to arrow.DataType) (arrow.Array, error) {
	src := vals[decimal128.Num](a)
	n := len(src)
	s := a.DataType().(*arrow.Decimal128Type).Scale
	switch to.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
		tmp := newFixed[int64](ctx.Alloc, tInt64, n)
		tmp.andValidity(a)
		for i, v := range src {
			if !tmp.isValid(i) {
				continue
			}
			r, _ := decRescale(v, s, 0)
			if r.HighBits() != 0 && r.HighBits() != -1 || (r.HighBits() == 0) != (int64(r.LowBits()) >= 0) {
				tmp.release()
				return nil, fmt.Errorf("%w: %s does not fit %s", ErrOverflow, v.ToString(s), typeSQL(to))
			}
			tmp.vals[i] = int64(r.LowBits())
		}
		ia := tmp.finish()
		defer ia.Release()
		return castArray(ctx, ia, to)
	case arrow.FLOAT64:
		o := newFixed[float64](ctx.Alloc, to, n)
		for i, v := range src {
			o.vals[i] = DecimalToFloat(v, s)
		}
		o.andValidity(a)
		return o.finish(), nil
	case arrow.BOOL:
		o := newBool(ctx.Alloc, n)
		for i, v := range src {
			o.set(i, v.Sign() != 0)
		}
		o.andValidity(a)
		return o.finish(), nil
	case arrow.DECIMAL128:
		d := to.(*arrow.Decimal128Type)
		o := newFixed[decimal128.Num](ctx.Alloc, to, n)
		o.andValidity(a)
		for i, v := range src {
			if !o.isValid(i) {
				continue
			}
			r, ok := decRescale(v, s, d.Scale)
			if !ok || !fitsPrecision(r, d.Precision) {
				o.release()
				return nil, fmt.Errorf("%w: %s does not fit %s", ErrOverflow, v.ToString(s), typeSQL(to))
			}
			o.vals[i] = r
		}
		return o.finish(), nil
	case arrow.STRING:
		b := array.NewStringBuilder(ctx.Alloc)
		defer b.Release()
		b.Reserve(n)
		for i, v := range src {
			if validAt(a, i) {
				b.Append(v.ToString(s))
			} else {
				b.AppendNull()
			}
		}
		return b.NewArray(), nil
	}
	return nil, fmt.Errorf("%w: CAST from %s to %s", ErrUnsupported, typeSQL(a.DataType()), typeSQL(to))
}

func badValue(v string, to arrow.DataType) error {
	return fmt.Errorf("%w: cannot read %q as %s", ErrInvalidValue, v, typeSQL(to))
}

func castString(ctx *Context, a *array.String, to arrow.DataType) (arrow.Array, error) {
	n := a.Len()
	switch to.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.BOOL:
		tmp := newFixed[int64](ctx.Alloc, tInt64, n)
		tmp.andValidity(a)
		for i := 0; i < n; i++ {
			if !tmp.isValid(i) {
				continue
			}
			s, ok := numberText(a.Value(i))
			if !ok {
				tmp.release()
				return nil, badValue(a.Value(i), to)
			}
			v, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				f, ferr := strconv.ParseFloat(s, 64)
				r, ok := roundFloatToInt(f)
				if ferr != nil || !ok {
					tmp.release()
					return nil, fmt.Errorf("%w: %q does not fit %s", ErrOverflow, a.Value(i), typeSQL(to))
				}
				v = r
			}
			tmp.vals[i] = v
		}
		ia := tmp.finish()
		defer ia.Release()
		return castArray(ctx, ia, to)
	case arrow.FLOAT64:
		o := newFixed[float64](ctx.Alloc, to, n)
		o.andValidity(a)
		for i := 0; i < n; i++ {
			if !o.isValid(i) {
				continue
			}
			t, ok := numberText(a.Value(i))
			if !ok {
				o.release()
				return nil, badValue(a.Value(i), to)
			}
			f, err := strconv.ParseFloat(t, 64)
			if err != nil {
				o.release()
				return nil, fmt.Errorf("%w: %q does not fit DOUBLE", ErrOverflow, a.Value(i))
			}
			o.vals[i] = f
		}
		return o.finish(), nil
	case arrow.DECIMAL128:
		d := to.(*arrow.Decimal128Type)
		o := newFixed[decimal128.Num](ctx.Alloc, to, n)
		o.andValidity(a)
		for i := 0; i < n; i++ {
			if !o.isValid(i) {
				continue
			}
			t, ok := numberText(a.Value(i))
			var r *big.Rat
			if ok {
				r, ok = new(big.Rat).SetString(t)
			}
			if !ok {
				o.release()
				return nil, badValue(a.Value(i), to)
			}
			v, ok := ratToDec(r, d.Scale)
			if !ok || !fitsPrecision(v, d.Precision) {
				o.release()
				return nil, fmt.Errorf("%w: %s does not fit %s", ErrOverflow, a.Value(i), typeSQL(to))
			}
			o.vals[i] = v
		}
		return o.finish(), nil
	case arrow.DATE32:
		o := newFixed[arrow.Date32](ctx.Alloc, to, n)
		o.andValidity(a)
		for i := 0; i < n; i++ {
			if !o.isValid(i) {
				continue
			}
			d, ok := parseDate(a.Value(i))
			if !ok {
				o.release()
				return nil, badValue(a.Value(i), to)
			}
			o.vals[i] = d
		}
		return o.finish(), nil
	case arrow.TIME64:
		o := newFixed[arrow.Time64](ctx.Alloc, to, n)
		o.andValidity(a)
		for i := 0; i < n; i++ {
			if !o.isValid(i) {
				continue
			}
			us, ok := parseTime(a.Value(i))
			if !ok {
				o.release()
				return nil, badValue(a.Value(i), to)
			}
			o.vals[i] = arrow.Time64(us)
		}
		return o.finish(), nil
	case arrow.TIMESTAMP:
		o := newFixed[arrow.Timestamp](ctx.Alloc, to, n)
		o.andValidity(a)
		for i := 0; i < n; i++ {
			if !o.isValid(i) {
				continue
			}
			us, ok := parseDatetime(a.Value(i))
			if !ok {
				o.release()
				return nil, badValue(a.Value(i), to)
			}
			o.vals[i] = arrow.Timestamp(us)
		}
		return o.finish(), nil
	}
	return nil, fmt.Errorf("%w: CAST from VARCHAR to %s", ErrUnsupported, typeSQL(to))
}

// parseDate reads 'YYYY-MM-DD' (one-digit month and day allowed; a time
// part after a space or 'T' is ignored) and checks the day exists.
func parseDate(s string) (arrow.Date32, bool) {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, " T"); i >= 0 {
		s = s[:i]
	}
	parts := strings.Split(s, "-")
	if len(parts) != 3 {
		return 0, false
	}
	var f [3]int
	for k, p := range parts {
		if p == "" || len(p) > 4 {
			return 0, false
		}
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 {
			return 0, false
		}
		f[k] = v
	}
	y, m, d := f[0], f[1], f[2]
	if m < 1 || m > 12 || d < 1 || d > daysIn(y, time.Month(m)) {
		return 0, false
	}
	return dateFromCivil(y, time.Month(m), d), true
}

// DecimalToFloat is the double nearest to v of scale s, as MySQL converts
// (CAST(1.005 AS DOUBLE) is 1.005). An unscaled value below 2^53 and a
// power of ten up to 10^22 are both exact doubles, so one division
// rounds correctly; arrow's ToFloat64 multiplies by an inexact 10^-s
// (1.0050000000000001). Other values go through their decimal text.
func DecimalToFloat(v num, s int32) float64 {
	const exact = 1 << 53
	if hi := v.HighBits(); (hi == 0 || hi == -1) && s >= 0 && s <= 22 {
		if lo := int64(v.LowBits()); (hi == 0) == (lo >= 0) && lo < exact && lo > -exact {
			return float64(lo) / math.Pow10(int(s))
		}
	}
	f, err := strconv.ParseFloat(v.ToString(s), 64)
	if err != nil {
		return v.ToFloat64(s)
	}
	return f
}
