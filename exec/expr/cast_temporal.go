package expr

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// Casts of DATETIME/TIMESTAMP, of DATE to numbers and back, and of BIGINT
// UNSIGNED, with MySQL's rules:
//   - DATE ↔ DATETIME: midnight / the date part; DATETIME ↔ TIMESTAMP keep
//     the value (the session time zone is UTC).
//   - a DATE as a number is YYYYMMDD, a DATETIME YYYYMMDDhhmmss (with the
//     microseconds as a fraction for DECIMAL and DOUBLE; an integer rounds
//     them, as MySQL 8 does).
//   - a number as a date is read the way MySQL's number_to_datetime reads
//     it: YYYYMMDD or YYMMDD, YYYYMMDDhhmmss or YYMMDDhhmmss (years 70-99
//     are 19xx, 00-69 20xx); a fraction gives microseconds. Anything else,
//     and a date that does not exist, is an error naming the value (MySQL
//     gives NULL and a warning).
//   - CAST of a negative integer AS UNSIGNED is its two's complement
//     (MySQL's documented CAST(1-2 AS UNSIGNED) = 18446744073709551615);
//     a negative DECIMAL, DOUBLE or string, and a BIGINT UNSIGNED past
//     BIGINT read as signed, are errors.

// castTemporalFrom converts a DATE or DATETIME/TIMESTAMP array.
func castTemporalFrom(ctx *Context, a arrow.Array, to arrow.DataType) (arrow.Array, error) {
	n := a.Len()
	// Everything goes through microseconds since 1970.
	us := make([]int64, n)
	if a.DataType().ID() == arrow.DATE32 {
		for i, d := range vals[arrow.Date32](a) {
			us[i] = int64(d) * microsPerDay
		}
	} else {
		for i, v := range vals[arrow.Timestamp](a) {
			us[i] = int64(v)
		}
	}
	isDate := a.DataType().ID() == arrow.DATE32
	switch {
	case to.ID() == arrow.DATE32:
		o := newFixed[arrow.Date32](ctx.Alloc, to, n)
		for i, v := range us {
			days, _ := splitMicros(v)
			o.vals[i] = arrow.Date32(days)
		}
		o.andValidity(a)
		return o.finish(), nil
	case isDatetime(to):
		o := newFixed[arrow.Timestamp](ctx.Alloc, to, n)
		for i, v := range us {
			o.vals[i] = arrow.Timestamp(v)
		}
		o.andValidity(a)
		return o.finish(), nil
	case to.ID() == arrow.STRING:
		b := array.NewStringBuilder(ctx.Alloc)
		defer b.Release()
		b.Reserve(n)
		var buf []byte
		for i, v := range us {
			if !validAt(a, i) {
				b.AppendNull()
				continue
			}
			if isDate {
				buf = appendDate(buf[:0], floorDiv(v, microsPerDay))
			} else {
				buf = appendDatetime(buf[:0], v)
			}
			b.BinaryBuilder.Append(buf)
		}
		return b.NewArray(), nil
	}
	// A number: YYYYMMDD[hhmmss] with the microseconds as a fraction. An
	// integer rounds the DATETIME to the second first (MySQL's
	// TIME_to_ulonglong_datetime_round: 23:59:59.5 is the next day); a
	// DECIMAL or DOUBLE keeps the fraction.
	if !isDate && isInt(to) {
		for i, v := range us {
			us[i] = floorDiv(v+microsPerSecond/2, microsPerSecond) * microsPerSecond
		}
	}
	dec := decType(20, 6)
	o := newFixed[num](ctx.Alloc, dec, n)
	for i, v := range us {
		days, tod := splitMicros(v)
		y, m, d := civilFromDays(days)
		ymd := y*10000 + m*100 + d
		if isDate {
			o.vals[i] = decimal128.FromI64(ymd).Mul(pow10(6))
			continue
		}
		h, mi, s, f := clock(tod)
		whole := decimal128.FromI64(ymd).Mul(decimal128.FromI64(1_000_000)).Add(decimal128.FromI64(h*10000 + mi*100 + s))
		o.vals[i] = whole.Mul(pow10(6)).Add(decimal128.FromI64(f))
	}
	o.andValidity(a)
	d := o.finish()
	defer d.Release()
	return castArray(ctx, d, to)
}

// numberToDatetime reads the integer part ip (and microseconds frac) of a
// number the way MySQL's number_to_datetime does.
func numberToDatetime(ip, frac int64) (int64, bool) {
	const yy = 70
	var v int64
	switch {
	case ip < 101:
		return 0, false
	case ip <= (yy-1)*10000+1231:
		v = (ip + 20000000) * 1000000
	case ip < yy*10000+101:
		return 0, false
	case ip <= 991231:
		v = (ip + 19000000) * 1000000
	case ip < 10000101:
		return 0, false
	case ip <= 99991231:
		v = ip * 1000000
	case ip < 101000000:
		return 0, false
	case ip <= (yy-1)*10000000000+1231235959:
		v = ip + 20000000000000
	case ip < yy*10000000000+101000000:
		return 0, false
	case ip <= 991231235959:
		v = ip + 19000000000000
	case ip <= 99991231235959:
		v = ip
	default:
		return 0, false
	}
	ymd, hms := v/1000000, v%1000000
	y, m, d := ymd/10000, ymd/100%100, ymd%100
	h, mi, s := hms/10000, hms/100%100, hms%100
	if y < 1 || m < 1 || m > 12 || d < 1 || d > int64(daysIn(int(y), time.Month(m))) || h > 23 || mi > 59 || s > 59 {
		return 0, false
	}
	days := int64(dateFromCivil(int(y), time.Month(m), int(d)))
	return days*microsPerDay + h*microsPerHour + mi*microsPerMinute + s*microsPerSecond + frac, true
}

