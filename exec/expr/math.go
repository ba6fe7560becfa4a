package expr

import (
	"fmt"
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// Math functions. ROUND rounds exact values half away from zero and
// doubles half to even, as MySQL does. A constant digits argument decides
// a decimal result's scale (ROUND(1.5, 2) is 1.50); digits that vary by
// row keep the argument's type, as MariaDB and MySQL do (roundVar).
var mathBinders = map[string]binder{
	"round": bindRound, "abs": bindAbs, "floor": bindFloorCeil, "ceil": bindFloorCeil,
	"ceiling": bindFloorCeil, "getbit": bindGetBit,
}

func bindRound(fn string, args []Expr) (Expr, error) {
	if err := arity(fn, args, 1, 2); err != nil {
		return nil, err
	}
	x, err := numericArg(fn, args, args[0])
	if err != nil {
		return nil, err
	}
	d := int64(0)
	conv := []Expr{x}
	if len(args) == 2 {
		// A constant, folded: ROUND(15, -1) has the expression -1.
		if dt := args[1].DataType(); !isInt(dt) && !isNullType(dt) {
			return nil, argErr(fn, args, "the number of digits must be an integer constant")
		}
		k, err := coerce(args[1], tInt64)
		if err != nil {
			return nil, err
		}
		v, ok := constValue(k)
		if !ok {
			return roundVar(fn, x, k, false)
		}
		if v == nil {
			return Null(x.DataType()), nil
		}
		d = v.(int64)
		conv = append(conv, NewLiteral(d, tInt64))
	}
	t := x.DataType()
	switch {
	case isNullType(t):
		return Null(tInt64), nil
	case isFloat(t):
		x, _ = coerce(x, tFloat64)
		conv[0] = x
		return newCall(fn, tFloat64, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
			return mapFixed(ctx, args[0], tFloat64, func(v float64) float64 { return roundFloat(v, d) }), nil
		}), conv...), nil
	case isDecimal(t):
		// MySQL's result has d digits after the point (0 to 30), padding
		// with zeros (ROUND(1.5, 2) is 1.50), and one more integer digit
		// when digits are dropped (the carry of 9.95 to 10.0); here the
		// integer digits must still fit in 38.
		dt := t.(*arrow.Decimal128Type)
		s := dt.Scale
		ints := dt.Precision - s
		ns := int32(max(0, min(d, 30, int64(maxDecimalPrecision-ints))))
		prec := ints + ns
		if ns < s {
			prec++
		}
		rt := decType(max(1, min(prec, maxDecimalPrecision)), ns)
		return newCall(fn, rt, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
			return decRoundArray(ctx, args[0], s, ns, d, rt)
		}), conv...), nil
	}
	x, err = coerce(x, tInt64)
	if err != nil {
		return nil, err
	}
	conv[0] = x
	if d >= 0 {
		return newCall(fn, tInt64, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
			args[0].Retain()
			return args[0], nil
		}), conv...), nil
	}
	return newCall(fn, tInt64, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		if -d > 18 {
			return mapFixed(ctx, args[0], tInt64, func(v int64) int64 { return 0 }), nil
		}
		return roundIntArray(ctx, args[0], func(int) int64 { return d })
	}), conv...), nil
}

// roundInt is v rounded half away from zero to a multiple of 10^-d (d <
// 0), false when that is past BIGINT.
func roundInt(v, d int64) (int64, bool) {
	if d >= 0 {
		return v, true
	}
	if -d > 18 {
		// 10^19 is past BIGINT, and every BIGINT rounds to 0 but those
		// at least 5·10^18 in size, which round past it.
		return 0, v < 5e18 && v > -5e18
	}
	p := int64(math.Pow10(int(-d)))
	q, r := v/p, v%p
	if r >= (p+1)/2 {
		q++
	} else if -r >= (p+1)/2 {
		q--
	}
	if q > math.MaxInt64/p || q < math.MinInt64/p {
		return 0, false
	}
	return q * p, true
}

// roundIntArray rounds each value of a to digits(i) digits; a row is
// NULL where a or one of also is.
func roundIntArray(ctx *Context, a arrow.Array, digits func(i int) int64, also ...arrow.Array) (arrow.Array, error) {
	src := vals[int64](a)
	o := newFixed[int64](ctx.Alloc, tInt64, len(src))
	o.andValidity(append([]arrow.Array{a}, also...)...)
	for i, v := range src {
		r, ok := roundInt(v, digits(i))
		if !ok && o.isValid(i) {
			o.release()
			return nil, fmt.Errorf("%w: ROUND(%d, %d) is past BIGINT", ErrOverflow, v, digits(i))
		}
		o.vals[i] = r
	}
	return o.finish(), nil
}

