package expr

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Date functions. Those of the calendar (YEAR, MONTH, WEEK, LAST_DAY,
// ...) take a DATE; a DATETIME or TIMESTAMP gives its date part and a
// string is read as a date. Those of the clock (HOUR, MINUTE, SECOND,
// MICROSECOND) take a DATETIME; a DATE is midnight and a string is read as
// a DATETIME or, failing that, as a time 'hh:mm:ss'. Civil-date
// conversions use integer arithmetic (Howard Hinnant's algorithms), not
// time.Time, to stay cheap per row.
var dateBinders = map[string]binder{
	"year": bindDatePart, "month": bindDatePart, "day": bindDatePart,
	"dayofmonth": bindDatePart, "quarter": bindDatePart, "dayofweek": bindDatePart,
	"weekday": bindDatePart, "dayofyear": bindDatePart, "to_days": bindDatePart,
	"extract_year": bindDatePart, "extract_month": bindDatePart, "extract_day": bindDatePart,
	"extract_quarter": bindDatePart,
	"hour":            bindClockPart, "minute": bindClockPart, "second": bindClockPart, "microsecond": bindClockPart,
	"date_add": bindDateAdd, "date_sub": bindDateAdd,
	"date_add_month": bindDateAdd, "date_sub_month": bindDateAdd,
	"date_add_year": bindDateAdd, "date_sub_year": bindDateAdd,
	"date_add_micros": bindDateAdd, "date_sub_micros": bindDateAdd,
}

// NewDateArith builds date ± INTERVAL n unit for the units MICROSECOND,
// SECOND, MINUTE, HOUR, DAY, WEEK, MONTH, QUARTER and YEAR; any other unit
// is ErrUnsupported. The result is a DATE when date is a DATE and the unit
// is a day or longer, else a DATETIME (MySQL's rule). A string is read as
// a DATETIME when it is a constant with a time part or the unit is
// shorter than a day, else as a DATE. SECOND keeps a fraction of n (1.5
// SECOND is 1500000 microseconds); the other units round n to an integer.
func NewDateArith(date, n Expr, unit string, subtract bool) (Expr, error) {
	fn := func(kind string) string {
		base := "date_add"
		if subtract {
			base = "date_sub"
		}
		if kind == "" {
			return base
		}
		return base + "_" + kind
	}
	times := func(k int64) (Expr, error) {
		if k == 1 {
			return n, nil
		}
		r, err := roundedInt("INTERVAL", n)
		if err != nil {
			return nil, err
		}
		return NewCall("*", r, NewLiteral(k, tInt64))
	}
	var kind string
	var m Expr
	var err error
	switch strings.ToLower(unit) {
	case "microsecond":
		kind, m = "micros", n
	case "second":
		// Seconds keep their fraction: n * 1000000 microseconds, rounded.
		kind = "micros"
		if isInt(n.DataType()) || isNullType(n.DataType()) {
			m, err = times(microsPerSecond)
		} else {
			x, cerr := numericArg("INTERVAL", []Expr{n}, n)
			if cerr != nil {
				return nil, cerr
			}
			m, err = NewCall("*", x, NewLiteral(microsPerSecond, tInt64))
		}
	case "minute":
		kind = "micros"
		m, err = times(microsPerMinute)
	case "hour":
		kind = "micros"
		m, err = times(microsPerHour)
	case "day":
		m = n
	case "week":
		if isTime(date.DataType()) {
			// MariaDB answers NULL for a TIME ± WEEK, as for the
			// calendar units (timeAdd).
			return Null(TimeType), nil
		}
		m, err = times(7)
	case "month":
		kind, m = "month", n
	case "quarter":
		kind = "month"
		m, err = times(3)
	case "year":
		kind, m = "year", n
	default:
		return nil, fmt.Errorf("%w: INTERVAL unit %s (fsql supports MICROSECOND, SECOND, MINUTE, HOUR, DAY, WEEK, MONTH, QUARTER, YEAR)", ErrUnsupported, unit)
	}
	if err != nil {
		return nil, err
	}
	return NewCall(fn(kind), date, m)
}

// roundedInt reads a number argument as BIGINT (rounding half away from
// zero), strings under the rule for numbers.
func roundedInt(fn string, e Expr) (Expr, error) {
	t := e.DataType()
	if !isNumeric(t) && !isNullType(t) && !isText(t) && t.ID() != arrow.BOOL {
		return nil, argErr(fn, []Expr{e}, "expects a number")
	}
	return coerce(e, tInt64)
}

// dateArg reads e as a DATE: a DATETIME or TIMESTAMP gives its date part,
// a string is parsed.
func dateArg(fn string, args []Expr, e Expr) (Expr, error) {
	t := e.DataType()
	if isTemporal(t) || isText(t) || isNullType(t) {
		return coerce(e, tDate)
	}
	return nil, argErr(fn, args, "expects a DATE")
}

// datetimeArg reads e as a DATETIME: a TIMESTAMP stays as it is (both are
// microseconds in UTC), a DATE is midnight, a string is parsed.
func datetimeArg(fn string, args []Expr, e Expr) (Expr, error) {
	t := e.DataType()
	switch {
	case isDatetime(t):
		return e, nil
	case t.ID() == arrow.DATE32, isText(t), isNullType(t):
		return coerce(e, DatetimeType)
	}
	return nil, argErr(fn, args, "expects a DATE or DATETIME")
}

func bindDatePart(fn string, args []Expr) (Expr, error) {
	if err := arity(fn, args, 1, 1); err != nil {
		return nil, err
	}
	a, err := dateArg(fn, args, args[0])
	if err != nil {
		return nil, err
	}
	part := strings.TrimPrefix(fn, "extract_")
	if part == "dayofmonth" {
		part = "day"
	}
	var f func(int64) int64
	switch part {
	case "year":
		f = func(d int64) int64 { y, _, _ := civilFromDays(d); return y }
	case "month":
		f = func(d int64) int64 { _, m, _ := civilFromDays(d); return m }
	case "quarter":
		f = func(d int64) int64 { _, m, _ := civilFromDays(d); return (m + 2) / 3 }
	case "day":
		f = func(d int64) int64 { _, _, dd := civilFromDays(d); return dd }
	case "dayofweek":
		f = func(d int64) int64 { return floorMod(d+4, 7) + 1 } // 1 = Sunday
	case "weekday":
		f = weekdayMon0
	case "dayofyear":
		f = dayOfYear
	case "to_days":
		// Days since year 0 of MySQL's proleptic calendar (0000-01-01 is
		// day 1 there; 1970-01-01 is 719528).
		f = func(d int64) int64 { return d + 719528 }
	}
	return newCall(part, tInt64, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		return mapFixed(ctx, args[0], tInt64, func(d arrow.Date32) int64 { return f(int64(d)) }), nil
	}), a), nil
}

