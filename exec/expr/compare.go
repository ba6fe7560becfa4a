package expr

import (
	"bytes"
	"cmp"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
)

// Comparisons convert both sides to CommonType first. Strings compare as
// bytes (binary collation, MySQL's utf8mb4_0900_bin): 'B' < 'a', and no
// trailing-space padding; a string with an explicit COLLATE compares by
// its collation (collation.go). NULL on either side gives NULL, except for <=>
// (NULL-safe equality), which is never NULL.
var compareBinders = map[string]binder{
	"=": bindCompare, "<>": bindCompare, "!=": bindCompare, "<": bindCompare,
	"<=": bindCompare, ">": bindCompare, ">=": bindCompare, "<=>": bindCompare,
}

func bindCompare(fn string, args []Expr) (Expr, error) {
	if fn == "!=" {
		fn = "<>"
	}
	if err := arity(fn, args, 2, 2); err != nil {
		return nil, err
	}
	// Bound again with one side folded to a literal (constant folding
	// rebuilds the call over its old arguments), the other side drops
	// the implicit cast the old operand types needed, so the types are
	// derived afresh: `ss_list_price <= 11 + 10` cast the DECIMAL(7,2)
	// column to DECIMAL(21,2) for the sum on every row; against the
	// literal 21 it compares in its own type (narrowType). Where the
	// literal does not fit, CommonType inserts the same cast again.
	for i := range 2 {
		if _, lit := args[1-i].(*Literal); lit {
			if x, ok := isImplicitCast(args[i]); ok {
				args = []Expr{args[0], args[1]}
				args[i] = x
			}
		}
	}
	t, err := CommonType(args[0].DataType(), args[1].DataType())
	if err != nil {
		return nil, argCause(fn, args, "", err)
	}
	if nt, ok := narrowType(args[0], args[1:]); ok {
		t = nt
	} else if nt, ok := narrowType(args[1], args[:1]); ok {
		t = nt
	}
	a, err := coerce(args[0], t)
	if err != nil {
		return nil, err
	}
	b, err := coerce(args[1], t)
	if err != nil {
		return nil, err
	}
	test := cmpTests[fn]
	nullSafe := fn == "<=>"
	return newCall(fn, tBool, binaryKernel(func(ctx *Context, x, y operand, n int) (arrow.Array, error) {
		return compareArrays(ctx, x, y, n, test, nullSafe)
	}), a, b), nil
}

// cmpTests turn a three-way comparison result into the operator's truth.
var cmpTests = map[string]func(int) bool{
	"=":   func(c int) bool { return c == 0 },
	"<=>": func(c int) bool { return c == 0 },
	"<>":  func(c int) bool { return c != 0 },
	"<":   func(c int) bool { return c < 0 },
	"<=":  func(c int) bool { return c <= 0 },
	">":   func(c int) bool { return c > 0 },
	">=":  func(c int) bool { return c >= 0 },
}

