package expr

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// String functions. Positions and CHAR_LENGTH count characters (UTF-8
// runes); LENGTH counts bytes, as in MySQL. Arguments of other types are
// converted to strings. TRIM, LTRIM and RTRIM remove spaces, or with a
// second argument every repetition of that string (the forms of
// TRIM([BOTH|LEADING|TRAILING] x FROM s)).
var stringBinders = map[string]binder{
	"substr": bindSubstr, "substring": bindSubstr, "concat": bindConcat,
	"upper": bindStrMap, "ucase": bindStrMap, "lower": bindStrMap, "lcase": bindStrMap,
	"trim": bindTrim, "ltrim": bindTrim, "rtrim": bindTrim,
	"length": bindStrLen, "octet_length": bindStrLen, "char_length": bindStrLen,
	"character_length": bindStrLen,
}

func stringArg(fn string, args []Expr, e Expr) (Expr, error) {
	if c := CollationOf(e.DataType()); c != nil {
		// MySQL's result would keep the collation; fsql's string
		// functions return plain strings, so it refuses rather than
		// drop it silently.
		return nil, fmt.Errorf("%w: %s of a string with COLLATE %s; apply COLLATE to the result instead", ErrUnsupported, fn, c.name)
	}
	c, err := coerce(e, tString)
	if err != nil {
		return nil, argCause(fn, args, "", err)
	}
	return c, nil
}

func bindStrMap(fn string, args []Expr) (Expr, error) {
	if err := arity(fn, args, 1, 1); err != nil {
		return nil, err
	}
	a, err := stringArg(fn, args, args[0])
	if err != nil {
		return nil, err
	}
	var f func(string) string
	switch fn {
	case "upper", "ucase":
		fn, f = "upper", strings.ToUpper
	case "lower", "lcase":
		fn, f = "lower", strings.ToLower
	}
	return newCall(fn, tString, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		return mapStrings(ctx, args[0].(*array.String), f), nil
	}), a), nil
}

// bindTrim binds trim/ltrim/rtrim(s) (spaces) and (s, x): MySQL removes x
// as a whole string, repeatedly, from the start (ltrim, trim) and then
// the end (rtrim, trim); an empty x removes nothing; NULL in, NULL out.
func bindTrim(fn string, args []Expr) (Expr, error) {
	if err := arity(fn, args, 1, 2); err != nil {
		return nil, err
	}
	conv := make([]Expr, len(args))
	for i, a := range args {
		c, err := stringArg(fn, args, a)
		if err != nil {
			return nil, err
		}
		conv[i] = c
	}
	lead, trail := fn != "rtrim", fn != "ltrim"
	return newCall(fn, tString, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		s := args[0].(*array.String)
		var x *array.String
		if len(args) == 2 {
			x = args[1].(*array.String)
		}
		b := array.NewStringBuilder(ctx.Alloc)
		defer b.Release()
		b.Reserve(n)
		b.ReserveData(len(s.ValueBytes()))
		for i := 0; i < n; i++ {
			if s.IsNull(i) || (x != nil && x.IsNull(i)) {
				b.AppendNull()
				continue
			}
			v, r := s.Value(i), " "
			if x != nil {
				r = x.Value(i)
			}
			if r != "" {
				for lead && strings.HasPrefix(v, r) {
					v = v[len(r):]
				}
				for trail && strings.HasSuffix(v, r) {
					v = v[:len(v)-len(r)]
				}
			}
			b.Append(v)
		}
		return b.NewArray(), nil
	}), conv...), nil
}

func mapStrings(ctx *Context, s *array.String, f func(string) string) arrow.Array {
	n := s.Len()
	b := array.NewStringBuilder(ctx.Alloc)
	defer b.Release()
	b.Reserve(n)
	b.ReserveData(len(s.ValueBytes()))
	for i := 0; i < n; i++ {
		if s.IsNull(i) {
			b.AppendNull()
			continue
		}
		b.Append(f(s.Value(i)))
	}
	return b.NewArray()
}

