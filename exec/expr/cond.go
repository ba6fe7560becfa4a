package expr

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
)

// Conditional forms. Their result type is the common type of the
// branches with MySQL's twist that a string branch makes the result a
// string. NULLIF and IF bind to CASE.
var condBinders = map[string]binder{
	"case": bindCase, "coalesce": bindCoalesce, "ifnull": bindCoalesce,
	"nullif": bindNullIf, "if": bindIf, "in": bindIn, "like": bindLike,
}

// branchType folds resultCommonType over es.
func branchType(fn string, all []Expr, es []Expr) (arrow.DataType, error) {
	t := es[0].DataType()
	for _, e := range es[1:] {
		nt, err := resultCommonType(t, e.DataType())
		if err != nil {
			return nil, argErr(fn, all, err.Error())
		}
		t = nt
	}
	return t, nil
}

func bindCase(fn string, args []Expr) (Expr, error) {
	if len(args) < 3 || len(args)%2 == 0 {
		return nil, argErr(fn, args, "CASE takes WHEN/THEN pairs and an ELSE")
	}
	branches := []Expr{}
	for i := 1; i < len(args); i += 2 {
		branches = append(branches, args[i])
	}
	branches = append(branches, args[len(args)-1])
	t, err := branchType(fn, args, branches)
	if err != nil {
		return nil, err
	}
	conv := make([]Expr, len(args))
	for i, a := range args {
		var c Expr
		var err error
		if i%2 == 0 && i != len(args)-1 {
			c, err = boolArg(fn, args, a)
		} else {
			c, err = coerce(a, t)
		}
		if err != nil {
			return nil, err
		}
		conv[i] = c
	}
	return newCall(fn, t, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		choice := make([]int32, n)
		last := int32(len(args) - 1)
		for i := range choice {
			choice[i] = last
		}
		for w := len(args) - 3; w >= 0; w -= 2 {
			cond := args[w].(*array.Boolean)
			for i := 0; i < n; i++ {
				if cond.Value(i) && validAt(cond, i) {
					choice[i] = int32(w + 1)
				}
			}
		}
		return gather(ctx, t, choice, args)
	}), conv...), nil
}

func bindCoalesce(fn string, args []Expr) (Expr, error) {
	lo, hi := 1, -1
	if fn == "ifnull" {
		lo, hi = 2, 2
	}
	if err := arity(fn, args, lo, hi); err != nil {
		return nil, err
	}
	t, err := branchType(fn, args, args)
	if err != nil {
		return nil, err
	}
	conv := make([]Expr, len(args))
	for i, a := range args {
		if conv[i], err = coerce(a, t); err != nil {
			return nil, err
		}
	}
	return newCall("coalesce", t, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		choice := make([]int32, n)
		last := int32(len(args) - 1)
		for i := range choice {
			choice[i] = last
		}
		for k := len(args) - 2; k >= 0; k-- {
			a := args[k]
			for i := 0; i < n; i++ {
				if validAt(a, i) {
					choice[i] = int32(k)
				}
			}
		}
		return gather(ctx, t, choice, args)
	}), conv...), nil
}

func bindNullIf(fn string, args []Expr) (Expr, error) {
	if err := arity(fn, args, 2, 2); err != nil {
		return nil, err
	}
	eq, err := NewCall("=", args[0], args[1])
	if err != nil {
		return nil, err
	}
	return NewCall("case", eq, Null(args[0].DataType()), args[0])
}

func bindIf(fn string, args []Expr) (Expr, error) {
	if err := arity(fn, args, 3, 3); err != nil {
		return nil, err
	}
	return NewCall("case", args...)
}

// gather builds an array of type t whose row i is row i of
// srcs[choice[i]]; all srcs have type t.
func gather(ctx *Context, t arrow.DataType, choice []int32, srcs []arrow.Array) (arrow.Array, error) {
	n := len(choice)
	switch t.ID() {
	case arrow.NULL:
		return array.MakeArrayOfNull(ctx.Alloc, t, n), nil
	case arrow.INT8:
		return gatherFixed[int8](ctx, t, choice, srcs), nil
	case arrow.INT16:
		return gatherFixed[int16](ctx, t, choice, srcs), nil
	case arrow.INT32, arrow.DATE32:
		return gatherFixed[int32](ctx, t, choice, srcs), nil
	case arrow.INT64, arrow.FLOAT64:
		return gatherFixed[int64](ctx, t, choice, srcs), nil
	case arrow.DECIMAL128:
		return gatherFixed[num](ctx, t, choice, srcs), nil
	case arrow.BOOL:
		o := newBool(ctx.Alloc, n)
		for i, c := range choice {
			s := srcs[c]
			if s.IsNull(i) {
				o.setNull(i)
				continue
			}
			o.set(i, s.(*array.Boolean).Value(i))
		}
		return o.finish(), nil
	case arrow.STRING:
		b := array.NewStringBuilder(ctx.Alloc)
		defer b.Release()
		b.Reserve(n)
		for i, c := range choice {
			s := srcs[c]
			if s.IsNull(i) {
				b.AppendNull()
				continue
			}
			b.Append(s.(*array.String).Value(i))
		}
		return b.NewArray(), nil
	}
	return nil, argErr("case", nil, "unsupported result type "+typeSQL(t))
}

func gatherFixed[T arrow.FixedWidthType](ctx *Context, t arrow.DataType, choice []int32, srcs []arrow.Array) arrow.Array {
	vs := make([][]T, len(srcs))
	for k, s := range srcs {
		// CASE passes its WHEN conditions among srcs; only the branches
		// (of the result type) are ever chosen.
		if s.DataType().ID() == t.ID() {
			vs[k] = vals[T](s)
		}
	}
	o := newFixed[T](ctx.Alloc, t, len(choice))
	for i, c := range choice {
		s := srcs[c]
		if s.NullN() > 0 && s.IsNull(i) {
			bitutil.ClearBit(o.bits, i)
			continue
		}
		o.vals[i] = vs[c][i]
	}
	return o.finish()
}