// bindClockPart binds HOUR, MINUTE, SECOND and MICROSECOND. A string
// argument is read per row as a DATETIME, or else as a time 'hh:mm:ss'
// (HOUR('10:05:03') is 10, as in MySQL; HOUR of a time may exceed 23).
func bindClockPart(fn string, args []Expr) (Expr, error) {
	if err := arity(fn, args, 1, 1); err != nil {
		return nil, err
	}
	var f func(tod int64) int64
	switch fn {
	case "hour":
		f = func(tod int64) int64 { return tod / microsPerHour }
	case "minute":
		f = func(tod int64) int64 { return tod / microsPerMinute % 60 }
	case "second":
		f = func(tod int64) int64 { return tod / microsPerSecond % 60 }
	default:
		f = func(tod int64) int64 { return tod % microsPerSecond }
	}
	if t := args[0].DataType(); isTime(t) {
		// A TIME: its own hours (which may pass 23 or be negative, as
		// MySQL's HOUR of a TIME is the absolute value's).
		return newCall(fn, tInt64, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
			return mapFixed(ctx, args[0], tInt64, func(v arrow.Time64) int64 {
				us := int64(v)
				if us < 0 {
					us = -us
				}
				return f(us)
			}), nil
		}), args[0]), nil
	} else if isText(t) {
		a, err := stringArg(fn, args, args[0])
		if err != nil {
			return nil, err
		}
		return newCall(fn, tInt64, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
			s := args[0].(*array.String)
			o := newFixed[int64](ctx.Alloc, tInt64, n)
			o.andValidity(s)
			for i := 0; i < n; i++ {
				if !o.isValid(i) {
					continue
				}
				v := s.Value(i)
				tod, ok := int64(0), false
				if us, isDT := parseDatetime(v); isDT {
					_, tod = splitMicros(us)
					ok = true
				} else {
					tod, ok = parseClock(strings.TrimSpace(v), true)
				}
				if !ok {
					o.release()
					return nil, fmt.Errorf("%w: cannot read %q as a DATETIME or TIME in %s()", ErrInvalidValue, v, fn)
				}
				o.vals[i] = f(tod)
			}
			return o.finish(), nil
		}), a), nil
	}
	a, err := datetimeArg(fn, args, args[0])
	if err != nil {
		return nil, err
	}
	return newCall(fn, tInt64, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		return mapFixed(ctx, args[0], tInt64, func(us arrow.Timestamp) int64 {
			_, tod := splitMicros(int64(us))
			return f(tod)
		}), nil
	}), a), nil
}