// castNumberToTemporal converts a numeric array to DATE or DATETIME.
func castNumberToTemporal(ctx *Context, a arrow.Array, to arrow.DataType) (arrow.Array, error) {
	// Exact integer part and microseconds, through DECIMAL(38,6).
	d, err := castArray(ctx, a, decType(maxDecimalPrecision, 6))
	if err != nil {
		return nil, err
	}
	defer d.Release()
	src := vals[num](d)
	n := len(src)
	us := newFixed[arrow.Timestamp](ctx.Alloc, DatetimeType, n)
	us.andValidity(a)
	for i, v := range src {
		if !us.isValid(i) {
			continue
		}
		q, r := v.Div(pow10(6))
		ok := v.Sign() >= 0 && q.HighBits() == 0 && q.LowBits() < 1<<62
		var t int64
		if ok {
			t, ok = numberToDatetime(int64(q.LowBits()), int64(r.LowBits()))
		}
		if !ok {
			us.release()
			return nil, fmt.Errorf("%w: cannot read %s as %s", ErrInvalidValue, ScalarString(a, i), typeSQL(to))
		}
		us.vals[i] = arrow.Timestamp(t)
	}
	t := us.finish()
	defer t.Release()
	return castArray(ctx, t, to)
}

// castToUint converts a numeric or string array to BIGINT UNSIGNED.
func castToUint(ctx *Context, a arrow.Array) (arrow.Array, error) {
	n := a.Len()
	o := newFixed[uint64](ctx.Alloc, tUint64, n)
	o.andValidity(a)
	switch a.DataType().ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.BOOL:
		ia, err := castArray(ctx, a, tInt64)
		if err != nil {
			o.release()
			return nil, err
		}
		defer ia.Release()
		for i, v := range vals[int64](ia) {
			o.vals[i] = uint64(v) // two's complement, as MySQL
		}
		return o.finish(), nil
	}
	// DECIMAL, DOUBLE and strings: exactly, through DECIMAL(38,0).
	d, err := castArray(ctx, a, decType(maxDecimalPrecision, 0))
	if err != nil {
		o.release()
		return nil, err
	}
	defer d.Release()
	for i, v := range vals[num](d) {
		if !o.isValid(i) {
			continue
		}
		if v.Sign() < 0 || v.HighBits() != 0 {
			o.release()
			return nil, fmt.Errorf("%w: %s does not fit BIGINT UNSIGNED", ErrOverflow, ScalarString(a, i))
		}
		o.vals[i] = v.LowBits()
	}
	return o.finish(), nil
}

// castFromUint converts BIGINT UNSIGNED to the other types.
func castFromUint(ctx *Context, a arrow.Array, to arrow.DataType) (arrow.Array, error) {
	src := vals[uint64](a)
	n := len(src)
	switch {
	case to.ID() == arrow.STRING:
		b := array.NewStringBuilder(ctx.Alloc)
		defer b.Release()
		b.Reserve(n)
		var buf []byte
		for i, v := range src {
			if validAt(a, i) {
				buf = strconv.AppendUint(buf[:0], v, 10)
				b.BinaryBuilder.Append(buf)
			} else {
				b.AppendNull()
			}
		}
		return b.NewArray(), nil
	case to.ID() == arrow.FLOAT64:
		o := newFixed[float64](ctx.Alloc, to, n)
		for i, v := range src {
			o.vals[i] = float64(v)
		}
		o.andValidity(a)
		return o.finish(), nil
	case to.ID() == arrow.BOOL:
		o := newBool(ctx.Alloc, n)
		for i, v := range src {
			o.set(i, v != 0)
		}
		o.andValidity(a)
		return o.finish(), nil
	}
	// Integers, decimals and dates through DECIMAL(20,0).
	o := newFixed[num](ctx.Alloc, decType(20, 0), n)
	for i, v := range src {
		o.vals[i] = decimal128.FromU64(v)
	}
	o.andValidity(a)
	d := o.finish()
	defer d.Release()
	if isInt(to) {
		for i, v := range src {
			if v > math.MaxInt64 && validAt(a, i) {
				return nil, fmt.Errorf("%w: %d does not fit %s", ErrOverflow, v, typeSQL(to))
			}
		}
	}
	return castArray(ctx, d, to)
}

// ScalarString spells row i of a for messages.
func ScalarString(a arrow.Array, i int) string {
	v := ScalarFromArray(a, i)
	if v == nil {
		return "NULL"
	}
	return NewLiteral(v, a.DataType()).String()
}

// castTimeToString spells TIME values.
func castTimeToString(ctx *Context, a arrow.Array) (arrow.Array, error) {
	b := array.NewStringBuilder(ctx.Alloc)
	defer b.Release()
	b.Reserve(a.Len())
	for i, v := range vals[arrow.Time64](a) {
		if validAt(a, i) {
			b.Append(formatTime(int64(v)))
		} else {
			b.AppendNull()
		}
	}
	return b.NewArray(), nil
}
