package exec

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/connectors/hive"
	"github.com/fsql-dev/fsql/exec/expr"
)

// This file merges sorted streams (the runs of an external sort) into one
// sorted stream: a binary heap of sources ordered by their current row,
// comparing rows of different batches with mergeKey, which orders values
// exactly as newRowCmp does within one batch.

// mergeSource is one sorted input of a merge.
type mergeSource interface {
	// next returns the source's next batch (owned by the caller) or io.EOF.
	next(ctx context.Context) (arrow.RecordBatch, error)
	close()
}

// mergeKey compares one sort key across the current batches of several
// sources: cmp(a, i, b, j) orders row i of source a against row j of
// source b.
type mergeKey interface {
	set(src int, a arrow.Array) error
	clear(src int)
	cmp(a, i, b, j int) int
}

// newMergeKey returns the comparator of a key of type dt over n sources.
func newMergeKey(dt arrow.DataType, n int, desc, nullsFirst bool) (mergeKey, error) {
	nullOrder := 1
	if nullsFirst {
		nullOrder = -1
	}
	base := mergeBase{bits: make([][]byte, n), offs: make([]int, n), desc: desc, nullOrder: nullOrder}
	switch dt.ID() {
	case arrow.NULL:
		return nullMergeKey{}, nil
	case arrow.EXTENSION:
		if expr.CollationOf(dt) == nil {
			return nil, fmt.Errorf("%w: ORDER BY a value of the type %s: CAST it to a string, number or date", ErrNotImplemented, hive.SQLTypeName(dt))
		}
		return &collMergeKey{mergeBase: base, keys: make([]*array.Binary, n)}, nil
	case arrow.INT8:
		return &ordMergeKey[int8]{mergeBase: base, vals: make([][]int8, n)}, nil
	case arrow.INT16:
		return &ordMergeKey[int16]{mergeBase: base, vals: make([][]int16, n)}, nil
	case arrow.INT32, arrow.DATE32, arrow.TIME32:
		return &ordMergeKey[int32]{mergeBase: base, vals: make([][]int32, n)}, nil
	case arrow.INT64, arrow.DATE64, arrow.TIMESTAMP, arrow.TIME64, arrow.DURATION:
		return &ordMergeKey[int64]{mergeBase: base, vals: make([][]int64, n)}, nil
	case arrow.UINT8:
		return &ordMergeKey[uint8]{mergeBase: base, vals: make([][]uint8, n)}, nil
	case arrow.UINT16:
		return &ordMergeKey[uint16]{mergeBase: base, vals: make([][]uint16, n)}, nil
	case arrow.UINT32:
		return &ordMergeKey[uint32]{mergeBase: base, vals: make([][]uint32, n)}, nil
	case arrow.UINT64:
		return &ordMergeKey[uint64]{mergeBase: base, vals: make([][]uint64, n)}, nil
	case arrow.FLOAT32:
		return &ordMergeKey[float32]{mergeBase: base, vals: make([][]float32, n)}, nil
	case arrow.FLOAT64:
		return &ordMergeKey[float64]{mergeBase: base, vals: make([][]float64, n)}, nil
	case arrow.DECIMAL128:
		return &decMergeKey{mergeBase: base, vals: make([][]decimal128.Num, n)}, nil
	case arrow.BOOL:
		return &boolMergeKey{mergeBase: base, vals: make([]*array.Boolean, n)}, nil
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW, arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW:
		return &strMergeKey{mergeBase: base, vals: make([]func(int) string, n)}, nil
	}
	return nil, fmt.Errorf("%w: ORDER BY a value of the type %s: CAST it to a string, number or date", ErrNotImplemented, hive.SQLTypeName(dt))
}

// mergeBase holds the validity of each source's key column and orders
// NULLs as newRowCmp does: equal to each other, first or last as asked,
// whatever the direction.
type mergeBase struct {
	bits      [][]byte
	offs      []int
	desc      bool
	nullOrder int
}

