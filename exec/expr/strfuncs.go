package expr

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// More string functions, with MySQL 8's rules. Lengths and positions count
// characters; comparisons inside them (REPLACE, LOCATE, SUBSTRING_INDEX,
// STRCMP) are byte-wise, fsql's default collation. Any NULL argument
// gives NULL, except in CONCAT_WS, which skips NULL values (a NULL
// separator is NULL). A negative length gives NULL in LPAD/RPAD and ” in
// LEFT/RIGHT/REPEAT/SPACE. A result longer than MySQL's default
// max_allowed_packet (64 MiB) is an error where MySQL returns NULL with
// a warning.
var strFuncBinders = map[string]binder{
	"replace": bindStrFn, "lpad": bindStrFn, "rpad": bindStrFn, "left": bindStrFn, "right": bindStrFn,
	"reverse": bindStrFn, "repeat": bindStrFn, "space": bindStrFn, "substring_index": bindStrFn,
	"concat_ws": bindConcatWS, "locate": bindLocate, "instr": bindLocate, "position": bindLocate,
	"ascii": bindASCII, "strcmp": bindStrcmp,
}

// maxStringResult is MySQL's default max_allowed_packet.
const maxStringResult = 64 << 20

// strFnSig lists, per function, which arguments are strings ('s') and
// which integers ('i').
var strFnSig = map[string]string{
	"replace": "sss", "lpad": "sis", "rpad": "sis", "left": "si", "right": "si",
	"reverse": "s", "repeat": "si", "space": "i", "substring_index": "ssi",
}

// intArg reads e as a BIGINT argument of a string function.
func intArg(fn string, args []Expr, e Expr) (Expr, error) {
	t := e.DataType()
	if !isNumeric(t) && !isNullType(t) && !isText(t) && t.ID() != arrow.BOOL {
		return nil, argErr(fn, args, "expects a number")
	}
	return coerce(e, tInt64)
}

// rowFn computes one row from the string and integer arguments.
type rowFn func(s []string, k []int64, buf []byte) (out []byte, r rowResult)

// rowResult says what a rowFn produced.
type rowResult int8

const (
	rowOK      rowResult = iota
	rowNull              // the row is NULL
	rowTooLong           // the result would pass max_allowed_packet
)

func bindStrFn(fn string, args []Expr) (Expr, error) {
	sig := strFnSig[fn]
	if err := arity(fn, args, len(sig), len(sig)); err != nil {
		return nil, err
	}
	conv := make([]Expr, len(args))
	for i, a := range args {
		var err error
		if sig[i] == 's' {
			conv[i], err = stringArg(fn, args, a)
		} else {
			conv[i], err = intArg(fn, args, a)
		}
		if err != nil {
			return nil, err
		}
	}
	f := strRowFns[fn]
	return newCall(fn, tString, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		var ss []*array.String
		var ks [][]int64
		for i, a := range args {
			if sig[i] == 's' {
				ss = append(ss, a.(*array.String))
			} else {
				ks = append(ks, vals[int64](a))
			}
		}
		b := array.NewStringBuilder(ctx.Alloc)
		defer b.Release()
		b.Reserve(n)
		sv := make([]string, len(ss))
		kv := make([]int64, len(ks))
		var buf []byte
	rows:
		for i := 0; i < n; i++ {
			for _, a := range args {
				if IsNull(a, i) {
					b.AppendNull()
					continue rows
				}
			}
			for k, s := range ss {
				sv[k] = s.Value(i)
			}
			for k, v := range ks {
				kv[k] = v[i]
			}
			out, r := f(sv, kv, buf[:0])
			if r == rowOK && len(out) > maxStringResult {
				r = rowTooLong
			}
			switch r {
			case rowNull:
				b.AppendNull()
				continue
			case rowTooLong:
				return nil, fmt.Errorf("%w: the result of %s() is longer than max_allowed_packet (%d bytes)", ErrOverflow, fn, maxStringResult)
			}
			b.BinaryBuilder.Append(out)
			buf = out
		}
		return b.NewArray(), nil
	}), conv...), nil
}

// runeLen counts characters; cheap for ASCII.
func runeLen(s string) int64 { return int64(utf8.RuneCountInString(s)) }

// prefixRunes is the byte length of the first k characters of s.
func prefixRunes(s string, k int64) int {
	if k <= 0 {
		return 0
	}
	for i := range s {
		if k == 0 {
			return i
		}
		k--
	}
	return len(s)
}

