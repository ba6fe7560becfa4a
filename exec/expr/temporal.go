package expr

import (
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// MySQL's DATETIME and TIMESTAMP are Arrow timestamps in microseconds:
// DATETIME has no time zone (a wall-clock value), TIMESTAMP is an
// instant in UTC. fsql's session time zone is UTC, so both hold the same
// number for the same wall-clock text and convert into each other without
// arithmetic; they differ only in their type (what SHOW and EXPLAIN call
// them, and what a Parquet writer would be told). Values always keep
// their microseconds: a DATETIME is MySQL's DATETIME(6), printed without
// the fraction when it is zero.
var (
	// DatetimeType is MySQL's DATETIME.
	DatetimeType = &arrow.TimestampType{Unit: arrow.Microsecond}
	// TimestampType is MySQL's TIMESTAMP (UTC, the session time zone).
	TimestampType = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
)

// TimeType is MySQL's TIME: microseconds (since midnight for a time of
// day; MySQL's range is -838:59:59 .. 838:59:59). fsql reads it from
// Parquet TIME columns; it compares, sorts, groups, prints and casts to
// and from text, and HOUR/MINUTE/SECOND/MICROSECOND read it.
var TimeType = arrow.FixedWidthTypes.Time64us

// isTime reports MySQL's TIME.
func isTime(t arrow.DataType) bool {
	tt, ok := t.(*arrow.Time64Type)
	return ok && tt.Unit == arrow.Microsecond
}

// parseTime reads MySQL's TIME text: [-]h[hh]:mm[:ss[.ffffff]], hours up
// to 838.
func parseTime(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	us, ok := parseClock(s, true)
	if !ok || us > 839*microsPerHour-1 {
		return 0, false
	}
	if neg {
		us = -us
	}
	return us, true
}

// formatTime spells a TIME as MySQL prints it: 'hh:mm:ss' and '.ffffff'
// only when the fraction is not zero.
func formatTime(us int64) string {
	var dst []byte
	if us < 0 {
		dst = append(dst, '-')
		us = -us
	}
	dst = append2(dst, us/microsPerHour)
	dst = append(dst, ':')
	dst = append2(dst, us/microsPerMinute%60)
	dst = append(dst, ':')
	dst = append2(dst, us/microsPerSecond%60)
	if f := us % microsPerSecond; f != 0 {
		dst = append(dst, '.')
		dst = appendPadded(dst, f, 6)
	}
	return string(dst)
}

const (
	microsPerSecond = int64(1_000_000)
	microsPerMinute = 60 * microsPerSecond
	microsPerHour   = 60 * microsPerMinute
	microsPerDay    = 24 * microsPerHour
)

// The DATETIME range fsql supports, as MySQL's DATE range: 0001-01-01
// 00:00:00 .. 9999-12-31 23:59:59.999999.
var (
	minDatetime = minDateDays * microsPerDay
	maxDatetime = (maxDateDays+1)*microsPerDay - 1
)

// isDatetime reports one of fsql's two microsecond timestamp types.
func isDatetime(t arrow.DataType) bool {
	ts, ok := t.(*arrow.TimestampType)
	return ok && ts.Unit == arrow.Microsecond && (ts.TimeZone == "" || ts.TimeZone == "UTC")
}

// isTimestampTZ reports MySQL's TIMESTAMP (as opposed to DATETIME).
func isTimestampTZ(t arrow.DataType) bool {
	ts, ok := t.(*arrow.TimestampType)
	return ok && ts.Unit == arrow.Microsecond && ts.TimeZone == "UTC"
}

// isTemporal reports DATE, DATETIME or TIMESTAMP.
func isTemporal(t arrow.DataType) bool { return t.ID() == arrow.DATE32 || isDatetime(t) }

// splitMicros splits microseconds since 1970-01-01 into days and the
// microseconds into that day (always 0 <= tod < microsPerDay).
func splitMicros(us int64) (days, tod int64) {
	days = floorDiv(us, microsPerDay)
	return days, us - days*microsPerDay
}

// clock splits a time of day into hours, minutes, seconds, microseconds.
func clock(tod int64) (h, m, s, f int64) {
	return tod / microsPerHour, tod / microsPerMinute % 60, tod / microsPerSecond % 60, tod % microsPerSecond
}

// parseDatetime reads MySQL's DATETIME text: 'YYYY-MM-DD', optionally
// followed by a space or 'T' and 'HH:MM[:SS[.ffffff]]'. One-digit month,
// day, hour, minute and second are allowed; a fraction of more than six
// digits is rounded to microseconds (half up, as MySQL rounds).
func parseDatetime(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	datePart, timePart := s, ""
	if i := strings.IndexAny(s, " T"); i >= 0 {
		datePart, timePart = s[:i], strings.TrimLeft(s[i+1:], " ")
	}
	d, ok := parseDate(datePart)
	if !ok {
		return 0, false
	}
	us := int64(d) * microsPerDay
	if timePart == "" {
		return us, true
	}
	tod, ok := parseClock(timePart, false)
	if !ok {
		return 0, false
	}
	us += tod
	if us > maxDatetime {
		return 0, false
	}
	return us, true
}

// parseClock reads 'HH:MM[:SS[.ffffff]]' as microseconds into the day.
// With allowLong (a TIME-like string read by HOUR()) the hour may exceed
// 23; the result is then not a time of day.
func parseClock(s string, allowLong bool) (int64, bool) {
	main, frac, hasFrac := strings.Cut(s, ".")
	parts := strings.Split(main, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, false
	}
	var f [3]int64
	for k, p := range parts {
		if p == "" || len(p) > 2 && !(k == 0 && allowLong && len(p) <= 3) {
			return 0, false
		}
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 {
			return 0, false
		}
		f[k] = int64(v)
	}
	if (f[0] > 23 && !allowLong) || f[1] > 59 || f[2] > 59 {
		return 0, false
	}
	us := f[0]*microsPerHour + f[1]*microsPerMinute + f[2]*microsPerSecond
	if hasFrac {
		if len(parts) != 3 || frac == "" {
			return 0, false
		}
		micros, ok := parseFraction(frac)
		if !ok {
			return 0, false
		}
		us += micros
		if us >= microsPerDay && !allowLong {
			return 0, false // 23:59:59.9999995 rounds past midnight
		}
	}
	return us, true
}

// parseFraction reads the digits after a seconds' point as microseconds,
// rounding half up past the sixth digit.
func parseFraction(frac string) (int64, bool) {
	var us int64
	for k := 0; k < len(frac); k++ {
		c := frac[k]
		if c < '0' || c > '9' {
			return 0, false
		}
		switch {
		case k < 6:
			us = us*10 + int64(c-'0')
		case k == 6 && c >= '5':
			us++
		}
	}
	for k := len(frac); k < 6; k++ {
		us *= 10
	}
	return us, true
}

// formatDatetime spells a DATETIME as MySQL prints it: 'YYYY-MM-DD
// HH:MM:SS', with '.ffffff' only when the microseconds are not zero.
func formatDatetime(us int64) string {
	return string(appendDatetime(nil, us))
}

func appendDatetime(dst []byte, us int64) []byte {
	days, tod := splitMicros(us)
	dst = appendDate(dst, days)
	h, m, s, f := clock(tod)
	dst = append(dst, ' ')
	dst = append2(dst, h)
	dst = append(dst, ':')
	dst = append2(dst, m)
	dst = append(dst, ':')
	dst = append2(dst, s)
	if f != 0 {
		dst = append(dst, '.')
		dst = appendPadded(dst, f, 6)
	}
	return dst
}

func appendDate(dst []byte, days int64) []byte {
	y, m, d := civilFromDays(days)
	dst = appendPadded(dst, y, 4)
	dst = append(dst, '-')
	dst = append2(dst, m)
	dst = append(dst, '-')
	return append2(dst, d)
}

func append2(dst []byte, v int64) []byte { return appendPadded(dst, v, 2) }

// appendPadded writes v (>= 0) with at least width digits.
func appendPadded(dst []byte, v int64, width int) []byte {
	var buf [20]byte
	s := strconv.AppendInt(buf[:0], v, 10)
	for k := len(s); k < width; k++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}

// addMonthsMicros adds months to a DATETIME, keeping the time of day and
// clamping the day to the end of the target month.
func addMonthsMicros(us, months int64) int64 {
	days, tod := splitMicros(us)
	return addMonths(days, months)*microsPerDay + tod
}

// weekdayMon0 is 0 for Monday .. 6 for Sunday (MySQL's WEEKDAY()).
func weekdayMon0(days int64) int64 { return floorMod(days+3, 7) }

func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }

