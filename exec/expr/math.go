package expr

import (
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
)

// Math functions. ROUND rounds half away from zero for every type (MySQL
// does so for exact values; for doubles fsql does it too instead of the C
// library's half-to-even). The digits argument of ROUND must be a
// constant, because it decides the result type.
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
			return nil, argErr(fn, args, "the number of digits must be an integer constant")
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
		p := int64(math.Pow10(int(-d)))
		return mapFixed(ctx, args[0], tInt64, func(v int64) int64 {
			q, r := v/p, v%p
			if r >= (p+1)/2 {
				q++
			} else if -r >= (p+1)/2 {
				q--
			}
			return q * p
		}), nil
	}), conv...), nil
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
