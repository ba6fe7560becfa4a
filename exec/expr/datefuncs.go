package expr

import (
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// More date functions, MySQL's semantics with the session time zone UTC:
// DATEDIFF counts days between the date parts; TIMESTAMPDIFF counts whole
// units from its second argument to its third (months compare the day
// and time of day, so 01-31 to 02-28 is 0 months); WEEK, YEARWEEK and
// WEEKOFYEAR follow MySQL's calc_week for every mode; UNIX_TIMESTAMP is 0
// outside 1970-01-01 00:00:00 .. 3001-01-19 03:14:07.999999 and
// FROM_UNIXTIME NULL outside it, as in MySQL 8.
var dateFuncBinders = map[string]binder{
	"datediff": bindDateDiff, "timestampdiff": bindTimestampDiff,
	"last_day": bindLastDay, "week": bindWeek, "yearweek": bindWeek, "weekofyear": bindWeek,
	"dayname": bindDayName, "monthname": bindDayName,
	"unix_timestamp": bindUnixTimestamp, "from_unixtime": bindFromUnixtime,
	"date": bindToDate, "timestamp": bindToDate, "from_days": bindFromDays,
}

// maxUnixSeconds is MySQL 8's last UNIX_TIMESTAMP: 3001-01-19 03:14:07 UTC.
const maxUnixSeconds = int64(32536771199)

func bindDateDiff(fn string, args []Expr) (Expr, error) {
	if err := arity(fn, args, 2, 2); err != nil {
		return nil, err
	}
	a, err := dateArg(fn, args, args[0])
	if err != nil {
		return nil, err
	}
	b, err := dateArg(fn, args, args[1])
	if err != nil {
		return nil, err
	}
	return newCall(fn, tInt64, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		x, y := vals[arrow.Date32](args[0]), vals[arrow.Date32](args[1])
		o := newFixed[int64](ctx.Alloc, tInt64, n)
		for i := range x {
			o.vals[i] = int64(x[i]) - int64(y[i])
		}
		o.andValidity(args[0], args[1])
		return o.finish(), nil
	}), a, b), nil
}

// timestampDiffUnits are the units TIMESTAMPDIFF knows, with their length
// in microseconds (0 for the calendar units).
var timestampDiffUnits = map[string]int64{
	"microsecond": 1, "second": microsPerSecond, "minute": microsPerMinute, "hour": microsPerHour,
	"day": microsPerDay, "week": 7 * microsPerDay, "month": 0, "quarter": 0, "year": 0,
}

// bindTimestampDiff binds timestampdiff('unit', a, b): the unit is a
// string constant (the SQL layer turns the keyword into one).
func bindTimestampDiff(fn string, args []Expr) (Expr, error) {
	if err := arity(fn, args, 3, 3); err != nil {
		return nil, err
	}
	l, ok := args[0].(*Literal)
	unit, isStr := "", false
	if ok {
		unit, isStr = l.Value.(string)
	}
	per, known := timestampDiffUnits[strings.ToLower(unit)]
	if !isStr || !known {
		return nil, fmt.Errorf("%w: TIMESTAMPDIFF unit %v (fsql supports MICROSECOND, SECOND, MINUTE, HOUR, DAY, WEEK, MONTH, QUARTER, YEAR)", ErrUnsupported, args[0])
	}
	unit = strings.ToLower(unit)
	a, err := datetimeArg(fn, args, args[1])
	if err != nil {
		return nil, err
	}
	b, err := datetimeArg(fn, args, args[2])
	if err != nil {
		return nil, err
	}
	months := map[string]int64{"month": 1, "quarter": 3, "year": 12}[unit]
	return newCall(fn, tInt64, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		x, y := vals[arrow.Timestamp](args[1]), vals[arrow.Timestamp](args[2])
		o := newFixed[int64](ctx.Alloc, tInt64, n)
		for i := range x {
			if per > 0 {
				o.vals[i] = (int64(y[i]) - int64(x[i])) / per // truncated toward zero
				continue
			}
			o.vals[i] = monthsBetween(int64(x[i]), int64(y[i])) / months
		}
		o.andValidity(args[1], args[2])
		return o.finish(), nil
	}), NewLiteral(unit, tString), a, b), nil
}

