package expr

import (
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// Date functions on DATE (days since 1970-01-01). Strings are read as
// dates. Civil-date conversions use integer arithmetic (Howard Hinnant's
// algorithms), not time.Time, to stay cheap per row.
var dateBinders = map[string]binder{
	"year": bindDatePart, "month": bindDatePart, "day": bindDatePart,
	"dayofmonth": bindDatePart, "quarter": bindDatePart,
	"extract_year": bindDatePart, "extract_month": bindDatePart, "extract_day": bindDatePart,
	"extract_quarter": bindDatePart,
	"date_add":        bindDateAdd, "date_sub": bindDateAdd,
	"date_add_month": bindDateAdd, "date_sub_month": bindDateAdd,
	"date_add_year": bindDateAdd, "date_sub_year": bindDateAdd,
}

// NewDateArith builds date ± INTERVAL n unit for the units fsql supports
// (day, week, month, quarter, year); any other unit is ErrUnsupported.
func NewDateArith(date, n Expr, unit string, subtract bool) (Expr, error) {
	fn := "date_add"
	if subtract {
		fn = "date_sub"
	}
	switch strings.ToLower(unit) {
	case "day":
		return NewCall(fn, date, n)
	case "week":
		m, err := NewCall("*", n, NewLiteral(int64(7), tInt64))
		if err != nil {
			return nil, err
		}
		return NewCall(fn, date, m)
	case "month":
		return NewCall(fn+"_month", date, n)
	case "quarter":
		m, err := NewCall("*", n, NewLiteral(int64(3), tInt64))
		if err != nil {
			return nil, err
		}
		return NewCall(fn+"_month", date, m)
	case "year":
		return NewCall(fn+"_year", date, n)
	}
	return nil, fmt.Errorf("%w: INTERVAL unit %s (fsql supports DAY, WEEK, MONTH, QUARTER, YEAR)", ErrUnsupported, unit)
}

func dateArg(fn string, args []Expr, e Expr) (Expr, error) {
	t := e.DataType()
	if t.ID() == arrow.DATE32 || isText(t) || isNullType(t) {
		return coerce(e, tDate)
	}
	return nil, argErr(fn, args, "expects a DATE")
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
	return newCall(part, tInt64, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		return mapFixed(ctx, args[0], tInt64, func(d arrow.Date32) int64 {
			y, m, dd := civilFromDays(int64(d))
			switch part {
			case "year":
				return y
			case "month":
				return m
			case "quarter":
				return (m + 2) / 3
			}
			return dd
		}), nil
	}), a), nil
}

func bindDateAdd(fn string, args []Expr) (Expr, error) {
	if err := arity(fn, args, 2, 2); err != nil {
		return nil, err
	}
	d, err := dateArg(fn, args, args[0])
	if err != nil {
		return nil, err
	}
	nt := args[1].DataType()
	if !isInt(nt) && !isNullType(nt) && !isDecimal(nt) && !isFloat(nt) && !isText(nt) {
		return nil, argErr(fn, args, "the interval must be a number")
	}
	k, err := coerce(args[1], tInt64)
	if err != nil {
		return nil, err
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
	return newCall(fn, tDate, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		ds, ks := vals[arrow.Date32](args[0]), vals[int64](args[1])
		o := newFixed[arrow.Date32](ctx.Alloc, tDate, n)
		o.andValidity(args[0], args[1])
		for i := range ds {
			var r int64
			if months == 0 {
				r = int64(ds[i]) + sign*ks[i]
			} else {
				r = addMonths(int64(ds[i]), sign*ks[i]*months)
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
