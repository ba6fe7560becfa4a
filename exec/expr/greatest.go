package expr

import (
	"bytes"
	"cmp"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// GREATEST and LEAST with MySQL 8's comparison rules: NULL when any
// argument is NULL; integers compare as integers, with a DOUBLE as
// doubles, otherwise with a DECIMAL as decimals; dates and datetimes
// compare as DATETIME (DATE when all are dates); strings compare as
// strings, and so does a mix of numbers and strings (GREATEST(2, '10') is
// '2'); a mix of temporal values and strings compares as the temporal type.
// The result has the comparison type.
var greatestBinders = map[string]binder{"greatest": bindGreatest, "least": bindGreatest}

// greatestType is the comparison (and result) type of args.
func greatestType(fn string, args []Expr) (arrow.DataType, error) {
	var nums, strs, temps, nulls int
	for _, a := range args {
		t := a.DataType()
		switch {
		case isNullType(t):
			nulls++
		case isNumeric(t), t.ID() == arrow.BOOL:
			nums++
		case isText(t):
			strs++
		case isTemporal(t):
			temps++
		default:
			return nil, argErr(fn, args, "")
		}
	}
	switch {
	case temps > 0 && nums > 0:
		return nil, argErr(fn, args, "dates and numbers do not compare")
	case temps > 0:
		t := arrow.DataType(nil)
		for _, a := range args {
			if at := a.DataType(); isTemporal(at) {
				if t == nil {
					t = at
				} else if nt, err := CommonType(t, at); err == nil {
					t = nt
				}
			}
		}
		return t, nil
	case strs > 0:
		// A collated argument keeps its collation (two differ: an error).
		t := arrow.DataType(tString)
		for _, a := range args {
			if CollationOf(a.DataType()) != nil {
				nt, err := collatedCommon(t, a.DataType(), tString)
				if err != nil {
					return nil, err
				}
				t = nt
			}
		}
		return t, nil
	case nums == 0:
		return tNull, nil
	}
	var t arrow.DataType = tNull
	for _, a := range args {
		at := a.DataType()
		if at.ID() == arrow.BOOL {
			at = tInt64
		}
		nt, err := CommonType(t, at)
		if err != nil {
			return nil, argCause(fn, args, "", err)
		}
		t = nt
	}
	if isInt(t) {
		t = tInt64
	}
	return t, nil
}

func bindGreatest(fn string, args []Expr) (Expr, error) {
	if err := arity(fn, args, 2, -1); err != nil {
		return nil, err
	}
	t, err := greatestType(fn, args)
	if err != nil {
		return nil, err
	}
	if isNullType(t) {
		return Null(tNull), nil
	}
	conv := make([]Expr, len(args))
	for i, a := range args {
		if conv[i], err = coerce(a, t); err != nil {
			return nil, err
		}
	}
	want := 1 // greatest keeps the larger
	if fn == "least" {
		want = -1
	}
	return newCall(fn, t, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		return greatestArrays(ctx, t, args, n, want)
	}), conv...), nil
}

func greatestArrays(ctx *Context, t arrow.DataType, args []arrow.Array, n, want int) (arrow.Array, error) {
	switch t.ID() {
	case arrow.INT64:
		return greatestFixed[int64](ctx, t, args, n, want, cmp.Compare[int64]), nil
	case arrow.UINT64:
		return greatestFixed[uint64](ctx, t, args, n, want, cmp.Compare[uint64]), nil
	case arrow.FLOAT64:
		return greatestFixed[float64](ctx, t, args, n, want, cmp.Compare[float64]), nil
	case arrow.DATE32:
		return greatestFixed[arrow.Date32](ctx, t, args, n, want, cmp.Compare[arrow.Date32]), nil
	case arrow.TIMESTAMP:
		return greatestFixed[arrow.Timestamp](ctx, t, args, n, want, cmp.Compare[arrow.Timestamp]), nil
	case arrow.DECIMAL128:
		return greatestFixed[num](ctx, t, args, n, want, func(a, b num) int { return a.Cmp(b) }), nil
	}
	// Strings, by bytes or by an explicit collation's keys.
	coll := CollationOf(t)
	ss := make([]*array.String, len(args))
	for k, a := range args {
		ss[k] = Storage(a).(*array.String)
	}
	b := array.NewStringBuilder(ctx.Alloc)
	defer b.Release()
	b.Reserve(n)
	var kb, kc []byte
rows:
	for i := 0; i < n; i++ {
		best := -1
		for k, s := range ss {
			if s.IsNull(i) {
				b.AppendNull()
				continue rows
			}
			if best < 0 {
				best = k
				continue
			}
			var c int
			if coll != nil {
				kb = coll.Key(kb[:0], s.Value(i))
				kc = coll.Key(kc[:0], ss[best].Value(i))
				c = bytes.Compare(kb, kc)
			} else {
				c = strings.Compare(s.Value(i), ss[best].Value(i))
			}
			if c == want {
				best = k
			}
		}
		b.Append(ss[best].Value(i))
	}
	out := b.NewArray()
	if coll != nil {
		return Collated(t, out), nil
	}
	return out, nil
}

func greatestFixed[T arrow.FixedWidthType](ctx *Context, t arrow.DataType, args []arrow.Array, n, want int, c func(a, b T) int) arrow.Array {
	o := newFixed[T](ctx.Alloc, t, n)
	copy(o.vals, vals[T](args[0]))
	for _, a := range args[1:] {
		for i, v := range vals[T](a) {
			if c(v, o.vals[i]) == want {
				o.vals[i] = v
			}
		}
	}
	o.andValidity(args...)
	return o.finish()
}
