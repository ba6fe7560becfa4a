package expr

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// DATE_FORMAT and STR_TO_DATE with MySQL's format specifiers (%Y %y %m %c
// %d %e %D %j %M %b %W %a %w %H %k %h %I %l %i %s %S %f %p %r %T %U %u %V
// %v %X %x %%; any other %c is c), English names as MySQL's default
// lc_time_names. STR_TO_DATE returns a DATE when the format has only date
// parts, a TIME when it has only time parts and a DATETIME when it has
// both (its type is decided by a constant format; any other format gives a
// DATETIME). A string that does
// not match the format, or names a date that does not exist (MySQL's
// zero dates such as '2020-00-00' included), is an error naming it where
// MySQL returns NULL with a warning.
var dateFmtBinders = map[string]binder{
	"date_format": bindDateFormat, "str_to_date": bindStrToDate,
}

func bindDateFormat(fn string, args []Expr) (Expr, error) {
	if err := arity(fn, args, 2, 2); err != nil {
		return nil, err
	}
	var d Expr
	var err error
	isDate := args[0].DataType().ID() == arrow.DATE32
	if isDate {
		d = args[0]
	} else if d, err = datetimeArg(fn, args, args[0]); err != nil {
		return nil, err
	}
	f, err := stringArg(fn, args, args[1])
	if err != nil {
		return nil, err
	}
	return newCall(fn, tString, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		fs := args[1].(*array.String)
		b := array.NewStringBuilder(ctx.Alloc)
		defer b.Release()
		b.Reserve(n)
		var buf []byte
		for i := 0; i < n; i++ {
			if IsNull(args[0], i) || fs.IsNull(i) {
				b.AppendNull()
				continue
			}
			var us int64
			if isDate {
				us = int64(args[0].(*array.Date32).Value(i)) * microsPerDay
			} else {
				us = int64(args[0].(*array.Timestamp).Value(i))
			}
			buf = appendDateFormat(buf[:0], us, fs.Value(i))
			b.BinaryBuilder.Append(buf)
		}
		return b.NewArray(), nil
	}), d, f), nil
}

// appendDateFormat is MySQL's make_date_time.
func appendDateFormat(dst []byte, us int64, format string) []byte {
	days, tod := splitMicros(us)
	y, m, d := civilFromDays(days)
	h, mi, s, f := clock(tod)
	h12 := (h+11)%12 + 1
	for k := 0; k < len(format); k++ {
		c := format[k]
		if c != '%' || k+1 == len(format) {
			dst = append(dst, c)
			continue
		}
		k++
		switch format[k] {
		case 'Y':
			dst = appendPadded(dst, y, 4)
		case 'y':
			dst = append2(dst, y%100)
		case 'm':
			dst = append2(dst, m)
		case 'c':
			dst = strconv.AppendInt(dst, m, 10)
		case 'd':
			dst = append2(dst, d)
		case 'e':
			dst = strconv.AppendInt(dst, d, 10)
		case 'D':
			dst = strconv.AppendInt(dst, d, 10)
			switch {
			case d >= 11 && d <= 13:
				dst = append(dst, "th"...)
			case d%10 == 1:
				dst = append(dst, "st"...)
			case d%10 == 2:
				dst = append(dst, "nd"...)
			case d%10 == 3:
				dst = append(dst, "rd"...)
			default:
				dst = append(dst, "th"...)
			}
		case 'j':
			dst = appendPadded(dst, dayOfYear(days), 3)
		case 'M':
			dst = append(dst, monthNames[m-1]...)
		case 'b':
			dst = append(dst, monthNames[m-1][:3]...)
		case 'W':
			dst = append(dst, dayNames[weekdayMon0(days)]...)
		case 'a':
			dst = append(dst, dayNames[weekdayMon0(days)][:3]...)
		case 'w':
			dst = strconv.AppendInt(dst, floorMod(days+4, 7), 10)
		case 'H':
			dst = append2(dst, h)
		case 'k':
			dst = strconv.AppendInt(dst, h, 10)
		case 'h', 'I':
			dst = append2(dst, h12)
		case 'l':
			dst = strconv.AppendInt(dst, h12, 10)
		case 'i':
			dst = append2(dst, mi)
		case 's', 'S':
			dst = append2(dst, s)
		case 'f':
			dst = appendPadded(dst, f, 6)
		case 'p':
			dst = append(dst, ampm(h)...)
		case 'r':
			dst = append2(dst, h12)
			dst = append(dst, ':')
			dst = append2(dst, mi)
			dst = append(dst, ':')
			dst = append2(dst, s)
			dst = append(dst, ' ')
			dst = append(dst, ampm(h)...)
		case 'T':
			dst = append2(dst, h)
			dst = append(dst, ':')
			dst = append2(dst, mi)
			dst = append(dst, ':')
			dst = append2(dst, s)
		case 'U', 'u':
			flags := weekFirstWeekday
			if format[k] == 'u' {
				flags = weekMondayFirst
			}
			w, _ := calcWeek(days, flags)
			dst = append2(dst, w)
		case 'V', 'v':
			flags := weekYear | weekFirstWeekday
			if format[k] == 'v' {
				flags = weekYear | weekMondayFirst
			}
			w, _ := calcWeek(days, flags)
			dst = append2(dst, w)
		case 'X', 'x':
			flags := weekYear | weekFirstWeekday
			if format[k] == 'x' {
				flags = weekYear | weekMondayFirst
			}
			_, wy := calcWeek(days, flags)
			dst = appendPadded(dst, wy, 4)
		default:
			dst = append(dst, format[k])
		}
	}
	return dst
}

