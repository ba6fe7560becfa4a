package hive

import (
	"math"
	"strconv"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// The value syntax of CSV fields, shared by type detection and reading so
// that a value after the sample is held to the rule the sample was.

func isBool(v []byte) bool {
	switch len(v) {
	case 4:
		return (v[0]|0x20) == 't' && (v[1]|0x20) == 'r' && (v[2]|0x20) == 'u' && (v[3]|0x20) == 'e'
	case 5:
		return (v[0]|0x20) == 'f' && (v[1]|0x20) == 'a' && (v[2]|0x20) == 'l' && (v[3]|0x20) == 's' && (v[4]|0x20) == 'e'
	}
	return false
}

// number is the shape of a decimal number's text.
type number struct {
	intDigits, frac int32 // digits before and after the point
	dot, exp        bool
}

// scanNumber checks v is a number: an optional sign, digits with an
// optional fraction (at least one digit in all), an optional exponent.
// An integer part with a leading zero (007, 00.5) is not a number: such
// values are codes, kept as text.
func scanNumber(v []byte) (number, bool) {
	var n number
	i := 0
	if i < len(v) && (v[i] == '+' || v[i] == '-') {
		i++
	}
	start := i
	for i < len(v) && '0' <= v[i] && v[i] <= '9' {
		i++
	}
	n.intDigits = int32(i - start)
	if n.intDigits > 1 && v[start] == '0' {
		return n, false
	}
	if i < len(v) && v[i] == '.' {
		n.dot = true
		i++
		fs := i
		for i < len(v) && '0' <= v[i] && v[i] <= '9' {
			i++
		}
		n.frac = int32(i - fs)
	}
	if n.intDigits+n.frac == 0 {
		return n, false
	}
	if i < len(v) && (v[i] == 'e' || v[i] == 'E') {
		n.exp = true
		i++
		if i < len(v) && (v[i] == '+' || v[i] == '-') {
			i++
		}
		es := i
		for i < len(v) && '0' <= v[i] && v[i] <= '9' {
			i++
		}
		if i == es {
			return n, false
		}
	}
	return n, i == len(v)
}

// parseInt parses a signed 64-bit decimal integer.
func parseInt(v []byte) (int64, bool) {
	i, neg := 0, false
	if len(v) > 0 && (v[0] == '+' || v[0] == '-') {
		neg, i = v[0] == '-', 1
	}
	if i == len(v) {
		return 0, false
	}
	var u uint64
	for ; i < len(v); i++ {
		c := v[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if u > (math.MaxUint64-9)/10 {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
	}
	switch {
	case neg && u <= 1<<63:
		return int64(-u), true
	case !neg && u <= math.MaxInt64:
		return int64(u), true
	}
	return 0, false
}

// parseDouble parses a number (scanNumber's syntax: no inf, nan, hex or
// underscores, which strconv would take) as a finite double.
func parseDouble(v []byte) (float64, bool) {
	if _, ok := scanNumber(v); !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(v), len(v)), 64)
	return f, err == nil
}

// parseDecimal parses a number without exponent whose digits fit t.
func parseDecimal(v []byte, t *arrow.Decimal128Type) (decimal128.Num, bool) {
	num, ok := scanNumber(v)
	if !ok || num.exp || num.frac > t.Scale || num.intDigits > t.Precision-t.Scale {
		return decimal128.Num{}, false
	}
	var n decimal128.Num
	var chunk uint64
	digits := 0
	flush := func() {
		n = n.Mul(decimal128.GetScaleMultiplier(digits)).Add(decimal128.FromU64(chunk))
		chunk, digits = 0, 0
	}
	for _, c := range v {
		if c < '0' || c > '9' {
			continue // sign and point: the digits' positions are known from num
		}
		chunk = chunk*10 + uint64(c-'0')
		digits++
		if digits == 18 {
			flush()
		}
	}
	flush()
	n = n.Mul(decimal128.GetScaleMultiplier(int(t.Scale - num.frac)))
	if v[0] == '-' {
		n = n.Negate()
	}
	return n, true
}

func digits2(v []byte, i int) (int, bool) {
	a, b := v[i]-'0', v[i+1]-'0'
	if a > 9 || b > 9 {
		return 0, false
	}
	return int(a)*10 + int(b), true
}

// parseDateBytes parses YYYY-MM-DD (years 0001 to 9999).
func parseDateBytes(v []byte) (arrow.Date32, bool) {
	if len(v) != 10 || v[4] != '-' || v[7] != '-' {
		return 0, false
	}
	hi, ok1 := digits2(v, 0)
	lo, ok2 := digits2(v, 2)
	m, ok3 := digits2(v, 5)
	d, ok4 := digits2(v, 8)
	y := hi*100 + lo
	if !ok1 || !ok2 || !ok3 || !ok4 || y < 1 || m < 1 || m > 12 || d < 1 || d > daysIn(y, m) {
		return 0, false
	}
	return arrow.Date32(daysFromCivil(y, m, d)), true
}

func daysIn(y, m int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil is the number of days from 1970-01-01 to y-m-d in the
// proleptic Gregorian calendar (Howard Hinnant's algorithm).
func daysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}

// parseClock parses HH:MM:SS[.ffffff] (HH 00..23) as microseconds.
func parseClock(v []byte) (int64, bool) {
	if len(v) < 8 || v[2] != ':' || v[5] != ':' {
		return 0, false
	}
	h, ok1 := digits2(v, 0)
	m, ok2 := digits2(v, 3)
	s, ok3 := digits2(v, 6)
	if !ok1 || !ok2 || !ok3 || h > 23 || m > 59 || s > 59 {
		return 0, false
	}
	us := (int64(h)*3600 + int64(m)*60 + int64(s)) * 1e6
	if len(v) == 8 {
		return us, true
	}
	f := v[8:]
	if f[0] != '.' || len(f) < 2 || len(f) > 7 {
		return 0, false
	}
	frac := int64(0)
	for _, c := range f[1:] {
		if c < '0' || c > '9' {
			return 0, false
		}
		frac = frac*10 + int64(c-'0')
	}
	for range 7 - len(f) {
		frac *= 10
	}
	return us + frac, true
}

// parseTime parses a time of day.
func parseTime(v []byte) (arrow.Time64, bool) {
	us, ok := parseClock(v)
	return arrow.Time64(us), ok
}

// parseDatetime parses YYYY-MM-DD[( |T)HH:MM:SS[.ffffff]] as microseconds
// of wall-clock time.
func parseDatetime(v []byte) (arrow.Timestamp, bool) {
	if len(v) < 10 {
		return 0, false
	}
	d, ok := parseDateBytes(v[:10])
	if !ok {
		return 0, false
	}
	us := int64(d) * 86400e6
	if len(v) == 10 {
		return arrow.Timestamp(us), true
	}
	if v[10] != ' ' && v[10] != 'T' {
		return 0, false
	}
	c, ok := parseClock(v[11:])
	return arrow.Timestamp(us + c), ok
}