// dayOfYear is 1 .. 366.
func dayOfYear(days int64) int64 {
	y, _, _ := civilFromDays(days)
	return days - int64(dateFromCivil(int(y), time.January, 1)) + 1
}

func daysInYear(y int64) int64 {
	if isLeap(int(y)) {
		return 366
	}
	return 365
}

// The week flags of MySQL's calc_week.
const (
	weekMondayFirst  = 1
	weekYear         = 2
	weekFirstWeekday = 4
)

// weekMode turns WEEK()'s mode argument into calc_week's flags, as
// MySQL's week_mode does.
func weekMode(mode int64) int {
	f := int(mode & 7)
	if f&weekMondayFirst == 0 {
		f ^= weekFirstWeekday
	}
	return f
}

// calcWeek is MySQL's calc_week: the week number of a date under the
// behaviour flags, and the year the week belongs to.
func calcWeek(days int64, flags int) (week, year int64) {
	y, m, d := civilFromDays(days)
	first := int64(dateFromCivil(int(y), time.January, 1))
	mondayFirst := flags&weekMondayFirst != 0
	wy := flags&weekYear != 0
	firstWeekday := flags&weekFirstWeekday != 0
	weekday := floorMod(first+3, 7) // Monday = 0
	if !mondayFirst {
		weekday = floorMod(first+4, 7) // Sunday = 0
	}
	year = y
	if m == 1 && d <= 7-weekday {
		if !wy && ((firstWeekday && weekday != 0) || (!firstWeekday && weekday >= 4)) {
			return 0, year
		}
		wy = true
		year--
		n := daysInYear(year)
		first -= n
		weekday = floorMod(weekday+53*7-n, 7)
	}
	var diff int64
	if (firstWeekday && weekday != 0) || (!firstWeekday && weekday >= 4) {
		diff = days - (first + (7 - weekday))
	} else {
		diff = days - (first - weekday)
	}
	if wy && diff >= 52*7 {
		weekday = floorMod(weekday+daysInYear(year), 7)
		if (!firstWeekday && weekday < 4) || (firstWeekday && weekday == 0) {
			return 1, year + 1
		}
	}
	return diff/7 + 1, year
}

