package expr

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// Arithmetic with MySQL typing:
//   - int op int (+ - * % DIV) is BIGINT; overflow is ErrOverflow.
//   - any DOUBLE makes the operation DOUBLE.
//   - otherwise decimals (an int counts as DECIMAL(19,0) for BIGINT,
//     DECIMAL(10,0) for INT): + and - keep the larger scale and one more
//     integer digit; * adds scales and precisions; / raises the left scale
//     by 4 (div_precision_increment) and rounds half away from zero.
//   - / of two ints is a decimal too (1/3 = 0.3333).
//   - division or modulo by zero is NULL.
//   - strings are read as DOUBLE, as MySQL does.
var arithBinders = map[string]binder{
	"+": bindArith, "-": bindArith, "*": bindArith, "/": bindArith, "%": bindArith,
	"mod": bindArith, "div": bindArith, "neg": bindNeg,
}

// numericArg maps an argument to the type arithmetic sees: strings become
// DOUBLE, booleans BIGINT, untyped NULL stays NULL.
func numericArg(fn string, args []Expr, e Expr) (Expr, error) {
	t := e.DataType()
	switch {
	case isUint(t):
		return coerce(e, decType(20, 0))
	case isNumeric(t), isNullType(t):
		return e, nil
	case isText(t):
		return coerce(e, tFloat64)
	case t.ID() == arrow.BOOL:
		return coerce(e, tInt64)
	}
	why := ""
	if isTemporal(t) {
		why = "date arithmetic uses date_add/date_sub with an INTERVAL"
	}
	return nil, argErr(fn, args, why)
}

func bindArith(fn string, args []Expr) (Expr, error) {
	if fn == "mod" {
		fn = "%"
	}
	if err := arity(fn, args, 2, 2); err != nil {
		return nil, err
	}
	a, err := numericArg(fn, args, args[0])
	if err != nil {
		return nil, err
	}
	b, err := numericArg(fn, args, args[1])
	if err != nil {
		return nil, err
	}
	ta, tb := a.DataType(), b.DataType()
	// NULL takes the other side's type; NULL op NULL is typed as BIGINT.
	if isNullType(ta) && isNullType(tb) {
		ta, tb = tInt64, tInt64
	} else if isNullType(ta) {
		ta = tb
	} else if isNullType(tb) {
		tb = ta
	}
	switch {
	case fn == "div":
		if isFloat(ta) || isFloat(tb) || isDecimal(ta) || isDecimal(tb) {
			// MySQL truncates the exact quotient; fsql does it in DOUBLE.
			if a, err = coerce(a, tFloat64); err != nil {
				return nil, err
			}
			if b, err = coerce(b, tFloat64); err != nil {
				return nil, err
			}
			return newCall(fn, tInt64, binaryKernel(floatIntDiv), a, b), nil
		}
		return bindInts(fn, a, b)
	case isFloat(ta) || isFloat(tb):
		if a, err = coerce(a, tFloat64); err != nil {
			return nil, err
		}
		if b, err = coerce(b, tFloat64); err != nil {
			return nil, err
		}
		return newCall(fn, tFloat64, binaryKernel(floatKernels[fn]), a, b), nil
	case isDecimal(ta) || isDecimal(tb) || fn == "/":
		da, _ := asDecimal(ta)
		db, _ := asDecimal(tb)
		if a, err = coerce(a, da); err != nil {
			return nil, err
		}
		if b, err = coerce(b, db); err != nil {
			return nil, err
		}
		p1, s1, p2, s2 := da.Precision, da.Scale, db.Precision, db.Scale
		var rt *arrow.Decimal128Type
		switch fn {
		case "+", "-":
			s := max(s1, s2)
			rt = decType(max(p1-s1, p2-s2)+s+1, s)
		case "*":
			rt = decType(min(p1+p2, maxDecimalPrecision), min(s1+s2, maxDecimalPrecision))
		case "/":
			s := min(s1+4, maxDecimalPrecision)
			rt = decType(min(p1-s1+s2+s, maxDecimalPrecision), s)
		case "%":
			s := max(s1, s2)
			rt = decType(max(p1-s1, p2-s2)+s, s)
		}
		return newCall(fn, rt, decKernel(fn, s1, s2, rt), a, b), nil
	}
	return bindInts(fn, a, b)
}

func bindInts(fn string, a, b Expr) (Expr, error) {
	var err error
	if a, err = coerce(a, tInt64); err != nil {
		return nil, err
	}
	if b, err = coerce(b, tInt64); err != nil {
		return nil, err
	}
	return newCall(fn, tInt64, binaryKernel(intKernels[fn]), a, b), nil
}