func (m *mergeBase) setValidity(src int, a arrow.Array) {
	m.bits[src], m.offs[src] = validity(a)
}

// nulls compares by NULLs alone; ok is false when neither is NULL.
func (m *mergeBase) nulls(a, i, b, j int) (int, bool) {
	na, nb := !isValid(m.bits[a], m.offs[a], i), !isValid(m.bits[b], m.offs[b], j)
	if !na && !nb {
		return 0, false
	}
	switch {
	case na && nb:
		return 0, true
	case na:
		return m.nullOrder, true
	}
	return -m.nullOrder, true
}

func (m *mergeBase) dir(c int) int {
	if m.desc {
		return -c
	}
	return c
}

type nullMergeKey struct{}

func (nullMergeKey) set(int, arrow.Array) error { return nil }
func (nullMergeKey) clear(int)                  {}
func (nullMergeKey) cmp(int, int, int, int) int { return 0 }

type ordMergeKey[T fixedOrdered] struct {
	mergeBase
	vals [][]T
}

func (k *ordMergeKey[T]) set(src int, a arrow.Array) error {
	k.setValidity(src, a)
	k.vals[src] = arrow.GetValues[T](a.Data(), 1)
	return nil
}

func (k *ordMergeKey[T]) clear(src int) { k.vals[src], k.bits[src] = nil, nil }

func (k *ordMergeKey[T]) cmp(a, i, b, j int) int {
	if c, ok := k.nulls(a, i, b, j); ok {
		return c
	}
	return k.dir(cmp.Compare(k.vals[a][i], k.vals[b][j]))
}

type decMergeKey struct {
	mergeBase
	vals [][]decimal128.Num
}

func (k *decMergeKey) set(src int, a arrow.Array) error {
	k.setValidity(src, a)
	k.vals[src] = arrow.GetValues[decimal128.Num](a.Data(), 1)
	return nil
}

func (k *decMergeKey) clear(src int) { k.vals[src], k.bits[src] = nil, nil }

func (k *decMergeKey) cmp(a, i, b, j int) int {
	if c, ok := k.nulls(a, i, b, j); ok {
		return c
	}
	return k.dir(k.vals[a][i].Cmp(k.vals[b][j]))
}

type boolMergeKey struct {
	mergeBase
	vals []*array.Boolean
}

func (k *boolMergeKey) set(src int, a arrow.Array) error {
	k.setValidity(src, a)
	k.vals[src] = a.(*array.Boolean)
	return nil
}

func (k *boolMergeKey) clear(src int) { k.vals[src], k.bits[src] = nil, nil }

func (k *boolMergeKey) cmp(a, i, b, j int) int {
	if c, ok := k.nulls(a, i, b, j); ok {
		return c
	}
	x, y := k.vals[a].Value(i), k.vals[b].Value(j)
	switch {
	case x == y:
		return 0
	case !x:
		return k.dir(-1)
	}
	return k.dir(1)
}

type strMergeKey struct {
	mergeBase
	vals []func(int) string
}

func (k *strMergeKey) set(src int, a arrow.Array) error {
	k.setValidity(src, a)
	vb, err := varBytes(a)
	if err != nil {
		return err
	}
	k.vals[src] = vb
	return nil
}

func (k *strMergeKey) clear(src int) { k.vals[src], k.bits[src] = nil, nil }

func (k *strMergeKey) cmp(a, i, b, j int) int {
	if c, ok := k.nulls(a, i, b, j); ok {
		return c
	}
	return k.dir(strings.Compare(k.vals[a](i), k.vals[b](j)))
}

// collMergeKey orders collated strings by their collation keys, as
// newRowCmp does.
type collMergeKey struct {
	mergeBase
	keys []*array.Binary
}

func (k *collMergeKey) set(src int, a arrow.Array) error {
	k.clear(src)
	k.setValidity(src, a)
	k.keys[src] = expr.Keys(memory.DefaultAllocator, a).(*array.Binary)
	return nil
}

func (k *collMergeKey) clear(src int) {
	if k.keys[src] != nil {
		k.keys[src].Release()
		k.keys[src] = nil
	}
	k.bits[src] = nil
}