var (
	monthNames = [...]string{"January", "February", "March", "April", "May", "June", "July",
		"August", "September", "October", "November", "December"}
	dayNames = [...]string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}
)

var temporalBinders = map[string]binder{"round_fsp": bindRoundFsp}

// bindRoundFsp binds round_fsp(x, n): the DATETIME or TIME x rounded
// (half up) to n digits of the second, as MySQL stores a value in a
// DATETIME(n) or TIME(n). It is what CAST(x AS DATETIME(n)) and AS TIME(n)
// add to the cast for n < 6.
func bindRoundFsp(fn string, args []Expr) (Expr, error) {
	if err := arity(fn, args, 2, 2); err != nil {
		return nil, err
	}
	x := args[0]
	if !isTime(x.DataType()) {
		var err error
		if x, err = datetimeArg(fn, args, args[0]); err != nil {
			return nil, err
		}
	}
	l, ok := args[1].(*Literal)
	n, isInt := int64(0), false
	if ok {
		n, isInt = l.Value.(int64)
	}
	if !isInt || n < 0 || n > 6 {
		return nil, argErr(fn, args, "the precision must be a constant from 0 to 6")
	}
	unit := int64(1)
	for k := n; k < 6; k++ {
		unit *= 10
	}
	t := x.DataType()
	return newCall(fn, t, arrayKernel(func(ctx *Context, args []arrow.Array, rows int) (arrow.Array, error) {
		src := vals[int64](args[0])
		o := newFixed[int64](ctx.Alloc, t, rows)
		o.andValidity(args[0])
		for i, v := range src {
			r := floorDiv(v+unit/2, unit) * unit
			if isTime(t) && v < 0 {
				r = -(floorDiv(-v+unit/2, unit) * unit) // half away from zero
			}
			if !isTime(t) && r > maxDatetime {
				if o.isValid(i) {
					o.setNull(i) // 9999-12-31 23:59:59.9 rounds past the range
				}
				continue
			}
			o.vals[i] = r
		}
		return o.finish(), nil
	}), x, l), nil
}