func ampm(h int64) string {
	if h < 12 {
		return "AM"
	}
	return "PM"
}

// strToDateKind is what a STR_TO_DATE format produces.
func strToDateKind(format string) (hasDate, hasTime bool) {
	for k := 0; k+1 < len(format); k++ {
		if format[k] != '%' {
			continue
		}
		k++
		switch format[k] {
		case 'Y', 'y', 'm', 'c', 'd', 'e', 'D', 'j', 'M', 'b', 'W', 'a', 'w', 'U', 'u', 'V', 'v', 'X', 'x':
			hasDate = true
		case 'H', 'k', 'h', 'I', 'l', 'i', 's', 'S', 'f', 'p', 'r', 'T':
			hasTime = true
		}
	}
	return hasDate, hasTime
}

func bindStrToDate(fn string, args []Expr) (Expr, error) {
	if err := arity(fn, args, 2, 2); err != nil {
		return nil, err
	}
	s, err := stringArg(fn, args, args[0])
	if err != nil {
		return nil, err
	}
	f, err := stringArg(fn, args, args[1])
	if err != nil {
		return nil, err
	}
	rt := arrow.DataType(DatetimeType)
	if v, ok := constValue(f); ok && v != nil {
		hasDate, hasTime := strToDateKind(v.(string))
		switch {
		case hasDate && !hasTime:
			rt = tDate
		case !hasDate && hasTime:
			rt = TimeType
		}
	}
	timeOnly := isTime(rt)
	return newCall(fn, rt, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		ss, fs := args[0].(*array.String), args[1].(*array.String)
		o := newFixed[int64](ctx.Alloc, DatetimeType, n)
		o.andValidity(ss, fs)
		for i := 0; i < n; i++ {
			if !o.isValid(i) {
				continue
			}
			us, err := parseWithFormat(ss.Value(i), fs.Value(i), timeOnly)
			if err != nil {
				o.release()
				return nil, err
			}
			o.vals[i] = us
		}
		if timeOnly {
			o.typ = TimeType
		}
		a := o.finish()
		if rt.ID() == arrow.DATE32 {
			defer a.Release()
			return castArray(ctx, a, tDate)
		}
		return a, nil
	}), s, f), nil
}