// monthsBetween is the number of whole months from a to b (negative when
// b is earlier), as MySQL's TIMESTAMPDIFF counts them: a month is whole
// when the day of month and time of day of b have reached those of a.
func monthsBetween(a, b int64) int64 {
	neg := b < a
	if neg {
		a, b = b, a
	}
	da, ta := splitMicros(a)
	db, tb := splitMicros(b)
	ya, ma, dda := civilFromDays(da)
	yb, mb, ddb := civilFromDays(db)
	m := (yb*12 + mb) - (ya*12 + ma)
	if ddb < dda || (ddb == dda && tb < ta) {
		m--
	}
	if neg {
		return -m
	}
	return m
}

func bindLastDay(fn string, args []Expr) (Expr, error) {
	if err := arity(fn, args, 1, 1); err != nil {
		return nil, err
	}
	a, err := dateArg(fn, args, args[0])
	if err != nil {
		return nil, err
	}
	return newCall(fn, tDate, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		return mapFixed(ctx, args[0], tDate, func(d arrow.Date32) arrow.Date32 {
			y, m, _ := civilFromDays(int64(d))
			return arrow.Date32(int64(d) + int64(daysIn(int(y), time.Month(m))) - dayOfMonth(int64(d)))
		}), nil
	}), a), nil
}

func dayOfMonth(d int64) int64 { _, _, dd := civilFromDays(d); return dd }

// bindWeek binds WEEK(d[, mode]), YEARWEEK(d[, mode]) and WEEKOFYEAR(d).
// MySQL's default_week_format is 0, so WEEK(d) is WEEK(d, 0).
func bindWeek(fn string, args []Expr) (Expr, error) {
	hi := 2
	if fn == "weekofyear" {
		hi = 1
	}
	if err := arity(fn, args, 1, hi); err != nil {
		return nil, err
	}
	a, err := dateArg(fn, args, args[0])
	if err != nil {
		return nil, err
	}
	var mode Expr = NewLiteral(int64(0), tInt64)
	if fn == "weekofyear" {
		mode = NewLiteral(int64(3), tInt64)
	}
	if len(args) == 2 {
		if mode, err = roundedInt(fn, args[1]); err != nil {
			return nil, err
		}
	}
	conv := []Expr{a, mode}
	if fn == "weekofyear" {
		conv = conv[:1]
	}
	return newCall(fn, tInt64, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		ds := vals[arrow.Date32](args[0])
		modes := []int64{3}
		mm := 0
		if len(args) == 2 {
			modes, mm = vals[int64](args[1]), -1
		}
		o := newFixed[int64](ctx.Alloc, tInt64, n)
		for i, d := range ds {
			flags := weekMode(modes[i&mm])
			if fn == "yearweek" {
				w, y := calcWeek(int64(d), flags|weekYear)
				o.vals[i] = y*100 + w
				continue
			}
			o.vals[i], _ = calcWeek(int64(d), flags)
		}
		o.andValidity(args...)
		return o.finish(), nil
	}), conv...), nil
}

func bindDayName(fn string, args []Expr) (Expr, error) {
	if err := arity(fn, args, 1, 1); err != nil {
		return nil, err
	}
	a, err := dateArg(fn, args, args[0])
	if err != nil {
		return nil, err
	}
	return newCall(fn, tString, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		ds := vals[arrow.Date32](args[0])
		b := array.NewStringBuilder(ctx.Alloc)
		defer b.Release()
		b.Reserve(n)
		for i, d := range ds {
			if !validAt(args[0], i) {
				b.AppendNull()
				continue
			}
			if fn == "dayname" {
				b.Append(dayNames[weekdayMon0(int64(d))])
			} else {
				_, m, _ := civilFromDays(int64(d))
				b.Append(monthNames[m-1])
			}
		}
		return b.NewArray(), nil
	}), a), nil
}

