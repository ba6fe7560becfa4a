package expr

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// IN: probe and list are converted to their common type. A NULL probe is
// NULL; a match is TRUE; no match is NULL when the list holds a NULL and
// FALSE otherwise. A list of literals is prepared once: lists of up to 8
// values are scanned, longer ones go through a hash set. A list with other
// expressions binds to an OR of equalities, which has the same semantics.
func bindIn(fn string, args []Expr) (Expr, error) {
	if err := arity(fn, args, 2, -1); err != nil {
		return nil, err
	}
	t := args[0].DataType()
	for _, a := range args[1:] {
		nt, err := CommonType(t, a.DataType())
		if err != nil {
			return nil, argCause(fn, args, "", err)
		}
		t = nt
	}
	if nt, ok := narrowType(args[0], args[1:]); ok {
		t = nt
	}
	conv := make([]Expr, len(args))
	allLit := true
	for i, a := range args {
		c, err := coerce(a, t)
		if err != nil {
			return nil, err
		}
		conv[i] = c
		if _, ok := c.(*Literal); !ok && i > 0 {
			allLit = false
		}
	}
	if !allLit {
		var out Expr
		for _, a := range conv[1:] {
			eq, err := NewCall("=", conv[0], a)
			if err != nil {
				return nil, err
			}
			if out == nil {
				out = eq
			} else if out, err = NewCall("or", out, eq); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	hasNull := false
	var list []any
	for _, a := range conv[1:] {
		v := a.(*Literal).Value
		if v == nil {
			hasNull = true
			continue
		}
		list = append(list, v)
	}
	var k kernel
	switch t.ID() {
	case arrow.INT8:
		k = inFixed(typed[int8](list), hasNull)
	case arrow.INT16:
		k = inFixed(typed[int16](list), hasNull)
	case arrow.INT32:
		k = inFixed(typed[int32](list), hasNull)
	case arrow.INT64:
		k = inFixed(typed[int64](list), hasNull)
	case arrow.FLOAT64:
		k = inFixed(typed[float64](list), hasNull)
	case arrow.DATE32:
		k = inFixed(typed[arrow.Date32](list), hasNull)
	case arrow.TIMESTAMP:
		k = inFixed(typed[arrow.Timestamp](list), hasNull)
	case arrow.UINT64:
		k = inFixed(typed[uint64](list), hasNull)
	case arrow.TIME64:
		k = inFixed(typed[arrow.Time64](list), hasNull)
	case arrow.DECIMAL128:
		k = inFixed(typed[num](list), hasNull)
	case arrow.STRING:
		k = inStrings(typed[string](list), hasNull)
	case arrow.EXTENSION:
		k = inCollated(CollationOf(t), typed[string](list), hasNull)
	case arrow.BOOL, arrow.NULL:
		// Rare: fall back to ORed equalities.
		var out Expr
		for _, a := range conv[1:] {
			eq, err := NewCall("=", conv[0], a)
			if err != nil {
				return nil, err
			}
			if out == nil {
				out = eq
			} else if out, err = NewCall("or", out, eq); err != nil {
				return nil, err
			}
		}
		return out, nil
	default:
		return nil, argErr(fn, args, "")
	}
	return newCall(fn, tBool, k, conv...), nil
}

func typed[T any](list []any) []T {
	out := make([]T, len(list))
	for i, v := range list {
		out[i] = v.(T)
	}
	return out
}

// inKernel evaluates only the probe; the list is already prepared.
type inKernel func(ctx *Context, probe arrow.Array) arrow.Array

func (k inKernel) eval(ctx *Context, c *Call, batch arrow.RecordBatch) (arrow.Array, error) {
	p, err := c.Args[0].Eval(ctx, batch)
	if err == nil {
		err = checkType(c.Args[0], p)
	}
	if err != nil {
		return nil, err
	}
	defer p.Release()
	return k(ctx, p), nil
}

func inFixed[T interface {
	arrow.FixedWidthType
	comparable
}](list []T, hasNull bool) kernel {
	var set map[T]struct{}
	if len(list) > 8 {
		set = make(map[T]struct{}, len(list))
		for _, v := range list {
			set[v] = struct{}{}
		}
	}
	return inKernel(func(ctx *Context, probe arrow.Array) arrow.Array {
		pv := vals[T](probe)
		o := newBool(ctx.Alloc, len(pv))
		for i, v := range pv {
			var hit bool
			if set != nil {
				_, hit = set[v]
			} else {
				for _, l := range list {
					if l == v {
						hit = true
						break
					}
				}
			}
			if hit {
				o.set(i, true)
			} else if hasNull {
				o.setNull(i)
			}
		}
		o.andValidity(probe)
		return o.finish()
	})
}

// inCollated matches by the collation's keys: 'A' COLLATE
// utf8mb4_general_ci IN ('a') is TRUE.
func inCollated(c *Collation, list []string, hasNull bool) kernel {
	set := make(map[string]struct{}, len(list))
	for _, v := range list {
		set[string(c.Key(nil, v))] = struct{}{}
	}
	return inKernel(func(ctx *Context, probe arrow.Array) arrow.Array {
		s := Storage(probe).(*array.String)
		n := s.Len()
		o := newBool(ctx.Alloc, n)
		var key []byte
		for i := 0; i < n; i++ {
			if s.IsNull(i) {
				continue
			}
			key = c.Key(key[:0], s.Value(i))
			if _, hit := set[string(key)]; hit {
				o.set(i, true)
			} else if hasNull {
				o.setNull(i)
			}
		}
		o.andValidity(probe)
		return o.finish()
	})
}

func inStrings(list []string, hasNull bool) kernel {
	set := make(map[string]struct{}, len(list))
	for _, v := range list {
		set[v] = struct{}{}
	}
	return inKernel(func(ctx *Context, probe arrow.Array) arrow.Array {
		s := probe.(*array.String)
		n := s.Len()
		o := newBool(ctx.Alloc, n)
		for i := 0; i < n; i++ {
			if _, hit := set[s.Value(i)]; hit {
				o.set(i, true)
			} else if hasNull {
				o.setNull(i)
			}
		}
		o.andValidity(probe)
		return o.finish()
	})
}