func bindNeg(fn string, args []Expr) (Expr, error) {
	if err := arity(fn, args, 1, 1); err != nil {
		return nil, err
	}
	a, err := numericArg(fn, args, args[0])
	if err != nil {
		return nil, err
	}
	t := a.DataType()
	switch {
	case isNullType(t):
		return Null(tInt64), nil
	case isFloat(t):
		a, _ = coerce(a, tFloat64)
		return newCall(fn, tFloat64, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
			return mapFixed(ctx, args[0], tFloat64, func(v float64) float64 { return -v }), nil
		}), a), nil
	case isDecimal(t):
		return newCall(fn, t, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
			return mapFixed(ctx, args[0], t, func(v num) num { return v.Negate() }), nil
		}), a), nil
	}
	a, err = coerce(a, tInt64)
	if err != nil {
		return nil, err
	}
	return newCall(fn, tInt64, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		for i, v := range vals[int64](args[0]) {
			if v == math.MinInt64 && validAt(args[0], i) {
				return nil, fmt.Errorf("%w: -(%d) is past BIGINT", ErrOverflow, v)
			}
		}
		return mapFixed(ctx, args[0], tInt64, func(v int64) int64 { return -v }), nil
	}), a), nil
}

// mapFixed applies f to every value of a (NULL slots included; their
// results are masked by the copied validity).
func mapFixed[S, D arrow.FixedWidthType](ctx *Context, a arrow.Array, to arrow.DataType, f func(S) D) arrow.Array {
	src := vals[S](a)
	o := newFixed[D](ctx.Alloc, to, len(src))
	for i, v := range src {
		o.vals[i] = f(v)
	}
	o.andValidity(a)
	return o.finish()
}

var intKernels = map[string]func(*Context, operand, operand, int) (arrow.Array, error){
	"+": func(ctx *Context, x, y operand, n int) (arrow.Array, error) {
		return intBinary(ctx, x, y, n, "+", func(x, y int64) (int64, bool) {
			r := x + y
			return r, (x >= 0) != (y >= 0) || (r >= 0) == (x >= 0)
		})
	},
	"-": func(ctx *Context, x, y operand, n int) (arrow.Array, error) {
		return intBinary(ctx, x, y, n, "-", func(x, y int64) (int64, bool) {
			r := x - y
			return r, (x >= 0) == (y >= 0) || (r >= 0) == (x >= 0)
		})
	},
	"*": func(ctx *Context, x, y operand, n int) (arrow.Array, error) {
		return intBinary(ctx, x, y, n, "*", func(x, y int64) (int64, bool) {
			hi, lo := bits.Mul64(uint64(x), uint64(y))
			r := int64(lo)
			// Signed correction of the unsigned high word.
			shi := int64(hi)
			if x < 0 {
				shi -= y
			}
			if y < 0 {
				shi -= x
			}
			return r, (shi == 0 && r >= 0) || (shi == -1 && r < 0)
		})
	},
	"%": func(ctx *Context, x, y operand, n int) (arrow.Array, error) {
		return intDivLike(ctx, x, y, n, func(x, y int64) int64 {
			if y == -1 {
				return 0
			}
			return x % y
		})
	},
	"div": func(ctx *Context, x, y operand, n int) (arrow.Array, error) {
		return intDivLike(ctx, x, y, n, func(x, y int64) int64 {
			if y == -1 {
				return -x // MinInt64 DIV -1 wraps; MySQL errors, rare enough
			}
			return x / y
		})
	},
}

func intBinary(ctx *Context, x, y operand, n int, op string, f func(x, y int64) (int64, bool)) (arrow.Array, error) {
	a, b := vals[int64](x.arr), vals[int64](y.arr)
	o := newFixed[int64](ctx.Alloc, tInt64, n)
	andOps(o.bits, x, y)
	bad := -1
	for i := range o.vals {
		r, ok := f(a[i&x.m], b[i&y.m])
		o.vals[i] = r
		if !ok && bad < 0 && o.isValid(i) {
			bad = i
		}
	}
	if bad >= 0 {
		o.release()
		return nil, fmt.Errorf("%w: BIGINT value out of range in %d %s %d", ErrOverflow, a[bad&x.m], op, b[bad&y.m])
	}
	return o.finish(), nil
}

func intDivLike(ctx *Context, x, y operand, n int, f func(x, y int64) int64) (arrow.Array, error) {
	a, b := vals[int64](x.arr), vals[int64](y.arr)
	o := newFixed[int64](ctx.Alloc, tInt64, n)
	andOps(o.bits, x, y)
	for i := range o.vals {
		bv := b[i&y.m]
		if bv == 0 {
			o.setNull(i)
			continue
		}
		o.vals[i] = f(a[i&x.m], bv)
	}
	return o.finish(), nil
}

var floatKernels = map[string]func(*Context, operand, operand, int) (arrow.Array, error){
	"+": func(ctx *Context, x, y operand, n int) (arrow.Array, error) {
		return floatBinary(ctx, x, y, n, false, func(x, y float64) float64 { return x + y })
	},
	"-": func(ctx *Context, x, y operand, n int) (arrow.Array, error) {
		return floatBinary(ctx, x, y, n, false, func(x, y float64) float64 { return x - y })
	},
	"*": func(ctx *Context, x, y operand, n int) (arrow.Array, error) {
		return floatBinary(ctx, x, y, n, false, func(x, y float64) float64 { return x * y })
	},
	"/": func(ctx *Context, x, y operand, n int) (arrow.Array, error) {
		return floatBinary(ctx, x, y, n, true, func(x, y float64) float64 { return x / y })
	},
	"%": func(ctx *Context, x, y operand, n int) (arrow.Array, error) {
		return floatBinary(ctx, x, y, n, true, math.Mod)
	},
}