// compareArrays compares two operands of the same type row by row.
func compareArrays(ctx *Context, x, y operand, n int, test func(int) bool, nullSafe bool) (arrow.Array, error) {
	a, b := x.arr, y.arr
	o := newBool(ctx.Alloc, n)
	// Precompute the truth of <, =, > once so the inner loops stay simple.
	lt, eq, gt := test(-1), test(0), test(1)
	xm, ym := x.m, y.m
	switch a.DataType().ID() {
	case arrow.INT8:
		cmpOrdered(o, vals[int8](a), vals[int8](b), xm, ym, lt, eq, gt)
	case arrow.INT16:
		cmpOrdered(o, vals[int16](a), vals[int16](b), xm, ym, lt, eq, gt)
	case arrow.INT32:
		cmpOrdered(o, vals[int32](a), vals[int32](b), xm, ym, lt, eq, gt)
	case arrow.INT64:
		cmpOrdered(o, vals[int64](a), vals[int64](b), xm, ym, lt, eq, gt)
	case arrow.FLOAT64:
		cmpOrdered(o, vals[float64](a), vals[float64](b), xm, ym, lt, eq, gt)
	case arrow.DATE32:
		cmpOrdered(o, vals[arrow.Date32](a), vals[arrow.Date32](b), xm, ym, lt, eq, gt)
	case arrow.TIMESTAMP:
		cmpOrdered(o, vals[arrow.Timestamp](a), vals[arrow.Timestamp](b), xm, ym, lt, eq, gt)
	case arrow.UINT64:
		cmpOrdered(o, vals[uint64](a), vals[uint64](b), xm, ym, lt, eq, gt)
	case arrow.TIME64:
		cmpOrdered(o, vals[arrow.Time64](a), vals[arrow.Time64](b), xm, ym, lt, eq, gt)
	case arrow.DECIMAL128:
		cmpDecimals(o, vals[num](a), vals[num](b), xm, ym, lt, eq, gt)
	case arrow.STRING:
		cmpStrings(o, a.(*array.String), b.(*array.String), xm, ym, lt, eq, gt)
	case arrow.BOOL:
		xs, ys := a.(*array.Boolean), b.(*array.Boolean)
		for i := 0; i < n; i++ {
			c := cmp.Compare(b2i(xs.Value(i&xm)), b2i(ys.Value(i&ym)))
			o.set(i, (c < 0 && lt) || (c == 0 && eq) || (c > 0 && gt))
		}
	case arrow.EXTENSION:
		// A string with an explicit collation: compare the keys.
		coll := CollationOf(a.DataType())
		xs, ys := Storage(a).(*array.String), Storage(b).(*array.String)
		var kx, ky []byte
		for i := 0; i < n; i++ {
			if x.isNullAt(i) || y.isNullAt(i) {
				continue
			}
			kx = coll.Key(kx[:0], xs.Value(i&xm))
			ky = coll.Key(ky[:0], ys.Value(i&ym))
			c := bytes.Compare(kx, ky)
			o.set(i, (c < 0 && lt) || (c == 0 && eq) || (c > 0 && gt))
		}
	case arrow.NULL:
		// every row is NULL on both sides
	}
	if nullSafe {
		for i := 0; i < n; i++ {
			an, bn := x.isNullAt(i), y.isNullAt(i)
			if an || bn {
				o.set(i, an && bn)
			}
		}
	} else {
		andOps(o.bits, x, y)
	}
	return o.finish(), nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func cmpOrdered[T cmp.Ordered](o *boolOut, x, y []T, xm, ym int, lt, eq, gt bool) {
	out := o.vals
	// A column against a literal (the literal's mask is 0) is a filter's
	// usual test: one loop per operator, free of branches. The general
	// loop's (xv < yv && lt) || ... mispredicted on random values and took
	// a third of q9's CPU samples (ss_quantity between 1 and 20).
	if xm != 0 && ym == 0 {
		cmpLiteral(out, x[:o.n], y[0], lt, eq, gt)
		return
	}
	if xm == 0 && ym != 0 {
		cmpLiteral(out, y[:o.n], x[0], gt, eq, lt) // lit op col is col op' lit
		return
	}
	// Build whole bytes of the result bitmap: 8 rows per store.
	n := o.n
	full := n &^ 7
	for i := 0; i < full; i += 8 {
		var byt byte
		for j := 0; j < 8; j++ {
			xv, yv := x[(i+j)&xm], y[(i+j)&ym]
			if (xv < yv && lt) || (xv == yv && eq) || (xv > yv && gt) {
				byt |= 1 << j
			}
		}
		out[i>>3] = byt
	}
	for i := full; i < n; i++ {
		xv, yv := x[i&xm], y[i&ym]
		if (xv < yv && lt) || (xv == yv && eq) || (xv > yv && gt) {
			bitutil.SetBit(out, i)
		}
	}
}

// b2u is 1 for true: compiled to a flag set, not a branch.
func b2u(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// cmpLiteral sets bit i of out when x[i] op y holds, op being the
// comparison whose outcomes lt, eq and gt make true. Eight rows make one
// byte; the switch is taken once per byte, the same way every time, and
// the loops under it have no branches. NaN compares false with
// everything, <> included, as the general loop has it.
func cmpLiteral[T cmp.Ordered](out []byte, x []T, y T, lt, eq, gt bool) {
	op := b2u(lt) | b2u(eq)<<1 | b2u(gt)<<2
	n := len(x)
	for base := 0; base < n; base += 8 {
		v := x[base:min(base+8, n)]
		var byt byte
		switch op {
		case 1: // <
			for j, e := range v {
				byt |= b2u(e < y) << j
			}
		case 3: // <=
			for j, e := range v {
				byt |= b2u(e <= y) << j
			}
		case 4: // >
			for j, e := range v {
				byt |= b2u(e > y) << j
			}
		case 6: // >=
			for j, e := range v {
				byt |= b2u(e >= y) << j
			}
		case 2: // =
			for j, e := range v {
				byt |= b2u(e == y) << j
			}
		case 5: // <>
			for j, e := range v {
				byt |= b2u(e < y || e > y) << j
			}
		case 7: // always, but for NaN
			for j, e := range v {
				byt |= b2u(e <= y || e > y) << j
			}
		}
		out[base>>3] = byt
	}
}

// cmpDecimals compares Decimal128 values by their high (signed) and low
// (unsigned) words, eight rows to a result byte; the per-row Cmp and bit
// set it replaces took most of q28's filter time (ss_list_price between
// 11 and 21 and its like).
func cmpDecimals(o *boolOut, x, y []num, xm, ym int, lt, eq, gt bool) {
	var truth [3]byte // by three-way result + 1
	truth[0], truth[1], truth[2] = b2u(lt), b2u(eq), b2u(gt)
	three := func(a, b num) int {
		ah, bh := a.HighBits(), b.HighBits()
		al, bl := a.LowBits(), b.LowBits()
		c := int(b2u(ah > bh)) - int(b2u(ah < bh))
		l := int(b2u(al > bl)) - int(b2u(al < bl))
		if c == 0 {
			c = l
		}
		return c + 1
	}
	out := o.vals
	n := o.n
	if xm != 0 && ym == 0 {
		lit := y[0]
		xs := x[:n]
		full := n &^ 7
		for i := 0; i < full; i += 8 {
			v := xs[i : i+8 : i+8]
			var byt byte
			for j := range 8 {
				byt |= truth[three(v[j], lit)] << j
			}
			out[i>>3] = byt
		}
		if full < n {
			var byt byte
			for j, v := range xs[full:] {
				byt |= truth[three(v, lit)] << j
			}
			out[full>>3] = byt
		}
		return
	}
	clear(out)
	for i := 0; i < n; i++ {
		out[i>>3] |= truth[three(x[i&xm], y[i&ym])] << (i & 7)
	}
}

// cmpStrings compares strings through their offsets and bytes, with no
// string made per row. An equality test (= or <>: lt == gt) reads the
// lengths first and compares bytes only when they agree; against a
// literal (a mask of 0) the literal's bytes are read once. Dimension
// filters (cd_gender = 'F') and CASE branches (d_day_name = 'Sunday')
// spent a third of q7's and a quarter of q43's samples in
// strings.Compare through String.Value.
func cmpStrings(o *boolOut, x, y *array.String, xm, ym int, lt, eq, gt bool) {
	xo, yo := x.ValueOffsets(), y.ValueOffsets()
	xd, yd := x.ValueBytes(), y.ValueBytes()
	xb, yb := xo[0], yo[0]
	out := o.vals
	n := o.n
	if lt == gt {
		// Equal rows get eq, the others lt (which is gt).
		if ym == 0 {
			lit := string(yd[yo[0]-yb : yo[1]-yb])
			for i := 0; i < n; i++ {
				xi := i & xm
				if e := string(xd[xo[xi]-xb:xo[xi+1]-xb]) == lit; (e && eq) || (!e && lt) {
					out[i>>3] |= 1 << (i & 7)
				}
			}
			return
		}
		for i := 0; i < n; i++ {
			xi, yi := i&xm, i&ym
			if e := string(xd[xo[xi]-xb:xo[xi+1]-xb]) == string(yd[yo[yi]-yb:yo[yi+1]-yb]); (e && eq) || (!e && lt) {
				out[i>>3] |= 1 << (i & 7)
			}
		}
		return
	}
	for i := 0; i < n; i++ {
		xi, yi := i&xm, i&ym
		c := bytes.Compare(xd[xo[xi]-xb:xo[xi+1]-xb], yd[yo[yi]-yb:yo[yi+1]-yb])
		if (c < 0 && lt) || (c == 0 && eq) || (c > 0 && gt) {
			out[i>>3] |= 1 << (i & 7)
		}
	}
}

// narrowType reports whether every literal in lits converts exactly to
// x's own exact numeric type, so `int_col = 5` or `dec_col < 10` compare
// in the column's type instead of casting the column for every batch.
func narrowType(x Expr, lits []Expr) (arrow.DataType, bool) {
	t := x.DataType()
	if _, isLit := x.(*Literal); isLit || !(isInt(t) || isDecimal(t)) {
		return nil, false
	}
	for _, e := range lits {
		l, ok := e.(*Literal)
		if !ok || !(isInt(l.Type) || isDecimal(l.Type) || isNullType(l.Type)) {
			return nil, false
		}
		if l.Value == nil || arrow.TypeEqual(l.Type, t) {
			continue
		}
		down, err := castLiteral(l, t)
		if err != nil {
			return nil, false
		}
		back, err := castLiteral(down, l.Type)
		if err != nil || back.Value != l.Value {
			return nil, false
		}
	}
	return t, true
}
