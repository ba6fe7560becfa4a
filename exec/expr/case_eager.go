package expr

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Eager CASE. Evaluating every WHEN and THEN over the whole batch gives
// the same result as the lazy order whenever it does not fail (the
// expressions are pure): a row's value of an argument does not depend on
// which other rows it is evaluated with. So a CASE is first evaluated
// eagerly, and only if that fails, and some argument can fail, again
// lazily, where an argument fails only for the rows that reach it. Eagerly
// the branch each row takes is found a machine word at a time: rows still
// undecided AND the WHEN's value AND its validity. The commonest CASE of all, the conditional aggregate
// argument `CASE WHEN d_day_name = 'Sunday' THEN ss_sales_price END`
// (q43, q59, q2, q62, q99 ...), has one branch with values and a NULL
// ELSE: its result is the THEN column itself under a narrower validity
// bitmap, with no value copied. Row-at-a-time selection and gathering were
// half of q43's CPU time.

// caseCannotFail reports whether no argument of the CASE c can fail, so
// that an error of the eager evaluation is the CASE's own.
func caseCannotFail(c *Call) bool {
	for _, a := range c.Args {
		if canFail(a) {
			return false
		}
	}
	return true
}

// evalEager evaluates the CASE c over every row of batch at once.
func (k caseKernel) evalEager(ctx *Context, c *Call, batch arrow.RecordBatch) (arrow.Array, error) {
	n := int(batch.NumRows())
	nb := len(c.Args) / 2 // WHEN/THEN pairs; the last argument is ELSE
	nbytes := int(bitutil.BytesForBits(int64(n)))
	// takes[b] marks the rows branch b takes; undecided rows go to ELSE.
	takes := make([][]byte, nb+1)
	undecided := make([]byte, nbytes)
	for i := range undecided {
		undecided[i] = 0xff
	}
	for b := 0; b < nb; b++ {
		cond, err := c.Args[2*b].Eval(ctx, batch)
		if err == nil {
			err = checkType(c.Args[2*b], cond)
		}
		if err != nil {
			return nil, err
		}
		take := make([]byte, nbytes)
		if bc := cond.(*array.Boolean); bc.NullN() < n {
			off := int64(bc.Data().Offset())
			bitutil.BitmapAnd(undecided, bc.Data().Buffers()[1].Bytes(), 0, off, take, 0, int64(n))
			if bc.NullN() > 0 {
				bitutil.BitmapAnd(take, bc.NullBitmapBytes(), 0, off, take, 0, int64(n))
			}
			bitutil.BitmapAndNot(undecided, take, 0, 0, undecided, 0, int64(n))
		}
		cond.Release()
		takes[b] = take
	}
	takes[nb] = undecided

	// The branches that give a row a value: taken by some row and not a
	// NULL literal.
	var live []int
	for b, take := range takes {
		if !isNullLiteral(c.Args[min(2*b+1, len(c.Args)-1)]) && bitutil.CountSetBits(take, 0, n) > 0 {
			live = append(live, b)
		}
	}
	switch {
	case len(live) == 0 || k.t.ID() == arrow.NULL:
		return array.MakeArrayOfNull(ctx.Alloc, k.t, n), nil
	case len(live) == 1:
		b := live[0]
		a, err := c.Args[min(2*b+1, len(c.Args)-1)].Eval(ctx, batch)
		if err == nil {
			err = checkType(c.Args[min(2*b+1, len(c.Args)-1)], a)
		}
		if err != nil {
			return nil, err
		}
		defer a.Release()
		return maskRows(ctx.Alloc, a, takes[b]), nil
	}
	if a, ok := caseOfLiterals(ctx, k.t, c, takes, n); ok {
		return a, nil
	}
	// Several branches give values: evaluate them over the batch and pick
	// each row's from its branch (a NULL-literal branch is NULL there).
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
	for i := range pos {
		pos[i] = int32(i)
	}
	for b, take := range takes {
		arg := c.Args[min(2*b+1, len(c.Args)-1)]
		if bitutil.CountSetBits(take, 0, n) == 0 {
			continue
		}
		a, err := arg.Eval(ctx, batch)
		if err == nil {
			err = checkType(arg, a)
		}
		if err != nil {
			return nil, err
		}
		outs[b] = branchOut{arr: a, full: true}
		for i := 0; i < n; i++ {
			if bitutil.BitIsSet(take, i) {
				choice[i] = int32(b)
			}
		}
	}
	return gather(ctx, k.t, choice, pos, outs)
}

// isNullLiteral reports whether e is the literal NULL (of any type).
func isNullLiteral(e Expr) bool {
	l, ok := e.(*Literal)
	return ok && l.Value == nil
}

// maskRows returns a with the rows whose bit in mask is clear made NULL:
// a's value buffers shared, only the validity bitmap new.
func maskRows(alloc memory.Allocator, a arrow.Array, mask []byte) arrow.Array {
	d := a.Data()
	n, off := d.Len(), d.Offset()
	buf := memory.NewResizableBuffer(alloc)
	buf.Resize(int(bitutil.BytesForBits(int64(off + n))))
	bits := buf.Bytes()
	if a.NullN() == 0 {
		bitutil.CopyBitmap(mask, 0, n, bits, off)
	} else {
		bitutil.BitmapAnd(a.NullBitmapBytes(), mask, int64(off), 0, bits, int64(off), int64(n))
	}
	nulls := n - bitutil.CountSetBits(bits, off, n)
	bufs := append([]*memory.Buffer{buf}, d.Buffers()[1:]...)
	nd := array.NewData(d.DataType(), n, bufs, d.Children(), nulls, off)
	buf.Release()
	defer nd.Release()
	return array.MakeFromData(nd)
}