func floatBinary(ctx *Context, x, y operand, n int, zeroIsNull bool, f func(x, y float64) float64) (arrow.Array, error) {
	a, b := vals[float64](x.arr), vals[float64](y.arr)
	o := newFixed[float64](ctx.Alloc, tFloat64, n)
	andOps(o.bits, x, y)
	for i := range o.vals {
		bv := b[i&y.m]
		if zeroIsNull && bv == 0 {
			o.setNull(i)
			continue
		}
		o.vals[i] = f(a[i&x.m], bv)
	}
	return o.finish(), nil
}

func floatIntDiv(ctx *Context, x, y operand, n int) (arrow.Array, error) {
	a, b := vals[float64](x.arr), vals[float64](y.arr)
	o := newFixed[int64](ctx.Alloc, tInt64, n)
	andOps(o.bits, x, y)
	for i := range o.vals {
		av, bv := a[i&x.m], b[i&y.m]
		if bv == 0 {
			o.setNull(i)
			continue
		}
		r, ok := roundFloatToInt(math.Trunc(av / bv))
		if !ok && o.isValid(i) {
			o.release()
			return nil, fmt.Errorf("%w: %g DIV %g is past BIGINT", ErrOverflow, av, bv)
		}
		o.vals[i] = r
	}
	return o.finish(), nil
}

// decStatus is the outcome of one decimal operation.
type decStatus uint8

const (
	decOK decStatus = iota
	decNull
	decOverflow
)

// decKernel builds the kernel of a decimal operation whose operands have
// scales s1 and s2 and whose result type is rt.
func decKernel(fn string, s1, s2 int32, rt *arrow.Decimal128Type) kernel {
	S := rt.Scale
	var f func(x, y num) (num, decStatus)
	okOr := func(r num, ok bool) (num, decStatus) {
		if !ok || !fitsPrecision(r, maxDecimalPrecision) {
			return r, decOverflow
		}
		return r, decOK
	}
	switch fn {
	case "+", "-", "%":
		k1, k2 := S-s1, S-s2
		f = func(x, y num) (num, decStatus) {
			var ok bool
			if k1 > 0 {
				if x, ok = decScaleUp(x, k1); !ok {
					return x, decOverflow
				}
			}
			if k2 > 0 {
				if y, ok = decScaleUp(y, k2); !ok {
					return y, decOverflow
				}
			}
			switch fn {
			case "+":
				return okOr(decAdd(x, y))
			case "-":
				return okOr(decSub(x, y))
			}
			if y.Sign() == 0 {
				return x, decNull
			}
			return decRem(x, y), decOK
		}
	case "*":
		extra := s1 + s2 - S // > 0 only when the scale was capped at 38
		f = func(x, y num) (num, decStatus) {
			r, ok := decMul(x, y)
			if !ok {
				if extra == 0 {
					return r, decOverflow
				}
				q := bigDivRound(new(big.Int).Mul(x.BigInt(), y.BigInt()), pow10(extra).BigInt())
				if q.BitLen() > 126 {
					return r, decOverflow
				}
				return okOr(decimal128.FromBigInt(q), true)
			}
			if extra > 0 {
				r, _ = decRescale(r, s1+s2, S)
			}
			return r, decOK
		}
	case "/":
		// x/10^s1 / (y/10^s2) at scale S is x * 10^(S-s1+s2) / y.
		k := S - s1 + s2
		f = func(x, y num) (num, decStatus) {
			if y.Sign() == 0 {
				return x, decNull
			}
			if k >= 0 {
				if sx, ok := decScaleUp(x, k); ok {
					return okOr(decDivRound(sx, y), true)
				}
			}
			bx, by := x.BigInt(), y.BigInt()
			if k >= 0 {
				bx.Mul(bx, pow10(k).BigInt())
			} else {
				by.Mul(by, pow10(-k).BigInt())
			}
			q := bigDivRound(bx, by)
			if q.BitLen() > 126 {
				return num{}, decOverflow
			}
			return okOr(decimal128.FromBigInt(q), true)
		}
	}
	return binaryKernel(func(ctx *Context, x, y operand, n int) (arrow.Array, error) {
		a, b := vals[num](x.arr), vals[num](y.arr)
		o := newFixed[num](ctx.Alloc, rt, n)
		andOps(o.bits, x, y)
		for i := range o.vals {
			if !o.isValid(i) {
				continue
			}
			av, bv := a[i&x.m], b[i&y.m]
			r, st := f(av, bv)
			switch st {
			case decNull:
				o.setNull(i)
			case decOverflow:
				o.release()
				return nil, fmt.Errorf("%w: %s %s %s does not fit DECIMAL(38)", ErrOverflow,
					av.ToString(s1), fn, bv.ToString(s2))
			}
			o.vals[i] = r
		}
		return o.finish(), nil
	})
}
