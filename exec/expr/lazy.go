package expr

import (
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec/kernels"
)

// Lazy evaluation. CASE (and IF, NULLIF), COALESCE (and IFNULL), AND and
// OR evaluate an argument only for the rows that reach it, as MySQL does:
// a CASE branch only for the rows whose WHEN chose it, a later WHEN only
// for rows no earlier WHEN took, a COALESCE argument only where every
// earlier one was NULL, an AND operand only where the earlier ones were
// not FALSE (OR: not TRUE). Results do not depend on it (expressions are
// pure); errors do: `CASE WHEN x = 0 THEN 0 ELSE 1 / cast(s AS SIGNED)
// END` must not fail for a row whose x is 0.
//
// An argument that cannot fail (canFail) is evaluated over the whole
// batch, which is cheaper than selecting rows; only arguments that may
// fail run over a batch holding just the rows that reach them.

// CanFail reports whether evaluating e may return an error for some row
// (conservatively: an unknown function may fail). An operator that
// evaluates e over other rows than the ones SQL's order of evaluation
// gives it (exec's filter steps) may do so only when it cannot.
func CanFail(e Expr) bool { return canFail(e) }

// canFail reports whether evaluating e may return an error for some row.
// It is conservative: an unknown function may fail.
func canFail(e Expr) bool {
	c, ok := e.(*Call)
	if !ok {
		return false // columns and literals
	}
	for _, a := range c.Args {
		if canFail(a) {
			return true
		}
	}
	switch c.Fn {
	case "=", "<>", "<", "<=", ">", ">=", "<=>", "and", "or", "not", "isnull", "isnotnull",
		"in", "like", "case", "coalesce", "upper", "lower", "trim", "ltrim", "rtrim",
		"length", "char_length", "concat", "substr", "getbit", "weight_key":
		return false
	case "+", "-", "*", "/":
		return c.Type.ID() != arrow.FLOAT64 // float arithmetic never fails; exact may overflow
	case "%":
		return c.Type.ID() == arrow.DECIMAL128
	case "cast":
		return !safeCast(c.Args[0].DataType(), c.Type)
	}
	return true
}

// safeCast reports whether every value of type from converts to type to
// without an error.
func safeCast(from, to arrow.DataType) bool {
	switch {
	case from.ID() == arrow.NULL, to.ID() == arrow.NULL:
		return true
	case CollationOf(to) != nil:
		return false // the collation checks every value
	case isText(from):
		return isString(to)
	case to.ID() == arrow.STRING:
		return true // every value has a spelling
	case to.ID() == arrow.FLOAT64, to.ID() == arrow.BOOL:
		return isNumeric(from) || from.ID() == arrow.BOOL
	case (isInt(from) || from.ID() == arrow.BOOL) && isInt(to):
		return intBits(from) <= intBits(to)
	case isDecimal(to):
		fd, ok := asDecimal(from)
		td := to.(*arrow.Decimal128Type)
		return ok && fd.Precision-fd.Scale <= td.Precision-td.Scale && fd.Scale <= td.Scale
	}
	return false
}

// evalOn evaluates e for the rows sel (ascending) of batch, which has n
// rows. When every row is selected or e cannot fail it evaluates the whole
// batch and reports full (row i of the result is row i of batch);
// otherwise row k of the result is row sel[k]. The result belongs to the
// caller.
func evalOn(ctx *Context, e Expr, batch arrow.RecordBatch, sel []int32) (arrow.Array, bool, error) {
	n := int(batch.NumRows())
	if len(sel) == n || !canFail(e) || !selectable(e) {
		a, err := e.Eval(ctx, batch)
		if err == nil {
			err = checkType(e, a)
		}
		if err != nil {
			return nil, false, err
		}
		return a, true, nil
	}
	sub, err := selectRows(ctx, batch, sel, Columns(e))
	if err != nil {
		return nil, false, err
	}
	defer sub.Release()
	a, err := e.Eval(ctx, sub)
	if err == nil {
		err = checkType(e, a)
	}
	if err != nil {
		return nil, false, err
	}
	return a, false, nil
}