func (k *collMergeKey) cmp(a, i, b, j int) int {
	if c, ok := k.nulls(a, i, b, j); ok {
		return c
	}
	return k.dir(strings.Compare(k.keys[a].ValueString(i), k.keys[b].ValueString(j)))
}

// merger merges sorted sources into sorted batches of up to BatchSize
// rows. Equal rows come from the lower-numbered source first, so a merge
// of runs numbered in input order is stable.
type merger struct {
	ec     *expr.Context
	schema *arrow.Schema
	exprs  []expr.Expr
	keys   []mergeKey
	srcs   []mergeSource
	cur    []arrow.RecordBatch // current batch of each source, nil when done
	kcols  [][]arrow.Array     // its key columns
	pos    []int
	heap   []int // sources with rows left, by their current row
	// segs are the parts of source batches the output batch being built
	// takes rows from; each output row is (segment, row).
	segs   []mergeSeg
	segOf  []int // open segment of each source, -1 when none
	outSeg []int32
	outRow []int32
	limit  int // rows still to emit; < 0 unlimited
	// onLoad is told the bytes of each batch a source loads, and of each
	// batch released; the sort charges them to its reservation.
	onLoad func(delta int64)
	done   bool
}

type mergeSeg struct {
	b        arrow.RecordBatch
	from, to int
}

// newMerger starts a merge of srcs ordered by keys; limit < 0 keeps every
// row. It takes ownership of the sources.
func newMerger(ctx context.Context, ec *expr.Context, schema *arrow.Schema, keys []SortKey, srcs []mergeSource, limit int, onLoad func(int64)) (*merger, error) {
	m := &merger{ec: ec, schema: schema, srcs: srcs, limit: limit, onLoad: onLoad,
		cur: make([]arrow.RecordBatch, len(srcs)), kcols: make([][]arrow.Array, len(srcs)),
		pos: make([]int, len(srcs)), segOf: make([]int, len(srcs))}
	if m.onLoad == nil {
		m.onLoad = func(int64) {}
	}
	for _, k := range keys {
		mk, err := newMergeKey(k.Expr.DataType(), len(srcs), k.Desc, k.NullsFirst)
		if err != nil {
			m.close()
			return nil, err
		}
		m.keys = append(m.keys, mk)
		m.exprs = append(m.exprs, k.Expr)
	}
	for s := range srcs {
		m.segOf[s] = -1
		ok, err := m.load(ctx, s)
		if err != nil {
			m.close()
			return nil, err
		}
		if ok {
			m.heap = append(m.heap, s)
		}
	}
	for i := len(m.heap)/2 - 1; i >= 0; i-- {
		m.down(i)
	}
	return m, nil
}