// roundVar binds ROUND(x, d) and TRUNCATE(x, d) (trunc) for digits d that
// vary by row. The result keeps x's type, as MariaDB's and MySQL's do
// when d is not a constant: a DOUBLE stays DOUBLE, an integer BIGINT, a
// DECIMAL(p,s) keeps scale s (ROUND(1.25, d) with d = 1 is 1.30), with
// one more integer digit for the carry (ROUND(9.99, 0) is 10.00). NULL
// digits give NULL.
func roundVar(fn string, x, d Expr, trunc bool) (Expr, error) {
	t := x.DataType()
	switch {
	case isNullType(t):
		return Null(tInt64), nil
	case isFloat(t):
		x, _ = coerce(x, tFloat64)
		f := roundFloat
		if trunc {
			f = truncFloat
		}
		return newCall(fn, tFloat64, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
			xs, ds := vals[float64](args[0]), vals[int64](args[1])
			o := newFixed[float64](ctx.Alloc, tFloat64, n)
			for i := range xs {
				o.vals[i] = f(xs[i], ds[i])
			}
			o.andValidity(args[0], args[1])
			return o.finish(), nil
		}), x, d), nil
	case isDecimal(t):
		dt := t.(*arrow.Decimal128Type)
		s := dt.Scale
		rt := decType(min(dt.Precision+1, maxDecimalPrecision), s)
		if trunc {
			rt = dt
		}
		return newCall(fn, rt, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
			xs, ds := vals[num](args[0]), vals[int64](args[1])
			o := newFixed[num](ctx.Alloc, rt, n)
			o.andValidity(args[0], args[1])
			for i, v := range xs {
				r, ok := v, true
				if k := ds[i]; k < int64(s) {
					r, ok = roundDecTo(v, s, k, trunc)
				}
				if !ok && o.isValid(i) {
					o.release()
					return nil, fmt.Errorf("%w: %s(%s, %d)", ErrOverflow, strings.ToUpper(fn), v.ToString(s), ds[i])
				}
				o.vals[i] = r
			}
			return o.finish(), nil
		}), x, d), nil
	}
	x, err := coerce(x, tInt64)
	if err != nil {
		return nil, err
	}
	if trunc {
		return newCall(fn, tInt64, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
			xs, ds := vals[int64](args[0]), vals[int64](args[1])
			o := newFixed[int64](ctx.Alloc, tInt64, n)
			for i, v := range xs {
				o.vals[i] = truncInt(v, ds[i])
			}
			o.andValidity(args[0], args[1])
			return o.finish(), nil
		}), x, d), nil
	}
	return newCall(fn, tInt64, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		ds := vals[int64](args[1])
		return roundIntArray(ctx, args[0], func(i int) int64 { return ds[i] }, args[1])
	}), x, d), nil
}

// roundDecTo rounds (or cuts, trunc) v of scale s to k < s digits after
// the point (before it, for k < 0), keeping scale s; false on overflow.
func roundDecTo(v num, s int32, k int64, trunc bool) (num, bool) {
	k = max(k, -maxDecimalPrecision)
	drop := int32(int64(s) - k) // digits dropped, > 0
	var r num
	if trunc {
		r, _ = decTrunc(v, drop) // the bool says whether it was exact
	} else {
		r, _ = decRescale(v, s, int32(k)) // dropping digits cannot overflow
	}
	return decScaleUp(r, drop)
}

// roundFloat is MySQL's my_double_round: v·10^d rounded half to even (the C
// library's rint, so ROUND(2.5E0) is 2), or v/10^-d for negative d; v
// itself where 10^d overflows, 0 where 10^-d does.
func roundFloat(v float64, d int64) float64 {
	if d < 0 {
		p := math.Pow10(int(min(-d, 400)))
		if math.IsInf(p, 0) {
			return 0
		}
		return math.RoundToEven(v/p) * p
	}
	p := math.Pow10(int(min(d, 400)))
	m := v * p
	if math.IsInf(p, 0) || math.IsInf(m, 0) {
		return v
	}
	return math.RoundToEven(m) / p
}

