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
		lit, ok := args[1].(*Literal)
		if !ok || !(isInt(lit.Type) || isNullType(lit.Type)) {
			return nil, argErr(fn, args, "the number of digits must be an integer constant")
		}
		l, err := castLiteral(lit, tInt64)
		if err != nil {
			return nil, err
		}
		if l.Value == nil {
			return Null(x.DataType()), nil
		}
		d = l.Value.(int64)
		conv = append(conv, l)
	}
	t := x.DataType()
	switch {
	case isNullType(t):
		return Null(tInt64), nil
	case isFloat(t):
		x, _ = coerce(x, tFloat64)
		conv[0] = x
		p := math.Pow(10, float64(d))
		return newCall(fn, tFloat64, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
			return mapFixed(ctx, args[0], tFloat64, func(v float64) float64 {
				if d == 0 {
					return math.Round(v)
				}
				r := math.Round(v*p) / p
				if math.IsInf(r, 0) || math.IsNaN(r) {
					return v
				}
				return r
			}), nil
		}), conv...), nil
	case isDecimal(t):
		dt := t.(*arrow.Decimal128Type)
		s := dt.Scale
		ns := int32(max(0, min(int64(s), d)))
		rt := decType(min(dt.Precision-s+ns+1, maxDecimalPrecision), ns)
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