// load reads source s's next non-empty batch; false at its end.
func (m *merger) load(ctx context.Context, s int) (bool, error) {
	m.dropCurrent(s)
	for {
		b, err := m.srcs[s].next(ctx)
		if err == io.EOF {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if b.NumRows() == 0 {
			b.Release()
			continue
		}
		kc, err := evalExprs(m.ec, m.exprs, b)
		if err != nil {
			b.Release()
			return false, err
		}
		for k, mk := range m.keys {
			if err := mk.set(s, kc[k]); err != nil {
				releaseArrays(kc)
				b.Release()
				return false, err
			}
		}
		m.cur[s], m.kcols[s], m.pos[s] = b, kc, 0
		m.onLoad(BatchBytes(b))
		return true, nil
	}
}

// dropCurrent lets go of source s's current batch (segments keep their
// own reference while the output batch is built).
func (m *merger) dropCurrent(s int) {
	if m.cur[s] == nil {
		return
	}
	for _, mk := range m.keys {
		mk.clear(s)
	}
	releaseArrays(m.kcols[s])
	m.onLoad(-BatchBytes(m.cur[s]))
	m.cur[s].Release()
	m.cur[s], m.kcols[s] = nil, nil
	m.segOf[s] = -1
}

func (m *merger) less(a, b int) bool {
	ia, ib := m.pos[a], m.pos[b]
	for _, k := range m.keys {
		if c := k.cmp(a, ia, b, ib); c != 0 {
			return c < 0
		}
	}
	return a < b
}

func (m *merger) down(i int) {
	h := m.heap
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		c := l
		if r := l + 1; r < len(h) && m.less(h[r], h[l]) {
			c = r
		}
		if !m.less(h[c], h[i]) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// next returns the next merged batch or io.EOF.
func (m *merger) next(ctx context.Context) (arrow.RecordBatch, error) {
	if m.done {
		return nil, io.EOF
	}
	m.outSeg, m.outRow = m.outSeg[:0], m.outRow[:0]
	for len(m.heap) > 0 && len(m.outRow) < BatchSize && m.limit != 0 {
		s := m.heap[0]
		seg := m.segOf[s]
		if seg < 0 {
			m.cur[s].Retain()
			m.segs = append(m.segs, mergeSeg{b: m.cur[s], from: m.pos[s], to: m.pos[s]})
			seg = len(m.segs) - 1
			m.segOf[s] = seg
		}
		m.outSeg = append(m.outSeg, int32(seg))
		m.outRow = append(m.outRow, int32(m.pos[s]))
		m.segs[seg].to = m.pos[s] + 1
		m.pos[s]++
		if m.limit > 0 {
			m.limit--
		}
		if m.pos[s] >= int(m.cur[s].NumRows()) {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			ok, err := m.load(ctx, s)
			if err != nil {
				return nil, err
			}
			if !ok {
				m.heap[0] = m.heap[len(m.heap)-1]
				m.heap = m.heap[:len(m.heap)-1]
			}
		}
		if len(m.heap) > 0 {
			m.down(0)
		}
	}
	if len(m.outRow) == 0 {
		m.done = true
		return nil, io.EOF
	}
	out, err := m.gather()
	for i := range m.segs {
		m.segs[i].b.Release()
	}
	m.segs = m.segs[:0]
	for s := range m.segOf {
		m.segOf[s] = -1
	}
	return out, err
}

// gather builds the output batch from the segments: one segment is
// sliced (its rows come out in order), several are concatenated and
// gathered.
func (m *merger) gather() (arrow.RecordBatch, error) {
	n := len(m.outRow)
	if len(m.segs) == 1 {
		sg := m.segs[0]
		return m.retyped(sg.b.NewSlice(int64(sg.from), int64(sg.to))), nil
	}
	parts := make([]arrow.RecordBatch, len(m.segs))
	start := make([]int32, len(m.segs))
	total := int32(0)
	for i, sg := range m.segs {
		parts[i] = sg.b.NewSlice(int64(sg.from), int64(sg.to))
		start[i] = total
		total += int32(sg.to - sg.from)
	}
	cols, err := concatColumns(m.ec.Alloc, m.schema, parts)
	releaseBatches(parts)
	if err != nil {
		return nil, err
	}
	idx := make([]int32, n)
	for o := range idx {
		sg := m.outSeg[o]
		idx[o] = start[sg] + m.outRow[o] - int32(m.segs[sg].from)
	}
	out, err := takeArrays(m.ec.Alloc, cols, idx)
	releaseArrays(cols)
	if err != nil {
		return nil, err
	}
	return newBatch(m.schema, out, n), nil
}

// retyped gives a batch the merge's schema (sources may carry their own
// equal schema object).
func (m *merger) retyped(b arrow.RecordBatch) arrow.RecordBatch {
	if b.Schema() == m.schema {
		return b
	}
	out := array.NewRecordBatch(m.schema, b.Columns(), b.NumRows())
	b.Release()
	return out
}

func (m *merger) close() {
	for s := range m.srcs {
		if m.cur != nil {
			m.dropCurrent(s)
		}
		m.srcs[s].close()
	}
	for i := range m.segs {
		m.segs[i].b.Release()
	}
	m.segs = nil
	m.done = true
}
