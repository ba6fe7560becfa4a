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
			return nil, argCause(fn, all, "", err)
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
	return newCall(fn, t, caseKernel{t: t}, conv...), nil
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
	return newCall("coalesce", t, coalesceKernel{t: t}, conv...), nil
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

// gather builds an array of type t whose row i is row pos[i] of
// outs[choice[i]] (every chosen output has type t).
func gather(ctx *Context, t arrow.DataType, choice, pos []int32, outs []branchOut) (arrow.Array, error) {
	n := len(choice)
	if CollationOf(t) != nil {
		plain := make([]branchOut, len(outs))
		for k, o := range outs {
			plain[k] = o
			if o.arr != nil {
				plain[k].arr = Storage(o.arr)
			}
		}
		s, err := gather(ctx, tString, choice, pos, plain)
		if err != nil {
			return nil, err
		}
		return Collated(t, s), nil
	}
	switch t.ID() {
	case arrow.NULL:
		return array.MakeArrayOfNull(ctx.Alloc, t, n), nil
	case arrow.INT8:
		return gatherFixed[int8](ctx, t, choice, pos, outs), nil
	case arrow.INT16:
		return gatherFixed[int16](ctx, t, choice, pos, outs), nil
	case arrow.INT32, arrow.DATE32:
		return gatherFixed[int32](ctx, t, choice, pos, outs), nil
	case arrow.INT64, arrow.FLOAT64, arrow.TIMESTAMP, arrow.UINT64, arrow.TIME64:
		return gatherFixed[int64](ctx, t, choice, pos, outs), nil
	case arrow.DECIMAL128:
		return gatherFixed[num](ctx, t, choice, pos, outs), nil
	case arrow.BOOL:
		o := newBool(ctx.Alloc, n)
		for i, c := range choice {
			s, p := outs[c].arr, int(pos[i])
			if IsNull(s, p) {
				o.setNull(i)
				continue
			}
			o.set(i, s.(*array.Boolean).Value(p))
		}
		return o.finish(), nil
	case arrow.STRING:
		b := array.NewStringBuilder(ctx.Alloc)
		defer b.Release()
		b.Reserve(n)
		for i, c := range choice {
			s, p := outs[c].arr, int(pos[i])
			if IsNull(s, p) {
				b.AppendNull()
				continue
			}
			b.Append(s.(*array.String).Value(p))
		}
		return b.NewArray(), nil
	}
	return nil, argErr("case", nil, "unsupported result type "+typeSQL(t))
}

func gatherFixed[T arrow.FixedWidthType](ctx *Context, t arrow.DataType, choice, pos []int32, outs []branchOut) arrow.Array {
	vs := make([][]T, len(outs))
	for k, o := range outs {
		if o.arr != nil {
			vs[k] = vals[T](o.arr)
		}
	}
	o := newFixed[T](ctx.Alloc, t, len(choice))
	for i, c := range choice {
		s, p := outs[c].arr, int(pos[i])
		if s.NullN() > 0 && IsNull(s, p) {
			bitutil.ClearBit(o.bits, i)
			continue
		}
		o.vals[i] = vs[c][p]
	}
	return o.finish()
}
