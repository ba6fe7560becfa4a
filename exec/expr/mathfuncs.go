package expr

import (
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
)

// More math functions, with MySQL 8's results: SQRT, EXP, LN, LOG, LOG2,
// LOG10, POW/POWER and the trigonometric functions compute in DOUBLE;
// an argument outside the function's domain gives NULL (SQRT(-1), LN(0),
// LOG(1, x), ACOS(2)); a result past DOUBLE is an error (EXP(1000),
// POW(10, 400)), as MySQL raises "DOUBLE value is out of range". SIGN is
// a BIGINT. TRUNCATE keeps the type of its argument (DECIMAL with the
// scale reduced to its digits argument, which must be a constant for a
// DECIMAL). PI() is the DOUBLE π; MySQL shows it with six decimals, fsql
// prints the whole double.
var mathFuncBinders = map[string]binder{
	"sqrt": bindFloatFn, "exp": bindFloatFn, "ln": bindFloatFn, "log2": bindFloatFn, "log10": bindFloatFn,
	"sin": bindFloatFn, "cos": bindFloatFn, "tan": bindFloatFn, "cot": bindFloatFn,
	"asin": bindFloatFn, "acos": bindFloatFn, "atan": bindFloatFn,
	"degrees": bindFloatFn, "radians": bindFloatFn,
	"log": bindLog, "pow": bindPow, "power": bindPow, "atan2": bindPow,
	"sign": bindSign, "pi": bindPi, "truncate": bindTruncate,
}

// floatFns are the one-argument DOUBLE functions; NaN marks a domain
// error (NULL).
var floatFns = map[string]func(float64) float64{
	"sqrt": func(x float64) float64 {
		if x < 0 {
			return math.NaN()
		}
		return math.Sqrt(x)
	},
	"exp":   math.Exp,
	"ln":    logOf(math.Log),
	"log2":  logOf(func(x float64) float64 { return math.Log(x) / math.Ln2 }), // MySQL's formula
	"log10": logOf(math.Log10),
	"sin":   math.Sin, "cos": math.Cos, "tan": math.Tan,
	"cot": func(x float64) float64 {
		if x == 0 {
			return math.Inf(1) // MySQL: out of range
		}
		return 1 / math.Tan(x)
	},
	"asin": math.Asin, "acos": math.Acos, "atan": math.Atan,
	"degrees": func(x float64) float64 { return x * (180 / math.Pi) },
	"radians": func(x float64) float64 { return x * (math.Pi / 180) },
}

func logOf(f func(float64) float64) func(float64) float64 {
	return func(x float64) float64 {
		if x <= 0 {
			return math.NaN()
		}
		return f(x)
	}
}

// floatArg reads e as DOUBLE (strings under the rule for numbers).
func floatArg(fn string, args []Expr, e Expr) (Expr, error) {
	x, err := numericArg(fn, args, e)
	if err != nil {
		return nil, err
	}
	return coerce(x, tFloat64)
}

// floatResult maps results: NaN is NULL, ±Inf an overflow error.
func floatResult(ctx *Context, fn string, xs [][]float64, n int, valid []arrow.Array, f func(i int) float64) (arrow.Array, error) {
	o := newFixed[float64](ctx.Alloc, tFloat64, n)
	o.andValidity(valid...)
	for i := 0; i < n; i++ {
		if !o.isValid(i) {
			continue
		}
		r := f(i)
		switch {
		case math.IsNaN(r):
			o.setNull(i)
		case math.IsInf(r, 0):
			o.release()
			args := ""
			for k, x := range xs {
				if k > 0 {
					args += ", "
				}
				args += formatFloat(x[i])
			}
			return nil, fmt.Errorf("%w: DOUBLE value is out of range in %s(%s)", ErrOverflow, fn, args)
		default:
			o.vals[i] = r
		}
	}
	return o.finish(), nil
}

func bindFloatFn(fn string, args []Expr) (Expr, error) {
	if err := arity(fn, args, 1, 1); err != nil {
		return nil, err
	}
	x, err := floatArg(fn, args, args[0])
	if err != nil {
		return nil, err
	}
	f := floatFns[fn]
	return newCall(fn, tFloat64, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		xs := vals[float64](args[0])
		return floatResult(ctx, fn, [][]float64{xs}, n, args, func(i int) float64 { return f(xs[i]) })
	}), x), nil
}

// bindLog binds LOG(x) (the natural logarithm) and LOG(b, x): NULL when
// x <= 0, b <= 0 or b = 1 (MySQL's Item_func_log).
func bindLog(fn string, args []Expr) (Expr, error) {
	if err := arity(fn, args, 1, 2); err != nil {
		return nil, err
	}
	if len(args) == 1 {
		return bindFloatFn("ln", args)
	}
	return bindBinaryFloat(fn, args, func(b, x float64) float64 {
		if x <= 0 || b <= 0 || b == 1 {
			return math.NaN()
		}
		return math.Log(x) / math.Log(b)
	})
}

func bindPow(fn string, args []Expr) (Expr, error) {
	if fn == "power" {
		fn = "pow"
	}
	if fn == "atan2" {
		return bindBinaryFloat(fn, args, math.Atan2)
	}
	return bindBinaryFloat(fn, args, func(x, y float64) float64 {
		r := math.Pow(x, y)
		if math.IsNaN(r) {
			return math.Inf(1) // MySQL: POW(-8, 1/3) is out of range
		}
		return r
	})
}