// selectable reports whether e reads its batch only through Columns, so it
// can run over a batch of selected rows (an expression of another package
// may hold arrays of the whole batch).
func selectable(e Expr) bool {
	ok := true
	Walk(e, func(x Expr) bool {
		switch x.(type) {
		case *Column, *Literal, *Call:
		default:
			ok = false
		}
		return ok
	})
	return ok
}

// selectRows returns a batch of the rows sel of batch. Only the columns
// cols are gathered; the others (never read by the expression at hand)
// become NULL-typed placeholders without buffers.
func selectRows(ctx *Context, batch arrow.RecordBatch, sel []int32, cols []int) (arrow.RecordBatch, error) {
	m := len(sel)
	fields := make([]arrow.Field, batch.NumCols())
	arrs := make([]arrow.Array, batch.NumCols())
	defer releaseAll(arrs)
	need := make([]bool, batch.NumCols())
	for _, c := range cols {
		if c >= 0 && c < len(need) {
			need[c] = true
		}
	}
	for c := range arrs {
		src := batch.Column(c)
		if !need[c] {
			fields[c] = arrow.Field{Name: batch.ColumnName(c), Type: arrow.Null, Nullable: true}
			arrs[c] = array.NewNull(m)
			continue
		}
		t, err := kernels.Take(ctx.Alloc, src, sel)
		if err != nil {
			return nil, errs.Wrap(errs.Internal, "selecting rows of column %s: %w", batch.ColumnName(c), err)
		}
		fields[c] = batch.Schema().Field(c)
		arrs[c] = t
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), arrs, int64(m)), nil
}

// allRows is the selection of every row of an n-row batch.
func allRows(n int) []int32 {
	sel := make([]int32, n)
	for i := range sel {
		sel[i] = int32(i)
	}
	return sel
}

// branchOut is one evaluated branch of a CASE or COALESCE: full when row i
// of arr is row i of the batch, else row k of arr is the k-th row the
// branch took.
type branchOut struct {
	arr  arrow.Array
	full bool
}

// caseKernel evaluates CASE lazily: WHEN k only for the rows no earlier
// WHEN took, THEN k only for the rows WHEN k took, ELSE for the rest.
type caseKernel struct{ t arrow.DataType }

func (k caseKernel) eval(ctx *Context, c *Call, batch arrow.RecordBatch) (arrow.Array, error) {
	out, err := k.evalEager(ctx, c, batch)
	if err == nil || caseCannotFail(c) {
		return out, err
	}
	// Some row failed in an argument evaluated over every row: only the
	// rows that reach an argument may fail it.
	return k.evalLazy(ctx, c, batch)
}

func (k caseKernel) evalLazy(ctx *Context, c *Call, batch arrow.RecordBatch) (arrow.Array, error) {
	n := int(batch.NumRows())
	nb := len(c.Args) / 2 // WHEN/THEN pairs; the last argument is ELSE
	outs := make([]branchOut, nb+1)
	defer func() {
		for _, o := range outs {
			if o.arr != nil {
				o.arr.Release()
			}
		}
	}()
	choice := make([]int32, n)
	pos := make([]int32, n)
	rem := allRows(n)
	assign := func(b int, rows []int32) error {
		if len(rows) == 0 {
			return nil
		}
		a, full, err := evalOn(ctx, c.Args[min(2*b+1, len(c.Args)-1)], batch, rows)
		if err != nil {
			return err
		}
		outs[b] = branchOut{arr: a, full: full}
		for j, r := range rows {
			choice[r] = int32(b)
			if full {
				pos[r] = r
			} else {
				pos[r] = int32(j)
			}
		}
		return nil
	}
	for b := 0; b < nb && len(rem) > 0; b++ {
		cond, full, err := evalOn(ctx, c.Args[2*b], batch, rem)
		if err != nil {
			return nil, err
		}
		bc := cond.(*array.Boolean)
		var take, next []int32
		for j, r := range rem {
			at := j
			if full {
				at = int(r)
			}
			if validAt(bc, at) && bc.Value(at) {
				take = append(take, r)
			} else {
				next = append(next, r)
			}
		}
		cond.Release()
		if err := assign(b, take); err != nil {
			return nil, err
		}
		rem = next
	}
	if err := assign(nb, rem); err != nil {
		return nil, err
	}
	return gather(ctx, k.t, choice, pos, outs)
}