// fitsLen guards against results past max_allowed_packet before building
// them (REPEAT('x', 1e12) must not allocate).
func fitsLen(n int64) bool { return n >= 0 && n <= maxStringResult }

var strRowFns = map[string]rowFn{
	"replace": func(s []string, _ []int64, buf []byte) ([]byte, rowResult) {
		if s[1] == "" {
			return append(buf, s[0]...), rowOK
		}
		return append(buf, strings.ReplaceAll(s[0], s[1], s[2])...), rowOK
	},
	"lpad": func(s []string, k []int64, buf []byte) ([]byte, rowResult) { return pad(s[0], k[0], s[1], buf, true) },
	"rpad": func(s []string, k []int64, buf []byte) ([]byte, rowResult) { return pad(s[0], k[0], s[1], buf, false) },
	"left": func(s []string, k []int64, buf []byte) ([]byte, rowResult) {
		return append(buf, s[0][:prefixRunes(s[0], k[0])]...), rowOK
	},
	"right": func(s []string, k []int64, buf []byte) ([]byte, rowResult) {
		if k[0] <= 0 {
			return buf, rowOK
		}
		n := runeLen(s[0])
		if k[0] >= n {
			return append(buf, s[0]...), rowOK
		}
		return append(buf, s[0][prefixRunes(s[0], n-k[0]):]...), rowOK
	},
	"reverse": func(s []string, _ []int64, buf []byte) ([]byte, rowResult) {
		v := s[0]
		for len(v) > 0 {
			r, size := utf8.DecodeLastRuneInString(v)
			if r == utf8.RuneError && size == 1 {
				buf = append(buf, v[len(v)-1]) // a stray byte stays a byte
			} else {
				buf = append(buf, v[len(v)-size:]...)
			}
			v = v[:len(v)-size]
		}
		return buf, rowOK
	},
	"repeat": func(s []string, k []int64, buf []byte) ([]byte, rowResult) {
		if k[0] <= 0 || s[0] == "" {
			return buf, rowOK
		}
		if k[0] > maxStringResult || !fitsLen(k[0]*int64(len(s[0]))) {
			return nil, rowTooLong
		}
		for j := int64(0); j < k[0]; j++ {
			buf = append(buf, s[0]...)
		}
		return buf, rowOK
	},
	"space": func(_ []string, k []int64, buf []byte) ([]byte, rowResult) {
		if k[0] <= 0 {
			return buf, rowOK
		}
		if !fitsLen(k[0]) {
			return nil, rowTooLong
		}
		for j := int64(0); j < k[0]; j++ {
			buf = append(buf, ' ')
		}
		return buf, rowOK
	},
	"substring_index": func(s []string, k []int64, buf []byte) ([]byte, rowResult) {
		str, delim, count := s[0], s[1], k[0]
		if delim == "" || count == 0 {
			return buf, rowOK
		}
		if count > 0 {
			pos := 0
			for j := int64(0); j < count; j++ {
				i := strings.Index(str[pos:], delim)
				if i < 0 {
					return append(buf, str...), rowOK
				}
				pos += i + len(delim)
			}
			return append(buf, str[:pos-len(delim)]...), rowOK
		}
		end := len(str)
		for j := int64(0); j < -count; j++ {
			i := strings.LastIndex(str[:end], delim)
			if i < 0 {
				return append(buf, str...), rowOK
			}
			end = i
		}
		return append(buf, str[end+len(delim):]...), rowOK
	},
}

// pad is LPAD/RPAD: s padded (or cut) to n characters with repetitions
// of p; NULL for a negative n, or when padding is needed and p is empty.
func pad(s string, n int64, p string, buf []byte, left bool) ([]byte, rowResult) {
	if n < 0 {
		return nil, rowNull
	}
	have := runeLen(s)
	if n <= have {
		return append(buf, s[:prefixRunes(s, n)]...), rowOK
	}
	if p == "" {
		return nil, rowNull
	}
	if !fitsLen(n) {
		return nil, rowTooLong
	}
	need := n - have
	plen := runeLen(p)
	if !left {
		buf = append(buf, s...)
	}
	for need > 0 {
		if need >= plen {
			buf = append(buf, p...)
			need -= plen
			continue
		}
		buf = append(buf, p[:prefixRunes(p, need)]...)
		need = 0
	}
	if left {
		buf = append(buf, s...)
	}
	return buf, rowOK
}