// bindUnixTimestamp binds UNIX_TIMESTAMP(x): seconds since 1970 UTC. A
// DATE gives a BIGINT. A DATETIME gives DECIMAL(18,6), MySQL's type for a
// DATETIME(6) argument, except for a constant without a fraction (such
// as NOW()), which gives a BIGINT as MySQL's DATETIME(0) does. The form
// without an argument is bound by the SQL layer over NOW().
func bindUnixTimestamp(fn string, args []Expr) (Expr, error) {
	if err := arity(fn, args, 1, 1); err != nil {
		return nil, err
	}
	if args[0].DataType().ID() == arrow.DATE32 {
		return newCall(fn, tInt64, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
			return mapFixed(ctx, args[0], tInt64, func(d arrow.Date32) int64 {
				s := int64(d) * 86400
				if s < 0 || s > maxUnixSeconds {
					return 0
				}
				return s
			}), nil
		}), args[0]), nil
	}
	a, err := datetimeArg(fn, args, args[0])
	if err != nil {
		return nil, err
	}
	whole := false
	if v, ok := constValue(a); ok {
		us, _ := v.(arrow.Timestamp)
		whole = int64(us)%microsPerSecond == 0
	}
	rt := arrow.DataType(decType(18, 6))
	if whole {
		rt = tInt64
	}
	return newCall(fn, rt, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		us := vals[arrow.Timestamp](args[0])
		if whole {
			return mapFixed(ctx, args[0], tInt64, func(v arrow.Timestamp) int64 {
				s := floorDiv(int64(v), microsPerSecond)
				if int64(v) < 0 || s > maxUnixSeconds {
					return 0
				}
				return s
			}), nil
		}
		o := newFixed[num](ctx.Alloc, rt, n)
		for i, v := range us {
			if int64(v) < 0 || floorDiv(int64(v), microsPerSecond) > maxUnixSeconds {
				continue
			}
			o.vals[i] = decimal128.FromI64(int64(v))
		}
		o.andValidity(args[0])
		return o.finish(), nil
	}), a), nil
}

// bindFromUnixtime binds FROM_UNIXTIME(n[, format]): the DATETIME n
// seconds after 1970-01-01 00:00:00 UTC (a fraction of n gives
// microseconds), NULL for a negative n or one past 3001-01-19.
func bindFromUnixtime(fn string, args []Expr) (Expr, error) {
	if err := arity(fn, args, 1, 2); err != nil {
		return nil, err
	}
	t := args[0].DataType()
	if !isNumeric(t) && !isNullType(t) && !isText(t) && t.ID() != arrow.BOOL {
		return nil, argErr(fn, args, "expects a number of seconds")
	}
	// Microseconds, exactly: through DECIMAL(38,6).
	x, err := coerce(args[0], decType(maxDecimalPrecision, 6))
	if err != nil {
		return nil, err
	}
	e := newCall(fn, DatetimeType, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		src := vals[num](args[0])
		o := newFixed[arrow.Timestamp](ctx.Alloc, DatetimeType, n)
		o.andValidity(args[0])
		limit := decimal128.FromI64(maxUnixSeconds + 1).Mul(pow10(6))
		for i, v := range src {
			if !o.isValid(i) {
				continue
			}
			if v.Sign() < 0 || v.GreaterEqual(limit) {
				o.setNull(i)
				continue
			}
			o.vals[i] = arrow.Timestamp(int64(v.LowBits()))
		}
		return o.finish(), nil
	}), x)
	if len(args) == 1 {
		return e, nil
	}
	return NewCall("date_format", e, args[1])
}

// bindToDate binds DATE(x) and TIMESTAMP(x): x read as a DATE or a
// DATETIME, as CAST does.
func bindToDate(fn string, args []Expr) (Expr, error) {
	if err := arity(fn, args, 1, 1); err != nil {
		return nil, err
	}
	t := args[0].DataType()
	if !isTemporal(t) && !isText(t) && !isNullType(t) {
		return nil, argErr(fn, args, "expects a DATE, DATETIME or string")
	}
	if fn == "date" {
		return coerceExplicit(args[0], tDate)
	}
	return coerceExplicit(args[0], DatetimeType)
}

// coerceExplicit is a visible CAST (an explicit conversion a rewrite must
// keep), or the value itself when it already has the type.
func coerceExplicit(e Expr, to arrow.DataType) (Expr, error) {
	if l, ok := e.(*Literal); ok {
		if c, err := castLiteral(l, to); err == nil {
			return c, nil
		}
	}
	return NewCast(e, to)
}

// bindFromDays binds FROM_DAYS(n), the inverse of TO_DAYS.
func bindFromDays(fn string, args []Expr) (Expr, error) {
	if err := arity(fn, args, 1, 1); err != nil {
		return nil, err
	}
	k, err := roundedInt(fn, args[0])
	if err != nil {
		return nil, err
	}
	return newCall(fn, tDate, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		ks := vals[int64](args[0])
		o := newFixed[arrow.Date32](ctx.Alloc, tDate, n)
		o.andValidity(args[0])
		for i, v := range ks {
			d := v - 719528
			if d < minDateDays || d > maxDateDays {
				o.setNull(i) // MySQL gives the zero date for days before year 1
				continue
			}
			o.vals[i] = arrow.Date32(d)
		}
		return o.finish(), nil
	}), k), nil
}