func decRoundArray(ctx *Context, a arrow.Array, s, ns int32, d int64, rt arrow.DataType) (arrow.Array, error) {
	src := vals[num](a)
	o := newFixed[num](ctx.Alloc, rt, len(src))
	o.andValidity(a)
	for i, v := range src {
		r, _ := decRescale(v, s, ns)
		if d < 0 {
			k := int32(min(-d, maxDecimalPrecision))
			r, _ = decRescale(r, 0, -k)
			var ok bool
			if r, ok = decScaleUp(r, k); !ok && o.isValid(i) {
				o.release()
				return nil, fmt.Errorf("%w: ROUND(%s, %d)", ErrOverflow, v.ToString(s), d)
			}
		}
		o.vals[i] = r
	}
	return o.finish(), nil
}

func bindAbs(fn string, args []Expr) (Expr, error) {
	if err := arity(fn, args, 1, 1); err != nil {
		return nil, err
	}
	x, err := numericArg(fn, args, args[0])
	if err != nil {
		return nil, err
	}
	t := x.DataType()
	switch {
	case isNullType(t):
		return Null(tInt64), nil
	case isFloat(t):
		x, _ = coerce(x, tFloat64)
		return newCall(fn, tFloat64, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
			return mapFixed(ctx, args[0], tFloat64, math.Abs), nil
		}), x), nil
	case isDecimal(t):
		return newCall(fn, t, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
			return mapFixed(ctx, args[0], t, func(v num) num { return v.Abs() }), nil
		}), x), nil
	}
	x, _ = coerce(x, tInt64)
	return newCall(fn, tInt64, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		for i, v := range vals[int64](args[0]) {
			if v == math.MinInt64 && validAt(args[0], i) {
				return nil, fmt.Errorf("%w: ABS(%d) is past BIGINT", ErrOverflow, v)
			}
		}
		return mapFixed(ctx, args[0], tInt64, func(v int64) int64 {
			if v < 0 {
				return -v
			}
			return v
		}), nil
	}), x), nil
}

func bindFloorCeil(fn string, args []Expr) (Expr, error) {
	if fn == "ceiling" {
		fn = "ceil"
	}
	if err := arity(fn, args, 1, 1); err != nil {
		return nil, err
	}
	x, err := numericArg(fn, args, args[0])
	if err != nil {
		return nil, err
	}
	up := fn == "ceil"
	t := x.DataType()
	switch {
	case isNullType(t):
		return Null(tInt64), nil
	case isFloat(t):
		x, _ = coerce(x, tFloat64)
		f := math.Floor
		if up {
			f = math.Ceil
		}
		return newCall(fn, tFloat64, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
			return mapFixed(ctx, args[0], tFloat64, f), nil
		}), x), nil
	case isDecimal(t):
		dt := t.(*arrow.Decimal128Type)
		s := dt.Scale
		rt := decType(max(dt.Precision-s+1, 1), 0)
		return newCall(fn, rt, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
			return mapFixed(ctx, args[0], rt, func(v num) num {
				q, exact := decTrunc(v, s)
				if !exact {
					if up && v.Sign() > 0 {
						q = q.Add(pow10(0))
					} else if !up && v.Sign() < 0 {
						q = q.Sub(pow10(0))
					}
				}
				return q
			}), nil
		}), x), nil
	}
	x, _ = coerce(x, tInt64)
	return newCall(fn, tInt64, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		args[0].Retain()
		return args[0], nil
	}), x), nil
}

func bindGetBit(fn string, args []Expr) (Expr, error) {
	if err := arity(fn, args, 2, 2); err != nil {
		return nil, err
	}
	for _, a := range args {
		if !isInt(a.DataType()) && !isNullType(a.DataType()) {
			return nil, argErr(fn, args, "expects integers")
		}
	}
	x, _ := coerce(args[0], tInt64)
	k, _ := coerce(args[1], tInt64)
	return newCall(fn, tInt64, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		xs, ks := vals[int64](args[0]), vals[int64](args[1])
		o := newFixed[int64](ctx.Alloc, tInt64, n)
		for i := range xs {
			o.vals[i] = (xs[i] >> (uint64(ks[i]) & 63)) & 1
		}
		o.andValidity(args[0], args[1])
		return o.finish(), nil
	}), x, k), nil
}