func bindConcatWS(fn string, args []Expr) (Expr, error) {
	if err := arity(fn, args, 2, -1); err != nil {
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
		for k, a := range args {
			ss[k] = a.(*array.String)
		}
		b := array.NewStringBuilder(ctx.Alloc)
		defer b.Release()
		b.Reserve(n)
		var buf []byte
		for i := 0; i < n; i++ {
			if ss[0].IsNull(i) {
				b.AppendNull()
				continue
			}
			sep := ss[0].Value(i)
			buf = buf[:0]
			first := true
			for _, s := range ss[1:] {
				if s.IsNull(i) {
					continue
				}
				if !first {
					buf = append(buf, sep...)
				}
				first = false
				buf = append(buf, s.Value(i)...)
			}
			if len(buf) > maxStringResult {
				return nil, fmt.Errorf("%w: concat_ws() result of %d bytes is longer than max_allowed_packet (%d)", ErrOverflow, len(buf), maxStringResult)
			}
			b.BinaryBuilder.Append(buf)
		}
		return b.NewArray(), nil
	}), conv...), nil
}

// bindLocate binds LOCATE(sub, s[, pos]), POSITION(sub IN s) and
// INSTR(s, sub): the character position of the first sub in s at or after
// pos (1-based), 0 when there is none or pos < 1.
func bindLocate(fn string, args []Expr) (Expr, error) {
	hi := 3
	if fn != "locate" {
		hi = 2
	}
	if err := arity(fn, args, 2, hi); err != nil {
		return nil, err
	}
	if fn == "instr" {
		args = []Expr{args[1], args[0]}
	}
	sub, err := stringArg(fn, args, args[0])
	if err != nil {
		return nil, err
	}
	s, err := stringArg(fn, args, args[1])
	if err != nil {
		return nil, err
	}
	conv := []Expr{sub, s}
	if len(args) == 3 {
		p, err := intArg(fn, args, args[2])
		if err != nil {
			return nil, err
		}
		conv = append(conv, p)
	}
	return newCall("locate", tInt64, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		subs, ss := args[0].(*array.String), args[1].(*array.String)
		var pos []int64
		if len(args) == 3 {
			pos = vals[int64](args[2])
		}
		o := newFixed[int64](ctx.Alloc, tInt64, n)
		o.andValidity(args...)
		for i := 0; i < n; i++ {
			if !o.isValid(i) {
				continue
			}
			start := int64(1)
			if pos != nil {
				start = pos[i]
			}
			o.vals[i] = locate(subs.Value(i), ss.Value(i), start)
		}
		return o.finish(), nil
	}), conv...), nil
}

func locate(sub, s string, start int64) int64 {
	if start < 1 {
		return 0
	}
	n := runeLen(s)
	if start > n+1 {
		return 0
	}
	off := prefixRunes(s, start-1)
	i := strings.Index(s[off:], sub)
	if i < 0 {
		return 0
	}
	return start + runeLen(s[off:off+i])
}

func bindASCII(fn string, args []Expr) (Expr, error) {
	if err := arity(fn, args, 1, 1); err != nil {
		return nil, err
	}
	s, err := stringArg(fn, args, args[0])
	if err != nil {
		return nil, err
	}
	return newCall(fn, tInt64, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		ss := args[0].(*array.String)
		o := newFixed[int64](ctx.Alloc, tInt64, n)
		for i := 0; i < n; i++ {
			if ss.ValueLen(i) > 0 {
				o.vals[i] = int64(ss.Value(i)[0])
			}
		}
		o.andValidity(ss)
		return o.finish(), nil
	}), s), nil
}

func bindStrcmp(fn string, args []Expr) (Expr, error) {
	if err := arity(fn, args, 2, 2); err != nil {
		return nil, err
	}
	a, err := stringArg(fn, args, args[0])
	if err != nil {
		return nil, err
	}
	b, err := stringArg(fn, args, args[1])
	if err != nil {
		return nil, err
	}
	return newCall(fn, tInt64, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		x, y := args[0].(*array.String), args[1].(*array.String)
		o := newFixed[int64](ctx.Alloc, tInt64, n)
		for i := 0; i < n; i++ {
			o.vals[i] = int64(strings.Compare(x.Value(i), y.Value(i)))
		}
		o.andValidity(x, y)
		return o.finish(), nil
	}), a, b), nil
}