// bindDateAdd binds date_add/date_sub by days (no suffix), months,
// years and microseconds; NewDateArith chooses among them.
func bindDateAdd(fn string, args []Expr) (Expr, error) {
	if err := arity(fn, args, 2, 2); err != nil {
		return nil, err
	}
	micros := strings.HasSuffix(fn, "_micros")
	if isTime(args[0].DataType()) {
		return timeAdd(fn, args, micros)
	}
	var d Expr
	var err error
	switch t := args[0].DataType(); {
	case micros, isDatetime(t):
		d, err = datetimeArg(fn, args, args[0])
	case isText(t):
		// A constant with a time part is a DATETIME; anything else a DATE.
		d, err = dateArg(fn, args, args[0])
		if l, ok := args[0].(*Literal); ok && l.Value != nil {
			if _, isDate := parseDateOnly(fmt.Sprint(l.Value)); !isDate {
				d, err = datetimeArg(fn, args, args[0])
			}
		}
	default:
		d, err = dateArg(fn, args, args[0])
	}
	if err != nil {
		return nil, err
	}
	k, err := roundedInt(fn, args[1])
	if err != nil {
		return nil, argErr(fn, args, "the interval must be a number")
	}
	sign := int64(1)
	if strings.HasPrefix(fn, "date_sub") {
		sign = -1
	}
	months := int64(0)
	switch {
	case strings.HasSuffix(fn, "_month"):
		months = 1
	case strings.HasSuffix(fn, "_year"):
		months = 12
	}
	// MySQL: date arithmetic out of the supported range is NULL.
	if isDatetime(d.DataType()) {
		rt := DatetimeType
		return newCall(fn, rt, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
			us, ks := vals[arrow.Timestamp](args[0]), vals[int64](args[1])
			o := newFixed[arrow.Timestamp](ctx.Alloc, rt, n)
			o.andValidity(args[0], args[1])
			for i := range us {
				if !o.isValid(i) {
					continue
				}
				v := int64(us[i])
				k, ok := ks[i], true
				switch {
				case micros:
					k, ok = mulOK(k, sign)
					if ok {
						v, ok = addOK(v, k)
					}
				case months == 0:
					k, ok = mulOK(k, sign*microsPerDay)
					if ok {
						v, ok = addOK(v, k)
					}
				default:
					if k > 1e6 || k < -1e6 {
						ok = false
					} else {
						v = addMonthsMicros(v, sign*k*months)
					}
				}
				if !ok || v < minDatetime || v > maxDatetime {
					o.setNull(i)
					continue
				}
				o.vals[i] = arrow.Timestamp(v)
			}
			return o.finish(), nil
		}), d, k), nil
	}
	return newCall(fn, tDate, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		ds, ks := vals[arrow.Date32](args[0]), vals[int64](args[1])
		o := newFixed[arrow.Date32](ctx.Alloc, tDate, n)
		o.andValidity(args[0], args[1])
		for i := range ds {
			k := ks[i]
			if k > 1e8 || k < -1e8 {
				if o.isValid(i) {
					o.setNull(i)
				}
				continue
			}
			var r int64
			if months == 0 {
				r = int64(ds[i]) + sign*k
			} else {
				r = addMonths(int64(ds[i]), sign*k*months)
			}
			if r < minDateDays || r > maxDateDays {
				if o.isValid(i) {
					o.setNull(i) // MySQL: out of range date arithmetic is NULL
				}
				continue
			}
			o.vals[i] = arrow.Date32(r)
		}
		return o.finish(), nil
	}), d, k), nil
}

