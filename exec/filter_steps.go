package exec

import (
	"errors"
	"math/bits"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"

	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/exec/kernels"
)

// conjunctSteps evaluates a filter's conjuncts one after another, each
// over the rows the earlier ones left, instead of every conjunct over the
// whole batch and their AND at the end. q28's `ss_quantity between 0 and
// 5 and (ss_list_price between 11 and 21 or ss_coupon_amt between ... or
// ...)` spent half its CPU evaluating the OR of three ranges over rows
// the quantity range had already dropped (it keeps about one row in
// twenty). Conjuncts run cheapest first (fewest expression nodes), and
// over a narrow batch of the columns they read: the rows still in play
// are gathered, those columns only, once a conjunct has dropped at least
// half of them, and the batch's columns are gathered once, at the end,
// for the rows that passed every conjunct.
//
// Expressions are pure, so a row's value does not depend on the rows it
// is evaluated with, and the rows kept are the rows the whole condition
// is TRUE for. Errors must not change either: SQL's AND evaluates an
// operand for the rows the earlier ones left TRUE or NULL, and these steps
// give a conjunct other rows (a superset before the first gather, only
// the TRUE ones after it, and another order). So every conjunct but the
// first, which meets every row either way, must be one that cannot fail
// (expr.CanFail); a condition with another is evaluated whole, by the
// lazy AND. Should a step fail all the same (a first conjunct's error), the
// batch is filtered again by the whole condition, which reports it.
type conjunctSteps struct {
	conds  []expr.Expr   // over the narrow batch, cheapest first
	cols   []int         // the child's columns the narrow batch holds
	schema *arrow.Schema // the narrow batch's schema
	mask   []byte        // rows of the current narrow batch still in play
	sel    []int32       // scratch selection
	rows   []int32       // rows of the input batch the narrow batch holds
}

// newConjunctSteps plans the steps of cond, or returns nil when cond is
// one conjunct or reads its batch other than through columns (an
// expression of another package may hold arrays of the whole batch).
func newConjunctSteps(cond expr.Expr, in *arrow.Schema) *conjunctSteps {
	conds := expr.SplitAnd(cond)
	if len(conds) < 2 {
		return nil
	}
	used := map[int]bool{}
	plain := true
	for _, c := range conds {
		expr.Walk(c, func(x expr.Expr) bool {
			switch y := x.(type) {
			case *expr.Column:
				used[y.Index] = true
			case *expr.Literal, *expr.Call:
			default:
				plain = false
			}
			return plain
		})
	}
	if !plain {
		return nil
	}
	for _, c := range conds[1:] {
		if expr.CanFail(c) {
			return nil
		}
	}
	st := &conjunctSteps{}
	for c := range used {
		if c < 0 || c >= in.NumFields() {
			return nil
		}
		st.cols = append(st.cols, c)
	}
	sort.Ints(st.cols)
	pos := make(map[int]int, len(st.cols))
	fields := make([]arrow.Field, len(st.cols))
	for i, c := range st.cols {
		pos[c] = i
		fields[i] = in.Field(c)
	}
	st.schema = arrow.NewSchema(fields, nil)
	for _, c := range conds {
		r, err := expr.Rewrite(c, func(x expr.Expr) (expr.Expr, error) {
			if col, ok := x.(*expr.Column); ok {
				return expr.NewColumn(pos[col.Index], col.Type, col.Name), nil
			}
			return x, nil
		})
		if err != nil {
			return nil
		}
		st.conds = append(st.conds, r)
	}
	size := func(e expr.Expr) int {
		n := 0
		expr.Walk(e, func(expr.Expr) bool { n++; return true })
		return n
	}
	order := st.conds
	if expr.CanFail(order[0]) {
		order = order[1:] // it stays first: it meets every row
	}
	sort.SliceStable(order, func(a, b int) bool { return size(order[a]) < size(order[b]) })
	return st
}

