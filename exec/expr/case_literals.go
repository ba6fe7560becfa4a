package expr

import (
	"github.com/apache/arrow-go/v18/arrow"
)

// A CASE whose every branch, ELSE included, is a non-NULL integer literal
// of the result type: the bucket counters `sum(CASE WHEN x - y <= 30
// THEN 1 ELSE 0 END)` of q62 and q99, five per row. Once the rows of each
// branch are known, each row's value is its branch's constant, so the
// result is written straight from the branch bitmaps instead of
// broadcasting every literal into a batch-long array and gathering a
// value per row from them.

// caseOfLiterals builds that result, or reports false when some branch
// is not such a literal (or the type is not an integer one). takes holds
// the rows of each branch (disjoint), the last being ELSE.
func caseOfLiterals(ctx *Context, t arrow.DataType, c *Call, takes [][]byte, n int) (arrow.Array, bool) {
	switch t.ID() {
	case arrow.INT64:
		return pickLiterals[int64](ctx, t, c, takes, n)
	case arrow.INT32:
		return pickLiterals[int32](ctx, t, c, takes, n)
	case arrow.INT16:
		return pickLiterals[int16](ctx, t, c, takes, n)
	case arrow.INT8:
		return pickLiterals[int8](ctx, t, c, takes, n)
	}
	return nil, false
}

func pickLiterals[T int8 | int16 | int32 | int64](ctx *Context, t arrow.DataType, c *Call, takes [][]byte, n int) (arrow.Array, bool) {
	vals := make([]T, len(takes))
	for b := range takes {
		l, ok := c.Args[min(2*b+1, len(c.Args)-1)].(*Literal)
		if !ok || l.Value == nil || !arrow.TypeEqual(l.Type, t) {
			return nil, false
		}
		v, ok := l.Value.(T)
		if !ok {
			return nil, false
		}
		vals[b] = v
	}
	o := newFixed[T](ctx.Alloc, t, n)
	out := o.vals
	els := vals[len(vals)-1]
	for i := range out {
		out[i] = els
	}
	for b, take := range takes[:len(takes)-1] {
		v := vals[b]
		for j, w := range take {
			if w == 0 {
				continue // eight rows at a time stay on ELSE or another branch
			}
			for i := j * 8; i < min(j*8+8, n); i++ {
				if w&(1<<(i&7)) != 0 {
					out[i] = v
				}
			}
		}
	}
	return o.finish(), true
}