// parseDateOnly reports whether s is a date without a time part.
func parseDateOnly(s string) (arrow.Date32, bool) {
	s = strings.TrimSpace(s)
	if strings.ContainsAny(s, " T") {
		return 0, false
	}
	return parseDate(s)
}

func addOK(a, b int64) (int64, bool) {
	r := a + b
	return r, (a >= 0) != (b >= 0) || (r >= 0) == (a >= 0)
}

func mulOK(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	r := a * b
	return r, r/b == a && !(a == -1 && b == math.MinInt64) && !(b == -1 && a == math.MinInt64)
}

// The DATE range MySQL supports: 0001-01-01 .. 9999-12-31.
var (
	minDateDays = int64(dateFromCivil(1, 1, 1))
	maxDateDays = int64(dateFromCivil(9999, 12, 31))
)

// addMonths adds months to a date, clamping the day to the end of the
// target month (2000-01-31 + 1 month = 2000-02-29), as MySQL does.
func addMonths(days, months int64) int64 {
	y, m, d := civilFromDays(days)
	total := y*12 + (m - 1) + months
	ny, nm := floorDiv(total, 12), total-floorDiv(total, 12)*12+1
	if nd := int64(daysIn(int(ny), time.Month(nm))); d > nd {
		d = nd
	}
	return int64(dateFromCivil(int(ny), time.Month(nm), int(d)))
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func isLeap(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

func daysIn(y int, m time.Month) int {
	switch m {
	case time.February:
		if isLeap(y) {
			return 29
		}
		return 28
	case time.April, time.June, time.September, time.November:
		return 30
	}
	return 31
}

// dateFromCivil is days since 1970-01-01 of y-m-d (proleptic Gregorian).
func dateFromCivil(y int, m time.Month, d int) arrow.Date32 {
	yy := int64(y)
	mm := int64(m)
	if mm <= 2 {
		yy--
	}
	era := floorDiv(yy, 400)
	yoe := yy - era*400
	mp := (mm + 9) % 12
	doy := (153*mp+2)/5 + int64(d) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return arrow.Date32(era*146097 + doe - 719468)
}

// civilFromDays is the inverse of dateFromCivil.
func civilFromDays(z int64) (y, m, d int64) {
	z += 719468
	era := floorDiv(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	m = mp + 3
	if m > 12 {
		m -= 12
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

// timeAdd is TIME ± INTERVAL (date_add and date_sub of a TIME), as
// MariaDB and MySQL compute it: the clock units and DAY and WEEK move the
// time and keep it a TIME, without wrapping at midnight (23:30:00 + 1
// HOUR is 24:30:00); a result past -838:59:59 .. 838:59:59 is NULL, and
// so is every MONTH, QUARTER or YEAR interval (a TIME has no calendar).
func timeAdd(fn string, args []Expr, micros bool) (Expr, error) {
	k, err := roundedInt(fn, args[1])
	if err != nil {
		return nil, argErr(fn, args, "the interval must be a number")
	}
	if strings.HasSuffix(fn, "_month") || strings.HasSuffix(fn, "_year") {
		return Null(TimeType), nil
	}
	sign, unit := int64(1), int64(microsPerDay)
	if strings.HasPrefix(fn, "date_sub") {
		sign = -1
	}
	if micros {
		unit = 1
	}
	return newCall(fn, TimeType, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		ts, ks := vals[arrow.Time64](args[0]), vals[int64](args[1])
		o := newFixed[arrow.Time64](ctx.Alloc, TimeType, n)
		o.andValidity(args[0], args[1])
		for i := range ts {
			if !o.isValid(i) {
				continue
			}
			d, ok := mulOK(ks[i], sign*unit)
			v := int64(ts[i])
			if ok {
				v, ok = addOK(v, d)
			}
			if !ok || v > maxTimeMicros || v < -maxTimeMicros {
				o.setNull(i)
				continue
			}
			o.vals[i] = arrow.Time64(v)
		}
		return o.finish(), nil
	}), args[0], k), nil
}
