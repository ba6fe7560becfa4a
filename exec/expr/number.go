package expr

import "strings"

// The one rule for a string used as a number (arithmetic, comparison with
// a number, IN lists, SUM/AVG, CAST to a numeric type): the whole string,
// after ASCII whitespace is trimmed from both ends, must be a decimal
// number
//
//	[+-] digits [. [digits]] [e [+-] digits]   or   [+-] . digits [e [+-] digits]
//
// and anything else ('', 'abc', '12abc', '0x1F', '1_000', 'inf', 'NaN') is
// an error naming the value. MySQL reads the longest numeric prefix
// instead ('12abc' is 12, 'abc' is 0) and warns; fsql has no warnings to
// show, so it refuses rather than answer with a number the data does not
// hold. Where the whole string is a number both read it alike: ' 12 ' is
// 12 in both.

// asciiSpace is the whitespace MySQL skips around a number.
const asciiSpace = " \t\n\r\v\f"

// numberText returns s without surrounding whitespace when it is a
// decimal number by the rule above.
func numberText(s string) (string, bool) {
	s = strings.Trim(s, asciiSpace)
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := func() int {
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i - j
	}
	mant := digits()
	if i < len(s) && s[i] == '.' {
		i++
		mant += digits()
	}
	if mant == 0 {
		return "", false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return "", false
		}
	}
	return s, i == len(s)
}