// parseWithFormat is MySQL's extract_date_time: spaces in the input are
// skipped before each part, spaces in the format are ignored, other
// characters must match, numbers take at most their width of digits.
func parseWithFormat(val, format string, timeOnly bool) (int64, error) {
	bad := func() (int64, error) {
		return 0, fmt.Errorf("%w: cannot read %q with the format %q", ErrInvalidValue, val, format)
	}
	var y, m, d, h, mi, s, frac, yday int64 = 0, 0, 0, 0, 0, 0, 0, -1
	pm, twelve := -1, false
	p := 0
	skip := func() {
		for p < len(val) && isSpace(val[p]) {
			p++
		}
	}
	digits := func(width int) (int64, bool) {
		start := p
		if p < len(val) && (val[p] == '+' || val[p] == '-') && width > 2 {
			return 0, false
		}
		for p < len(val) && p-start < width && val[p] >= '0' && val[p] <= '9' {
			p++
		}
		if p == start {
			return 0, false
		}
		v, err := strconv.ParseInt(val[start:p], 10, 64)
		return v, err == nil
	}
	name := func(names []string, abbrev bool) (int64, bool) {
		for k, nm := range names {
			if abbrev {
				nm = nm[:3]
			}
			if len(val)-p >= len(nm) && strings.EqualFold(val[p:p+len(nm)], nm) {
				p += len(nm)
				return int64(k), true
			}
		}
		return 0, false
	}
	var ok bool
	for k := 0; k < len(format) && p < len(val); k++ {
		skip()
		if p >= len(val) {
			break
		}
		c := format[k]
		if c != '%' || k+1 == len(format) {
			if isSpace(c) {
				continue
			}
			if val[p] != c {
				return bad()
			}
			p++
			continue
		}
		k++
		switch format[k] {
		case 'Y':
			start := p
			y, ok = digits(4)
			if ok && p-start <= 2 {
				y = twoDigitYear(y)
			}
		case 'y':
			y, ok = digits(2)
			y = twoDigitYear(y)
		case 'm', 'c':
			m, ok = digits(2)
		case 'd', 'e':
			d, ok = digits(2)
		case 'D':
			d, ok = digits(2)
			if ok && len(val)-p >= 2 {
				p += 2
			}
		case 'j':
			yday, ok = digits(3)
		case 'H', 'k':
			h, ok = digits(2)
			twelve = false
		case 'h', 'I', 'l':
			h, ok = digits(2)
			twelve = true
		case 'i':
			mi, ok = digits(2)
		case 's', 'S':
			s, ok = digits(2)
		case 'f':
			start := p
			_, ok = digits(6)
			if ok {
				frac, _ = parseFraction(val[start:p])
			}
		case 'p':
			switch {
			case len(val)-p >= 2 && strings.EqualFold(val[p:p+2], "AM"):
				pm, ok = 0, true
			case len(val)-p >= 2 && strings.EqualFold(val[p:p+2], "PM"):
				pm, ok = 1, true
			}
			p += 2
		case 'M':
			var k int64
			k, ok = name(monthNames[:], false)
			m = k + 1
		case 'b':
			var k int64
			k, ok = name(monthNames[:], true)
			m = k + 1
		case 'W':
			_, ok = name(dayNames[:], false)
		case 'a':
			_, ok = name(dayNames[:], true)
		case 'w':
			_, ok = digits(1)
		case 'r':
			var t int64
			t, ok = parseClockAt(val, &p, true)
			h, mi, s = t/3600, t/60%60, t%60
			twelve = true
			skip()
			if len(val)-p >= 2 {
				switch strings.ToUpper(val[p : p+2]) {
				case "AM":
					pm = 0
				case "PM":
					pm = 1
				default:
					ok = false
				}
				p += 2
			}
		case 'T':
			var t int64
			t, ok = parseClockAt(val, &p, false)
			h, mi, s = t/3600, t/60%60, t%60
		case 'U', 'u', 'V', 'v', 'X', 'x':
			return 0, fmt.Errorf("%w: STR_TO_DATE with the week specifier %%%c", ErrUnsupported, format[k])
		case '%':
			ok = val[p] == '%'
			p++
		default:
			ok = val[p] == format[k]
			p++
		}
		if !ok {
			return bad()
		}
	}
	for p < len(val) && isSpace(val[p]) {
		p++
	}
	if p != len(val) {
		return bad() // MySQL: "Truncated incorrect ... value" and a result
	}
	if twelve || pm >= 0 {
		if h < 1 || h > 12 {
			return bad()
		}
		h %= 12
		if pm == 1 {
			h += 12
		}
	}
	if timeOnly {
		if h > 838 || mi > 59 || s > 59 {
			return bad()
		}
		return h*microsPerHour + mi*microsPerMinute + s*microsPerSecond + frac, nil
	}
	if yday >= 0 {
		if yday < 1 || yday > daysInYear(y) || y < 1 {
			return bad()
		}
		days := int64(dateFromCivil(int(y), time.January, 1)) + yday - 1
		return days*microsPerDay + h*microsPerHour + mi*microsPerMinute + s*microsPerSecond + frac, nil
	}
	if y < 1 || y > 9999 || m < 1 || m > 12 || d < 1 || d > int64(daysIn(int(y), time.Month(m))) || h > 23 || mi > 59 || s > 59 {
		return bad()
	}
	days := int64(dateFromCivil(int(y), time.Month(m), int(d)))
	return days*microsPerDay + h*microsPerHour + mi*microsPerMinute + s*microsPerSecond + frac, nil
}

// parseClockAt reads hh:mm:ss at val[*p:], in seconds.
func parseClockAt(val string, p *int, twelve bool) (int64, bool) {
	var f [3]int64
	for k := 0; k < 3; k++ {
		if k > 0 {
			if *p >= len(val) || val[*p] != ':' {
				return 0, false
			}
			*p++
		}
		start := *p
		for *p < len(val) && *p-start < 2 && val[*p] >= '0' && val[*p] <= '9' {
			*p++
		}
		if *p == start {
			return 0, false
		}
		f[k], _ = strconv.ParseInt(val[start:*p], 10, 64)
	}
	if (!twelve && f[0] > 23) || f[1] > 59 || f[2] > 59 {
		return 0, false
	}
	return f[0]*3600 + f[1]*60 + f[2], true
}

// twoDigitYear maps 70..99 to 1970..1999 and 0..69 to 2000..2069.
func twoDigitYear(y int64) int64 {
	if y < 70 {
		return y + 2000
	}
	if y < 100 {
		return y + 1900
	}
	return y
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}