// coalesceKernel evaluates argument k only for the rows where every
// earlier argument was NULL.
type coalesceKernel struct{ t arrow.DataType }

func (k coalesceKernel) eval(ctx *Context, c *Call, batch arrow.RecordBatch) (arrow.Array, error) {
	n := int(batch.NumRows())
	outs := make([]branchOut, len(c.Args))
	defer func() {
		for _, o := range outs {
			if o.arr != nil {
				o.arr.Release()
			}
		}
	}()
	choice := make([]int32, n)
	pos := make([]int32, n)
	rem := allRows(n)
	for b, arg := range c.Args {
		if len(rem) == 0 {
			break
		}
		a, full, err := evalOn(ctx, arg, batch, rem)
		if err != nil {
			return nil, err
		}
		outs[b] = branchOut{arr: a, full: full}
		last := b == len(c.Args)-1
		var next []int32
		for j, r := range rem {
			at := int32(j)
			if full {
				at = r
			}
			if last || validAt(a, int(at)) {
				choice[r], pos[r] = int32(b), at
			} else {
				next = append(next, r)
			}
		}
		rem = next
	}
	return gather(ctx, k.t, choice, pos, outs)
}

// andOrKernel evaluates AND (OR) operand k only for the rows the earlier
// operands left undecided, that is not FALSE (not TRUE). Operands that
// cannot fail are evaluated over the whole batch and combined a byte at a
// time.
type andOrKernel struct{ isAnd bool }

func (k andOrKernel) eval(ctx *Context, c *Call, batch arrow.RecordBatch) (arrow.Array, error) {
	n := int(batch.NumRows())
	lazy := false
	for _, a := range c.Args[1:] {
		lazy = lazy || canFail(a)
	}
	// Operands are first evaluated over the whole batch, even ones that
	// may fail (as CASE is, case_eager.go): pure expressions give a row the
	// same value whichever rows they run over, and the lazy pass's
	// selections, gathers and scatters cost more than the rows they skip
	// (q99's (x - y > 30) AND (x - y <= 60), an integer subtraction that
	// may overflow: a quarter of its CPU samples). Only when that fails
	// are the operands evaluated lazily, so an error is still raised only
	// by a row that reaches the failing operand.
	if !lazy {
		if out, ok, err := k.narrowed(ctx, c, batch); ok || err != nil {
			return out, err
		}
	}
	if args, err := evalArgs(ctx, c.Args, batch); err == nil || !lazy {
		if err != nil {
			return nil, err
		}
		defer releaseAll(args)
		return andOr(ctx, args, n, k.isAnd), nil
	}
	acc, err := c.Args[0].Eval(ctx, batch)
	if err == nil {
		err = checkType(c.Args[0], acc)
	}
	if err != nil {
		return nil, err
	}
	for _, arg := range c.Args[1:] {
		// Undecided rows: not a valid FALSE (AND) / TRUE (OR) yet.
		ab := acc.(*array.Boolean)
		var sel []int32
		for i := 0; i < n; i++ {
			if !validAt(ab, i) || ab.Value(i) == k.isAnd {
				sel = append(sel, int32(i))
			}
		}
		if len(sel) == 0 {
			break
		}
		a, full, err := evalOn(ctx, arg, batch, sel)
		if err != nil {
			acc.Release()
			return nil, err
		}
		if !full {
			// Spread over the batch; decided rows get the dominant value,
			// which leaves them as they are.
			spread := scatterBool(ctx, a.(*array.Boolean), sel, n, !k.isAnd)
			a.Release()
			a = spread
		}
		next := andOr(ctx, []arrow.Array{acc, a}, n, k.isAnd)
		a.Release()
		acc.Release()
		acc = next
	}
	return acc, nil
}