func bindStrLen(fn string, args []Expr) (Expr, error) {
	if err := arity(fn, args, 1, 1); err != nil {
		return nil, err
	}
	a, err := stringArg(fn, args, args[0])
	if err != nil {
		return nil, err
	}
	chars := fn == "char_length" || fn == "character_length"
	if chars {
		fn = "char_length"
	} else {
		fn = "length"
	}
	return newCall(fn, tInt64, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		s := args[0].(*array.String)
		o := newFixed[int64](ctx.Alloc, tInt64, n)
		for i := 0; i < n; i++ {
			if chars {
				o.vals[i] = int64(utf8.RuneCountInString(s.Value(i)))
			} else {
				o.vals[i] = int64(s.ValueLen(i))
			}
		}
		o.andValidity(s)
		return o.finish(), nil
	}), a), nil
}

func bindConcat(fn string, args []Expr) (Expr, error) {
	if err := arity(fn, args, 1, -1); err != nil {
		return nil, err
	}
	conv := make([]Expr, len(args))
	for i, a := range args {
		c, err := stringArg(fn, args, a)
		if err != nil {
			return nil, err
		}
		conv[i] = c
	}
	return newCall(fn, tString, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		ss := make([]*array.String, len(args))
		total := 0
		for k, a := range args {
			ss[k] = a.(*array.String)
			total += len(ss[k].ValueBytes())
		}
		b := array.NewStringBuilder(ctx.Alloc)
		defer b.Release()
		b.Reserve(n)
		b.ReserveData(total)
		var buf []byte
	rows:
		for i := 0; i < n; i++ {
			buf = buf[:0]
			for _, s := range ss {
				if s.IsNull(i) {
					b.AppendNull()
					continue rows
				}
				buf = append(buf, s.Value(i)...)
			}
			b.BinaryBuilder.Append(buf)
		}
		return b.NewArray(), nil
	}), conv...), nil
}

// bindSubstr: SUBSTR(s, pos[, len]) with MySQL's rules: pos is 1-based,
// a negative pos counts from the end, pos 0 or past the end gives ”, a
// length below 1 gives ”.
func bindSubstr(fn string, args []Expr) (Expr, error) {
	if err := arity(fn, args, 2, 3); err != nil {
		return nil, err
	}
	conv := make([]Expr, len(args))
	var err error
	if conv[0], err = stringArg(fn, args, args[0]); err != nil {
		return nil, err
	}
	for i := 1; i < len(args); i++ {
		t := args[i].DataType()
		if !isNumeric(t) && !isNullType(t) && !isText(t) {
			return nil, argErr(fn, args, "positions must be numbers")
		}
		if conv[i], err = coerce(args[i], tInt64); err != nil {
			return nil, err
		}
	}
	return newCall("substr", tString, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		s := args[0].(*array.String)
		pos := vals[int64](args[1])
		var lens []int64
		if len(args) == 3 {
			lens = vals[int64](args[2])
		}
		b := array.NewStringBuilder(ctx.Alloc)
		defer b.Release()
		b.Reserve(n)
		for i := 0; i < n; i++ {
			if s.IsNull(i) || args[1].IsNull(i) || (lens != nil && args[2].IsNull(i)) {
				b.AppendNull()
				continue
			}
			l := int64(-1) // no length: to the end
			if lens != nil {
				if l = lens[i]; l < 1 {
					b.Append("")
					continue
				}
			}
			b.Append(substr(s.Value(i), pos[i], l))
		}
		return b.NewArray(), nil
	}), conv...), nil
}

// substr implements MySQL's SUBSTRING on runes; l < 0 means "to the end"
// (only when no length was given).
func substr(s string, pos, l int64) string {
	if pos == 0 || l == 0 {
		return ""
	}
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		n := int64(len(s))
		start := pos - 1
		if pos < 0 {
			start = n + pos
		}
		if start < 0 || start >= n {
			return ""
		}
		end := n
		if l >= 0 && start+l < n {
			end = start + l
		}
		return s[start:end]
	}
	rs := []rune(s)
	n := int64(len(rs))
	start := pos - 1
	if pos < 0 {
		start = n + pos
	}
	if start < 0 || start >= n {
		return ""
	}
	end := n
	if l >= 0 && start+l < n {
		end = start + l
	}
	return string(rs[start:end])
}
