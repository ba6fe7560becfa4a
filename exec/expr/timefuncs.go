package expr

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
)

// TIME functions, with MySQL 8's results: TIME(x) is the time of day of
// a DATETIME (or x read as a TIME); TIMEDIFF(a, b) is a - b of two TIMEs
// or two DATE/DATETIMEs as a TIME (NULL for one of each, as in MySQL);
// ADDTIME/SUBTIME(a, t) add a TIME to a DATETIME or a TIME and keep a's
// type; TIME_TO_SEC is whole seconds (BIGINT, toward zero) and
// SEC_TO_TIME its inverse. TIME results stay in MySQL's range,
// -838:59:59 .. 838:59:59, clamped at its ends as MySQL clamps them.
var timeFuncBinders = map[string]binder{
	"time": bindTimeOf, "timediff": bindTimeDiff, "addtime": bindAddTime, "subtime": bindAddTime,
	"time_to_sec": bindTimeToSec, "sec_to_time": bindSecToTime,
}

// maxTimeMicros is 838:59:59, TIME's largest value.
const maxTimeMicros = 838*microsPerHour + 59*microsPerMinute + 59*microsPerSecond

func clampTime(us int64) int64 { return max(-maxTimeMicros, min(us, maxTimeMicros)) }

// timeArg is e as a TIME: a TIME as it is, text read as one.
func timeArg(fn string, args []Expr, e Expr) (Expr, error) {
	t := e.DataType()
	switch {
	case isTime(t):
		return e, nil
	case isText(t), isNullType(t):
		return coerce(e, TimeType)
	}
	return nil, argErr(fn, args, "expects a TIME")
}

func bindTimeOf(fn string, args []Expr) (Expr, error) {
	if err := arity(fn, args, 1, 1); err != nil {
		return nil, err
	}
	t := args[0].DataType()
	if !isTemporal(t) {
		return timeArg(fn, args, args[0])
	}
	x, err := datetimeArg(fn, args, args[0])
	if err != nil {
		return nil, err
	}
	return newCall(fn, TimeType, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		return mapFixed(ctx, args[0], TimeType, func(v arrow.Timestamp) arrow.Time64 {
			_, tod := splitMicros(int64(v))
			return arrow.Time64(tod)
		}), nil
	}), x), nil
}

func bindTimeDiff(fn string, args []Expr) (Expr, error) {
	if err := arity(fn, args, 2, 2); err != nil {
		return nil, err
	}
	ta, tb := args[0].DataType(), args[1].DataType()
	if isTime(ta) || isTime(tb) {
		if isTemporal(ta) || isTemporal(tb) {
			return Null(TimeType), nil // a TIME and a DATE/DATETIME: MySQL's NULL
		}
		a, err := timeArg(fn, args, args[0])
		if err != nil {
			return nil, err
		}
		b, err := timeArg(fn, args, args[1])
		if err != nil {
			return nil, err
		}
		return timeKernel(fn, a, b, func(x, y int64) int64 { return x - y }), nil
	}
	a, err := datetimeArg(fn, args, args[0])
	if err != nil {
		return nil, err
	}
	b, err := datetimeArg(fn, args, args[1])
	if err != nil {
		return nil, err
	}
	return timeKernel(fn, a, b, func(x, y int64) int64 { return x - y }), nil
}

// timeKernel is f of two int64-backed arguments (TIME or DATETIME), as a
// clamped TIME.
func timeKernel(fn string, a, b Expr, f func(x, y int64) int64) Expr {
	return newCall(fn, TimeType, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		x, y := vals[int64](args[0]), vals[int64](args[1])
		o := newFixed[arrow.Time64](ctx.Alloc, TimeType, n)
		for i := range x {
			o.vals[i] = arrow.Time64(clampTime(f(x[i], y[i])))
		}
		o.andValidity(args[0], args[1])
		return o.finish(), nil
	}), a, b)
}

// bindAddTime binds ADDTIME(a, t) and SUBTIME(a, t): a is a DATETIME (a
// DATE or text is read as one) or a TIME, and keeps its type; t is a TIME
// (text is read as one).
func bindAddTime(fn string, args []Expr) (Expr, error) {
	if err := arity(fn, args, 2, 2); err != nil {
		return nil, err
	}
	sign := int64(1)
	if fn == "subtime" {
		sign = -1
	}
	t, err := timeArg(fn, args, args[1])
	if err != nil {
		return nil, err
	}
	if isTime(args[0].DataType()) {
		return timeKernel(fn, args[0], t, func(x, y int64) int64 { return x + sign*y }), nil
	}
	a, err := datetimeArg(fn, args, args[0])
	if err != nil {
		return nil, err
	}
	rt := a.DataType()
	return newCall(fn, rt, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		x, y := vals[int64](args[0]), vals[int64](args[1])
		o := newFixed[int64](ctx.Alloc, rt, n)
		for i := range x {
			o.vals[i] = x[i] + sign*y[i]
		}
		o.andValidity(args[0], args[1])
		return o.finish(), nil
	}), a, t), nil
}

func bindTimeToSec(fn string, args []Expr) (Expr, error) {
	if err := arity(fn, args, 1, 1); err != nil {
		return nil, err
	}
	x := args[0]
	if isTemporal(x.DataType()) {
		var err error
		if x, err = bindTimeOf("time", args); err != nil {
			return nil, err
		}
	} else {
		var err error
		if x, err = timeArg(fn, args, x); err != nil {
			return nil, err
		}
	}
	return newCall(fn, tInt64, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		return mapFixed(ctx, args[0], tInt64, func(v arrow.Time64) int64 { return int64(v) / microsPerSecond }), nil
	}), x), nil
}

func bindSecToTime(fn string, args []Expr) (Expr, error) {
	if err := arity(fn, args, 1, 1); err != nil {
		return nil, err
	}
	x, err := numericArg(fn, args, args[0])
	if err != nil {
		return nil, err
	}
	if isInt(x.DataType()) {
		x, _ = coerce(x, tInt64)
		return newCall(fn, TimeType, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
			return mapFixed(ctx, args[0], TimeType, func(v int64) arrow.Time64 {
				switch {
				case v > maxTimeMicros/microsPerSecond:
					return arrow.Time64(maxTimeMicros)
				case v < -maxTimeMicros/microsPerSecond:
					return arrow.Time64(-maxTimeMicros)
				}
				return arrow.Time64(v * microsPerSecond)
			}), nil
		}), x), nil
	}
	if x, err = coerce(x, tFloat64); err != nil {
		return nil, err
	}
	return newCall(fn, TimeType, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		return mapFixed(ctx, args[0], TimeType, func(v float64) arrow.Time64 {
			us := math.Round(v * float64(microsPerSecond))
			if math.IsNaN(us) {
				return 0
			}
			return arrow.Time64(clampTime(int64(max(-math.MaxInt64/2, min(us, math.MaxInt64/2)))))
		}), nil
	}), x), nil
}