// narrowed evaluates an AND (OR) none of whose operands can fail whose
// later operands cost more than one comparison: the first operand over
// the whole batch, the others only over the rows it left undecided (not
// FALSE; for OR not TRUE), when those are at most half of the batch. A
// range test first and an OR of ranges after it (q28's `ss_quantity
// between 0 and 5 and (ss_list_price between 11 and 21 or ...)`, which
// the quantity range leaves one row in twenty of) then evaluates the OR
// over a twentieth of the rows. ok is false when it does not apply (the
// caller evaluates every operand whole).
func (k andOrKernel) narrowed(ctx *Context, c *Call, batch arrow.RecordBatch) (arrow.Array, bool, error) {
	n := int(batch.NumRows())
	rest := c.Args[1:]
	size := 0
	for _, a := range rest {
		if !selectable(a) {
			return nil, false, nil
		}
		Walk(a, func(Expr) bool { size++; return true })
	}
	if n < 64 || size <= 3 {
		return nil, false, nil
	}
	first, err := c.Args[0].Eval(ctx, batch)
	if err == nil {
		err = checkType(c.Args[0], first)
	}
	if err != nil {
		return nil, true, err
	}
	defer first.Release()
	sel := undecided(first.(*array.Boolean), k.isAnd)
	if len(sel) == 0 {
		first.Retain()
		return first, true, nil
	}
	var out arrow.Array
	if 2*len(sel) > n {
		args, err := evalArgs(ctx, rest, batch)
		if err != nil {
			return nil, true, err
		}
		out = andOr(ctx, append([]arrow.Array{first}, args...), n, k.isAnd)
		releaseAll(args)
		return out, true, nil
	}
	var cols []int
	for _, a := range rest {
		cols = append(cols, Columns(a)...)
	}
	sub, err := selectRows(ctx, batch, sel, cols)
	if err != nil {
		return nil, true, err
	}
	args, err := evalArgs(ctx, rest, sub)
	sub.Release()
	if err != nil {
		return nil, true, err
	}
	part := args[0]
	if len(args) > 1 {
		part = andOr(ctx, args, len(sel), k.isAnd)
		releaseAll(args)
	}
	// Decided rows get the dominant value, which leaves them as they are.
	spread := scatterBool(ctx, part.(*array.Boolean), sel, n, !k.isAnd)
	part.Release()
	out = andOr(ctx, []arrow.Array{first, spread}, n, k.isAnd)
	spread.Release()
	return out, true, nil
}

// undecided lists the rows of a that do not decide an AND (a NULL or a
// TRUE) or, for OR, an OR (a NULL or a FALSE), a byte of rows at a time.
func undecided(a *array.Boolean, isAnd bool) []int32 {
	n := a.Len()
	d := a.Data()
	off := d.Offset()
	var vals, valid []byte
	if bufs := d.Buffers(); len(bufs) > 1 && bufs[1] != nil {
		vals = bufs[1].Bytes()
	}
	if a.NullN() > 0 {
		valid = a.NullBitmapBytes()
	}
	var sel []int32
	if off%8 != 0 || vals == nil || (a.NullN() > 0 && valid == nil) {
		for i := 0; i < n; i++ {
			if !validAt(a, i) || a.Value(i) == isAnd {
				sel = append(sel, int32(i))
			}
		}
		return sel
	}
	vals = vals[off/8:]
	if valid != nil {
		valid = valid[off/8:]
	}
	for b := 0; b*8 < n; b++ {
		x := vals[b]
		if !isAnd {
			x = ^x
		}
		if valid != nil {
			x |= ^valid[b]
		}
		if r := n - b*8; r < 8 {
			x &= byte(1)<<r - 1
		}
		for x != 0 {
			sel = append(sel, int32(b*8+bits.TrailingZeros8(x)))
			x &= x - 1
		}
	}
	return sel
}

// scatterBool spreads the values of a (row k is row sel[k]) over n rows;
// the other rows hold fill.
func scatterBool(ctx *Context, a *array.Boolean, sel []int32, n int, fill bool) arrow.Array {
	o := newBool(ctx.Alloc, n)
	if fill {
		for i := range o.vals {
			o.vals[i] = 0xff
		}
	}
	for k, r := range sel {
		if !validAt(a, k) {
			o.setNull(int(r))
			continue
		}
		o.set(int(r), a.Value(k))
	}
	return o.finish()
}
