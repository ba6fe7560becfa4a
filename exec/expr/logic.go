package expr

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
)

// SQL three-valued logic: FALSE AND NULL is FALSE, TRUE OR NULL is TRUE,
// NOT NULL is NULL. Numbers used as conditions are true when non-zero, as
// in MySQL.
var logicBinders = map[string]binder{
	"and": bindAndOr, "or": bindAndOr, "not": bindNot,
	"isnull": bindIsNull, "isnotnull": bindIsNull,
}

// boolArg converts a condition to BOOLEAN.
func boolArg(fn string, args []Expr, e Expr) (Expr, error) {
	t := e.DataType()
	switch {
	case t.ID() == arrow.BOOL:
		return e, nil
	case isNullType(t), isNumeric(t), isText(t):
		return coerce(e, tBool)
	}
	return nil, argErr(fn, args, "a condition must be BOOLEAN or numeric")
}

func bindAndOr(fn string, args []Expr) (Expr, error) {
	if err := arity(fn, args, 2, -1); err != nil {
		return nil, err
	}
	conv := make([]Expr, len(args))
	for i, a := range args {
		c, err := boolArg(fn, args, a)
		if err != nil {
			return nil, err
		}
		conv[i] = c
	}
	return newCall(fn, tBool, andOrKernel{isAnd: fn == "and"}, conv...), nil
}

// andOr combines Boolean arrays a byte (8 rows) at a time. For AND a row
// is FALSE if any input is a valid FALSE, else NULL if any input is NULL,
// else TRUE; OR is the dual.
func andOr(ctx *Context, args []arrow.Array, n int, isAnd bool) arrow.Array {
	o := newBool(ctx.Alloc, n)
	nb := len(o.vals)
	// decided: rows whose answer is fixed by a valid dominant value
	// (FALSE for AND, TRUE for OR); unknown: rows with a NULL input.
	decided := make([]byte, nb)
	unknown := make([]byte, nb)
	tmpV := make([]byte, nb)
	tmpN := make([]byte, nb)
	for _, a := range args {
		d := a.Data()
		var valBuf []byte
		if bufs := d.Buffers(); len(bufs) > 1 && bufs[1] != nil {
			valBuf = bufs[1].Bytes()
		}
		off := int64(d.Offset())
		if valBuf != nil {
			bitutil.CopyBitmap(valBuf, int(off), n, tmpV, 0)
		} else {
			clear(tmpV)
		}
		if a.NullN() > 0 {
			if a.NullN() == n || a.NullBitmapBytes() == nil {
				clear(tmpN)
			} else {
				bitutil.CopyBitmap(a.NullBitmapBytes(), int(off), n, tmpN, 0)
			}
		} else {
			for i := range tmpN {
				tmpN[i] = 0xff
			}
		}
		for i := 0; i < nb; i++ {
			v := tmpV[i]
			if isAnd {
				v = ^v
			}
			decided[i] |= v & tmpN[i]
			unknown[i] |= ^tmpN[i]
		}
	}
	for i := 0; i < nb; i++ {
		if isAnd {
			o.vals[i] = ^decided[i]
		} else {
			o.vals[i] = decided[i]
		}
		o.bits[i] = decided[i] | ^unknown[i]
	}
	return o.finish()
}

func bindNot(fn string, args []Expr) (Expr, error) {
	if err := arity(fn, args, 1, 1); err != nil {
		return nil, err
	}
	a, err := boolArg(fn, args, args[0])
	if err != nil {
		return nil, err
	}
	return newCall(fn, tBool, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		a := args[0]
		o := newBool(ctx.Alloc, n)
		d := a.Data()
		if bufs := d.Buffers(); len(bufs) > 1 && bufs[1] != nil {
			bitutil.CopyBitmap(bufs[1].Bytes(), d.Offset(), n, o.vals, 0)
		}
		for i := range o.vals {
			o.vals[i] = ^o.vals[i]
		}
		o.andValidity(a)
		return o.finish(), nil
	}), a), nil
}

func bindIsNull(fn string, args []Expr) (Expr, error) {
	if err := arity(fn, args, 1, 1); err != nil {
		return nil, err
	}
	want := fn == "isnull"
	return newCall(fn, tBool, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		// The validity bitmap, copied (and inverted for IS NULL) a word at
		// a time: a test per row through the array's interface was most of
		// q97's CASE WHEN x IS NOT NULL AND y IS NULL (7% of its samples).
		o := newBool(ctx.Alloc, n)
		bits, off := Validity(args[0])
		if bits != nil {
			bitutil.CopyBitmap(bits, off, n, o.vals, 0)
		} else {
			for i := range o.vals {
				o.vals[i] = 0xff
			}
		}
		if want {
			for i := range o.vals {
				o.vals[i] = ^o.vals[i]
			}
		}
		return o.finish(), nil
	}), args[0]), nil
}