func bindBinaryFloat(fn string, args []Expr, f func(x, y float64) float64) (Expr, error) {
	if err := arity(fn, args, 2, 2); err != nil {
		return nil, err
	}
	x, err := floatArg(fn, args, args[0])
	if err != nil {
		return nil, err
	}
	y, err := floatArg(fn, args, args[1])
	if err != nil {
		return nil, err
	}
	return newCall(fn, tFloat64, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		xs, ys := vals[float64](args[0]), vals[float64](args[1])
		return floatResult(ctx, fn, [][]float64{xs, ys}, n, args, func(i int) float64 { return f(xs[i], ys[i]) })
	}), x, y), nil
}

func bindSign(fn string, args []Expr) (Expr, error) {
	if err := arity(fn, args, 1, 1); err != nil {
		return nil, err
	}
	x, err := numericArg(fn, args, args[0])
	if err != nil {
		return nil, err
	}
	t := x.DataType()
	var sign func(a arrow.Array, i int) int64
	switch {
	case isNullType(t):
		return Null(tInt64), nil
	case isFloat(t):
		x, _ = coerce(x, tFloat64)
		sign = func(a arrow.Array, i int) int64 { return signOf(vals[float64](a)[i]) }
	case isDecimal(t):
		sign = func(a arrow.Array, i int) int64 { return int64(vals[num](a)[i].Sign()) }
	default:
		x, _ = coerce(x, tInt64)
		sign = func(a arrow.Array, i int) int64 { return signOf(vals[int64](a)[i]) }
	}
	return newCall(fn, tInt64, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		o := newFixed[int64](ctx.Alloc, tInt64, n)
		for i := range o.vals {
			o.vals[i] = sign(args[0], i)
		}
		o.andValidity(args[0])
		return o.finish(), nil
	}), x), nil
}

func signOf[T int64 | float64](v T) int64 {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}

func bindPi(fn string, args []Expr) (Expr, error) {
	if err := arity(fn, args, 0, 0); err != nil {
		return nil, err
	}
	return NewLiteral(math.Pi, tFloat64), nil
}

// bindTruncate binds TRUNCATE(x, d): x cut (toward zero) to d digits after
// the point, or to 10^-d when d is negative.
func bindTruncate(fn string, args []Expr) (Expr, error) {
	if err := arity(fn, args, 2, 2); err != nil {
		return nil, err
	}
	x, err := numericArg(fn, args, args[0])
	if err != nil {
		return nil, err
	}
	dt := args[1].DataType()
	if !isInt(dt) && !isNullType(dt) {
		if !isNumeric(dt) && !isText(dt) {
			return nil, argErr(fn, args, "the number of digits must be an integer")
		}
	}
	k, err := coerce(args[1], tInt64)
	if err != nil {
		return nil, err
	}
	t := x.DataType()
	switch {
	case isNullType(t):
		return Null(tInt64), nil
	case isFloat(t):
		return roundVar(fn, x, k, true)
	case isDecimal(t):
		v, ok := constValue(k)
		if !ok {
			return roundVar(fn, x, k, true)
		}
		if v == nil {
			return Null(t), nil
		}
		d := v.(int64)
		dt := t.(*arrow.Decimal128Type)
		s := dt.Scale
		// MySQL's result keeps d digits (at most 30, its largest scale),
		// padding with zeros: TRUNCATE(1.5, 3) is 1.500.
		ints := dt.Precision - s
		ns := int32(max(0, min(d, 30, int64(maxDecimalPrecision-ints))))
		rt := decType(max(ints+ns, 1), ns)
		return newCall(fn, rt, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
			return mapFixed(ctx, args[0], rt, func(v num) num { return truncDec(v, s, ns, d) }), nil
		}), x, NewLiteral(d, tInt64)), nil
	}
	x, _ = coerce(x, tInt64)
	return newCall(fn, tInt64, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		xs, ds := vals[int64](args[0]), vals[int64](args[1])
		o := newFixed[int64](ctx.Alloc, tInt64, n)
		for i, v := range xs {
			o.vals[i] = truncInt(v, ds[i])
		}
		o.andValidity(args[0], args[1])
		return o.finish(), nil
	}), x, k), nil
}

// truncInt cuts v toward zero to a multiple of 10^-d (d < 0).
func truncInt(v, d int64) int64 {
	switch {
	case d >= 0:
		return v
	case d < -18:
		return 0
	}
	p := int64(math.Pow10(int(-d)))
	return v / p * p
}

// truncFloat cuts v to d decimal digits toward zero, as MySQL's
// my_double_round with truncate does.
func truncFloat(v float64, d int64) float64 {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return v
	}
	if d > 308 {
		return v
	}
	if d < -308 {
		return 0
	}
	p := math.Pow(10, math.Abs(float64(d)))
	var r float64
	if d >= 0 {
		r = math.Trunc(v*p) / p
		if math.IsInf(v*p, 0) {
			return v
		}
	} else {
		r = math.Trunc(v/p) * p
	}
	return r + 0 // -0 is 0
}

// truncDec cuts v (scale s) to scale ns toward zero (or pads it to ns);
// a negative d also zeroes -d integer digits.
func truncDec(v num, s, ns int32, d int64) num {
	if ns >= s {
		r, _ := decScaleUp(v, ns-s)
		return r
	}
	r, _ := decTrunc(v, s-ns)
	if d < 0 {
		k := int32(min(-d, maxDecimalPrecision))
		q, _ := decTrunc(r, k)
		if up, ok := decScaleUp(q, k); ok {
			return up
		}
		return num{}
	}
	return r
}