// filter returns the rows of b where cond (whose conjuncts st holds) is
// TRUE, b itself (retained) when all are, or nil when none is.
func (st *conjunctSteps) filter(ec *expr.Context, cond expr.Expr, b arrow.RecordBatch) (arrow.RecordBatch, error) {
	n := int(b.NumRows())
	if n == 0 {
		return nil, nil
	}
	narrow := make([]arrow.Array, len(st.cols))
	for i, c := range st.cols {
		narrow[i] = b.Column(c)
	}
	cur := array.NewRecordBatch(st.schema, narrow, int64(n))
	defer func() { cur.Release() }()
	st.rows = st.rows[:0]
	gathered := false // st.rows maps cur's rows to b's
	st.mask = allTrue(st.mask, n)
	live := n
	for k, c := range st.conds {
		m, err := c.Eval(ec, cur)
		if err == nil {
			if _, ok := m.(*array.Boolean); !ok {
				m.Release()
				err = errNotBoolean
			}
		}
		if err != nil {
			// The whole condition decides whether the error stands.
			return filterBatch(ec, cond, b)
		}
		live = andTrue(st.mask, m.(*array.Boolean))
		m.Release()
		if live == 0 {
			return nil, nil
		}
		rows := int(cur.NumRows())
		if live == rows || k == len(st.conds)-1 || 2*live > rows {
			continue
		}
		// Half the rows or more are gone: carry on over the others only.
		st.sel = maskSelection(st.mask, st.sel[:0])
		next, err := kernels.TakeBatch(ec.Alloc, cur, st.sel)
		if err != nil {
			return nil, err
		}
		cur.Release()
		cur = next
		st.rows = composeRows(st.rows, st.sel, gathered)
		gathered = true
		st.mask = allTrue(st.mask, live)
	}
	if !gathered && live == n {
		b.Retain()
		return b, nil
	}
	st.sel = maskSelection(st.mask, st.sel[:0])
	if gathered {
		st.rows = composeRows(st.rows, st.sel, true)
	} else {
		st.rows = append(st.rows[:0], st.sel...)
	}
	return kernels.SelectBatch(ec.Alloc, b, st.rows)
}

// errNotBoolean sends a step whose result is not boolean to filterBatch,
// which names the condition in its error.
var errNotBoolean = errors.New("filter conjunct is not boolean")

// allTrue returns a bitmap of n set bits (the last byte's unused bits
// clear), reusing buf.
func allTrue(buf []byte, n int) []byte {
	nb := int(bitutil.BytesForBits(int64(n)))
	if cap(buf) < nb {
		buf = make([]byte, nb)
	}
	buf = buf[:nb]
	for i := range buf {
		buf[i] = 0xff
	}
	if r := n & 7; r != 0 {
		buf[nb-1] = byte(1)<<r - 1
	}
	return buf
}

// andTrue clears the mask's bits of rows where m is not a valid TRUE and
// returns how many bits are left set.
func andTrue(mask []byte, m *array.Boolean) int {
	n := m.Len()
	d := m.Data()
	off := d.Offset()
	var vals, valid []byte
	if bufs := d.Buffers(); len(bufs) > 1 && bufs[1] != nil {
		vals = bufs[1].Bytes()
	}
	if m.NullN() > 0 {
		if m.NullN() == n {
			clear(mask)
			return 0
		}
		valid = m.NullBitmapBytes()
	}
	if vals == nil {
		clear(mask)
		return 0
	}
	if off%8 != 0 {
		// Rare (a sliced boolean column): align a copy first.
		v := make([]byte, len(mask))
		bitutil.CopyBitmap(vals, off, n, v, 0)
		vals, off = v, 0
		if valid != nil {
			w := make([]byte, len(mask))
			bitutil.CopyBitmap(m.NullBitmapBytes(), d.Offset(), n, w, 0)
			valid = w
		}
	}
	vals = vals[off/8:]
	if valid != nil {
		valid = valid[off/8:]
	}
	live := 0
	for i := range mask {
		x := mask[i] & vals[i]
		if valid != nil {
			x &= valid[i]
		}
		mask[i] = x
		live += bits.OnesCount8(x)
	}
	return live
}

// maskSelection appends the positions of the set bits of mask.
func maskSelection(mask []byte, sel []int32) []int32 {
	for i, x := range mask {
		for x != 0 {
			sel = append(sel, int32(i*8+bits.TrailingZeros8(x)))
			x &= x - 1
		}
	}
	return sel
}

// composeRows maps the selection sel of the current narrow batch to rows
// of the input batch: rows[sel[k]] when rows already maps it (mapped),
// else sel itself.
func composeRows(rows, sel []int32, mapped bool) []int32 {
	if !mapped {
		return append(rows[:0], sel...)
	}
	for k, s := range sel {
		rows[k] = rows[s]
	}
	return rows[:len(sel)]
}
