package exec

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/connectors/hive"
	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/exec/kernels"
	"github.com/fsql-dev/fsql/internal/mempool"
)

// This file holds what several operators share: evaluating expression lists,
// the compact byte encoding of composite keys (hash join, hash aggregate,
// distinct sets), per-type row comparators (sort, top-N, window) and
// gathering rows by index.

// evalExprs evaluates every expression over b. On error nothing is leaked.
func evalExprs(ec *expr.Context, exprs []expr.Expr, b arrow.RecordBatch) ([]arrow.Array, error) {
	out := make([]arrow.Array, 0, len(exprs))
	for _, e := range exprs {
		a, err := e.Eval(ec, b)
		if err != nil {
			releaseArrays(out)
			return nil, err
		}
		if a.Len() != int(b.NumRows()) {
			a.Release()
			releaseArrays(out)
			return nil, fmt.Errorf("%w: expression %s returned %d rows for a batch of %d", ErrInternal, e, a.Len(), b.NumRows())
		}
		out = append(out, a)
	}
	return out, nil
}

func releaseArrays(as []arrow.Array) {
	for _, a := range as {
		if a != nil {
			a.Release()
		}
	}
}

func releaseBatches(bs []arrow.RecordBatch) {
	for _, b := range bs {
		if b != nil {
			b.Release()
		}
	}
}

// exprContext builds the evaluation context of a task.
func exprContext(tc *TaskContext) *expr.Context { return &expr.Context{Alloc: allocOf(tc)} }

func allocOf(tc *TaskContext) memory.Allocator {
	if tc == nil || tc.Alloc == nil {
		return memory.DefaultAllocator
	}
	return tc.Alloc
}

// fieldsOf turns expressions and names into schema fields; every field is
// nullable because expressions may produce NULL.
func fieldsOf(exprs []expr.Expr, names []string) []arrow.Field {
	fs := make([]arrow.Field, len(exprs))
	for i, e := range exprs {
		name := fmt.Sprintf("col%d", i)
		if i < len(names) && names[i] != "" {
			name = names[i]
		}
		fs[i] = arrow.Field{Name: name, Type: e.DataType(), Nullable: true}
	}
	return fs
}

func exprList(es []expr.Expr) string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = e.String()
	}
	return strings.Join(s, ", ")
}

// ---- key encoding ----

// keyEncoder turns the key columns of a batch into one byte string per row
// such that two rows have equal strings exactly when their keys are equal
// with NULL equal to NULL. Each column contributes a validity byte, then for
// a valid value its fixed-width bytes or a 4-byte length and the bytes. The
// buffers are reused from batch to batch.
type keyEncoder struct {
	buf     []byte
	offs    []int32
	hasNull []bool // row has a NULL in some key column
}

func (e *keyEncoder) key(i int) []byte { return e.buf[e.offs[i]:e.offs[i+1]] }

func fixedWidth(dt arrow.DataType) int {
	if dt.ID() == arrow.BOOL {
		return 0
	}
	if fw, ok := dt.(arrow.FixedWidthDataType); ok && fw.BitWidth()%8 == 0 {
		return fw.BitWidth() / 8
	}
	return -1
}

func (e *keyEncoder) encode(cols []arrow.Array, n int) error {
	cols, release := collationKeys(cols)
	defer release()
	e.offs = slices.Grow(e.offs[:0], n+1)[:n+1]
	clear(e.offs)
	e.hasNull = slices.Grow(e.hasNull[:0], n)[:n]
	clear(e.hasNull)
	// Pass 1: the length of every row's key.
	for _, c := range cols {
		w := fixedWidth(c.DataType())
		nulls := c.NullN() > 0
		switch {
		case c.DataType().ID() == arrow.NULL:
			// Every row is NULL: one validity byte, no value.
			for i := 0; i < n; i++ {
				e.offs[i+1]++
				e.hasNull[i] = true
			}
		case w >= 0 || c.DataType().ID() == arrow.BOOL:
			if w == 0 {
				w = 1
			}
			for i := 0; i < n; i++ {
				if nulls && expr.IsNull(c, i) {
					e.offs[i+1]++
					e.hasNull[i] = true
				} else {
					e.offs[i+1] += int32(1 + w)
				}
			}
		default:
			vl, err := varLen(c)
			if err != nil {
				return err
			}
			for i := 0; i < n; i++ {
				if nulls && expr.IsNull(c, i) {
					e.offs[i+1]++
					e.hasNull[i] = true
				} else {
					e.offs[i+1] += int32(5 + vl(i))
				}
			}
		}
	}
	for i := 0; i < n; i++ {
		e.offs[i+1] += e.offs[i]
	}
	total := int(e.offs[n])
	e.buf = slices.Grow(e.buf[:0], total)[:total]
	pos := make([]int32, n)
	copy(pos, e.offs[:n])
	// Pass 2: write the bytes column by column.
	for _, c := range cols {
		nulls := c.NullN() > 0
		if c.DataType().ID() == arrow.NULL {
			for i := 0; i < n; i++ {
				e.buf[pos[i]] = 0
				pos[i]++
			}
			continue
		}
		if c.DataType().ID() == arrow.BOOL {
			b := c.(*array.Boolean)
			for i := 0; i < n; i++ {
				p := pos[i]
				if nulls && expr.IsNull(c, i) {
					e.buf[p] = 0
					pos[i]++
					continue
				}
				e.buf[p] = 1
				e.buf[p+1] = 0
				if b.Value(i) {
					e.buf[p+1] = 1
				}
				pos[i] += 2
			}
			continue
		}
		if w := fixedWidth(c.DataType()); w > 0 {
			d := c.Data()
			raw := d.Buffers()[1].Bytes()[d.Offset()*w:]
			for i := 0; i < n; i++ {
				p := pos[i]
				if nulls && expr.IsNull(c, i) {
					e.buf[p] = 0
					pos[i]++
					continue
				}
				e.buf[p] = 1
				copy(e.buf[p+1:p+1+int32(w)], raw[i*w:(i+1)*w])
				pos[i] += int32(1 + w)
			}
			normalizeFloatKeys(e.buf, pos, c, w)
			continue
		}
		vb, err := varBytes(c)
		if err != nil {
			return err
		}
		for i := 0; i < n; i++ {
			p := pos[i]
			if nulls && expr.IsNull(c, i) {
				e.buf[p] = 0
				pos[i]++
				continue
			}
			v := vb(i)
			e.buf[p] = 1
			l := uint32(len(v))
			e.buf[p+1], e.buf[p+2], e.buf[p+3], e.buf[p+4] = byte(l), byte(l>>8), byte(l>>16), byte(l>>24)
			copy(e.buf[p+5:], v)
			pos[i] += int32(5 + len(v))
		}
	}
	return nil
}

// normalizeFloatKeys rewrites, for a float column, the value bytes just
// written before pos[i] so that SQL-equal floats have equal keys: -0 becomes
// +0 and every NaN the one canonical NaN (as hashFloat64 hashes them).
// Without it GROUP BY puts -0.0 and 0.0 into two groups and a join misses
// the pair.
func normalizeFloatKeys(buf []byte, pos []int32, c arrow.Array, w int) {
	switch c.DataType().ID() {
	case arrow.FLOAT64:
		f := c.(*array.Float64)
		for i := range pos {
			if !f.IsValid(i) {
				continue
			}
			v := f.Value(i)
			if v == 0 || v != v {
				binary.LittleEndian.PutUint64(buf[pos[i]-int32(w):], math.Float64bits(canonicalFloat(v)))
			}
		}
	case arrow.FLOAT32:
		f := c.(*array.Float32)
		for i := range pos {
			if !f.IsValid(i) {
				continue
			}
			v := f.Value(i)
			if v == 0 || v != v {
				binary.LittleEndian.PutUint32(buf[pos[i]-int32(w):], math.Float32bits(float32(canonicalFloat(float64(v)))))
			}
		}
	}
}

func canonicalFloat(v float64) float64 {
	if v != v {
		return math.NaN()
	}
	return 0
}

// collationKeys replaces every column of a collated string type by the
// collation's keys (expr.Keys), so equal keys mean equal strings under the
// collation: 'a' and 'A' COLLATE utf8mb4_general_ci group, join and hash
// alike. release frees the key arrays.
func collationKeys(cols []arrow.Array) ([]arrow.Array, func()) {
	var made []arrow.Array
	out := cols
	for i, c := range cols {
		if expr.CollationOf(c.DataType()) == nil {
			continue
		}
		if made == nil {
			out = slices.Clone(cols)
		}
		k := expr.Keys(memory.DefaultAllocator, c)
		made = append(made, k)
		out[i] = k
	}
	return out, func() { releaseArrays(made) }
}

func varLen(c arrow.Array) (func(int) int, error) {
	switch a := c.(type) {
	case *array.String:
		return a.ValueLen, nil
	case *array.LargeString:
		return a.ValueLen, nil
	case *array.Binary:
		return a.ValueLen, nil
	case *array.LargeBinary:
		return a.ValueLen, nil
	case *array.StringView:
		return a.ValueLen, nil
	case *array.BinaryView:
		return a.ValueLen, nil
	case *expr.CollatedArray:
		return varLen(a.Storage())
	}
	return nil, fmt.Errorf("%w: a join, GROUP BY, DISTINCT or PARTITION BY key of the type %s: CAST it to a string or number", ErrNotImplemented, hive.SQLTypeName(c.DataType()))
}

func varBytes(c arrow.Array) (func(int) string, error) {
	switch a := c.(type) {
	case *array.String:
		return a.Value, nil
	case *array.LargeString:
		return a.Value, nil
	case *array.StringView:
		return a.Value, nil
	case *array.Binary:
		return a.ValueString, nil
	case *array.LargeBinary:
		return a.ValueString, nil
	case *array.BinaryView:
		return a.ValueString, nil
	case *expr.CollatedArray:
		// The strings themselves; comparisons use the collation's keys.
		return varBytes(a.Storage())
	}
	return nil, fmt.Errorf("%w: a join, GROUP BY, DISTINCT or PARTITION BY key of the type %s: CAST it to a string or number", ErrNotImplemented, hive.SQLTypeName(c.DataType()))
}

// intKeyType reports whether a single key of this type takes the integer
// fast path (a map keyed by int64 instead of encoded bytes).
func intKeyType(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32,
		arrow.DATE32, arrow.DATE64, arrow.TIMESTAMP, arrow.TIME32, arrow.TIME64, arrow.DURATION:
		return true
	}
	return false
}

// intKeys widens an integer-like column to int64 values (NULL rows hold 0;
// callers check validity).
func intKeys(c arrow.Array, dst []int64) []int64 {
	n := c.Len()
	dst = slices.Grow(dst[:0], n)[:n]
	d := c.Data()
	switch fixedWidth(c.DataType()) {
	case 1:
		if c.DataType().ID() == arrow.UINT8 {
			widen(dst, arrow.GetValues[uint8](d, 1))
		} else {
			widen(dst, arrow.GetValues[int8](d, 1))
		}
	case 2:
		if c.DataType().ID() == arrow.UINT16 {
			widen(dst, arrow.GetValues[uint16](d, 1))
		} else {
			widen(dst, arrow.GetValues[int16](d, 1))
		}
	case 4:
		if c.DataType().ID() == arrow.UINT32 {
			widen(dst, arrow.GetValues[uint32](d, 1))
		} else {
			widen(dst, arrow.GetValues[int32](d, 1))
		}
	default:
		copy(dst, arrow.GetValues[int64](d, 1))
	}
	return dst
}

func widen[T int8 | int16 | int32 | uint8 | uint16 | uint32](dst []int64, src []T) {
	for i, v := range src {
		dst[i] = int64(v)
	}
}

// ---- comparators ----

// rowCmp compares rows i and j of one column (or of several, chained).
type rowCmp func(i, j int) int

func cmpOrdered[T cmp.Ordered](v []T) rowCmp {
	return func(i, j int) int { return cmp.Compare(v[i], v[j]) }
}

// newRowCmp returns a comparator over one column, specialised by type so
// sorting does no per-value boxing. NULLs are equal to each other and placed
// first or last as asked, independent of desc.
func newRowCmp(c arrow.Array, desc, nullsFirst bool) (rowCmp, error) {
	var base rowCmp
	d := c.Data()
	switch c.DataType().ID() {
	case arrow.NULL:
		// Every row is NULL, and NULLs are equal to each other.
		return func(int, int) int { return 0 }, nil
	case arrow.EXTENSION:
		if expr.CollationOf(c.DataType()) == nil {
			return nil, fmt.Errorf("%w: ORDER BY a value of the type %s: CAST it to a string, number or date", ErrNotImplemented, hive.SQLTypeName(c.DataType()))
		}
		// Order by the collation's keys.
		keys := expr.Keys(memory.DefaultAllocator, c).(*array.Binary)
		base = func(i, j int) int { return strings.Compare(keys.ValueString(i), keys.ValueString(j)) }
	case arrow.INT8:
		base = cmpOrdered(arrow.GetValues[int8](d, 1))
	case arrow.INT16:
		base = cmpOrdered(arrow.GetValues[int16](d, 1))
	case arrow.INT32, arrow.DATE32, arrow.TIME32:
		base = cmpOrdered(arrow.GetValues[int32](d, 1))
	case arrow.INT64, arrow.DATE64, arrow.TIMESTAMP, arrow.TIME64, arrow.DURATION:
		base = cmpOrdered(arrow.GetValues[int64](d, 1))
	case arrow.UINT8:
		base = cmpOrdered(arrow.GetValues[uint8](d, 1))
	case arrow.UINT16:
		base = cmpOrdered(arrow.GetValues[uint16](d, 1))
	case arrow.UINT32:
		base = cmpOrdered(arrow.GetValues[uint32](d, 1))
	case arrow.UINT64:
		base = cmpOrdered(arrow.GetValues[uint64](d, 1))
	case arrow.FLOAT32:
		base = cmpOrdered(arrow.GetValues[float32](d, 1))
	case arrow.FLOAT64:
		base = cmpOrdered(arrow.GetValues[float64](d, 1))
	case arrow.DECIMAL128:
		v := arrow.GetValues[decimal128.Num](d, 1)
		base = func(i, j int) int { return v[i].Cmp(v[j]) }
	case arrow.BOOL:
		b := c.(*array.Boolean)
		base = func(i, j int) int {
			x, y := b.Value(i), b.Value(j)
			switch {
			case x == y:
				return 0
			case !x:
				return -1
			}
			return 1
		}
	default:
		vb, err := varBytes(c)
		if err != nil {
			return nil, fmt.Errorf("%w: ORDER BY a value of the type %s: CAST it to a string, number or date", ErrNotImplemented, hive.SQLTypeName(c.DataType()))
		}
		base = func(i, j int) int { return strings.Compare(vb(i), vb(j)) }
	}
	if c.NullN() == 0 {
		if desc {
			return func(i, j int) int { return -base(i, j) }, nil
		}
		return base, nil
	}
	nullOrder := 1
	if nullsFirst {
		nullOrder = -1
	}
	bits, off := validity(c)
	return func(i, j int) int {
		ni, nj := !bitutil.BitIsSet(bits, off+i), !bitutil.BitIsSet(bits, off+j)
		if ni || nj {
			switch {
			case ni && nj:
				return 0
			case ni:
				return nullOrder
			}
			return -nullOrder
		}
		if desc {
			return -base(i, j)
		}
		return base(i, j)
	}, nil
}

// chainCmp compares by the first comparator, breaking ties with the next.
func chainCmp(cs []rowCmp) rowCmp {
	if len(cs) == 1 {
		return cs[0]
	}
	return func(i, j int) int {
		for _, c := range cs {
			if r := c(i, j); r != 0 {
				return r
			}
		}
		return 0
	}
}

func keyCmps(keys []arrow.Array, specs []SortKey) (rowCmp, error) {
	cs := make([]rowCmp, len(keys))
	for k, a := range keys {
		c, err := newRowCmp(a, specs[k].Desc, specs[k].NullsFirst)
		if err != nil {
			return nil, err
		}
		cs[k] = c
	}
	if len(cs) == 0 {
		return func(int, int) int { return 0 }, nil
	}
	return chainCmp(cs), nil
}

// sortPermutation returns the row order of n rows sorted by keys; ties
// keep input order.
func sortPermutation(keys []arrow.Array, specs []SortKey, n int) ([]int32, error) {
	perm := make([]int32, n)
	for i := range perm {
		perm[i] = int32(i)
	}
	if len(keys) == 0 || packedSortPermutation(keys, specs, perm) {
		return perm, nil
	}
	c, err := keyCmps(keys, specs)
	if err != nil {
		return nil, err
	}
	if len(keys) == 1 && keys[0].NullN() == 0 && intKeyType(keys[0].DataType()) {
		sortIntPermutation(perm, intKeys(keys[0], nil), specs[0].Desc)
		return perm, nil
	}
	// pdqsort with the row index as the last key: as stable as a stable
	// sort, without its O(n log² n) in-place merging.
	slices.SortFunc(perm, func(a, b int32) int {
		if r := c(int(a), int(b)); r != 0 {
			return r
		}
		return cmp.Compare(a, b)
	})
	return perm, nil
}

// sortIntPermutation sorts by one integer key without NULLs: (key, row)
// pairs sort in a tight loop with no comparator calls.
func sortIntPermutation(perm []int32, keys []int64, desc bool) {
	if len(keys) > 0 {
		lo, hi := keys[0], keys[0]
		for _, k := range keys {
			lo, hi = min(lo, k), max(hi, k)
		}
		if uint64(hi)-uint64(lo) < 1<<32 && hi-lo >= 0 {
			// Key offset and row index packed into one uint64 sort with
			// the ordered (comparator-free) pdqsort.
			packed := make([]uint64, len(perm))
			for i, k := range keys {
				d := uint64(k - lo)
				if desc {
					d = uint64(hi - k)
				}
				packed[i] = d<<32 | uint64(i)
			}
			slices.Sort(packed)
			for i, p := range packed {
				perm[i] = int32(uint32(p))
			}
			return
		}
	}
	type kv struct {
		k int64
		i int32
	}
	pairs := make([]kv, len(perm))
	for i := range pairs {
		k := keys[i]
		if desc {
			k = ^k // reverses the order without overflowing at MinInt64
		}
		pairs[i] = kv{k, int32(i)}
	}
	slices.SortFunc(pairs, func(a, b kv) int {
		if a.k != b.k {
			return cmp.Compare(a.k, b.k)
		}
		return cmp.Compare(a.i, b.i)
	})
	for i, p := range pairs {
		perm[i] = p.i
	}
}

// ---- gathering ----

// takeArrays gathers rows idx of every column; an index of -1 yields NULL.
func takeArrays(alloc memory.Allocator, cols []arrow.Array, idx []int32) ([]arrow.Array, error) {
	return kernels.TakeAll(alloc, cols, idx)
}

// concatColumns concatenates the columns of batches into one array per
// column of schema (empty arrays when there are no batches).
func concatColumns(alloc memory.Allocator, schema *arrow.Schema, batches []arrow.RecordBatch) ([]arrow.Array, error) {
	out := make([]arrow.Array, schema.NumFields())
	for c := range out {
		if len(batches) == 1 {
			out[c] = batches[0].Column(c)
			out[c].Retain()
			continue
		}
		if len(batches) == 0 {
			out[c] = array.MakeArrayOfNull(alloc, schema.Field(c).Type, 0)
			continue
		}
		parts := make([]arrow.Array, len(batches))
		for i, b := range batches {
			parts[i] = b.Column(c)
		}
		a, err := kernels.Concat(alloc, parts)
		if err != nil {
			releaseArrays(out)
			return nil, errs.Wrap(errs.Internal, "concatenating batches: %w", err)
		}
		out[c] = a
	}
	return out, nil
}

// sliceArrays returns zero-copy slices [i, j) of every column.
func sliceArrays(cols []arrow.Array, i, j int) []arrow.Array {
	out := make([]arrow.Array, len(cols))
	for k, c := range cols {
		out[k] = array.NewSlice(c, int64(i), int64(j))
	}
	return out
}

// newBatch wraps columns into a batch and drops the caller's references.
func newBatch(schema *arrow.Schema, cols []arrow.Array, n int) arrow.RecordBatch {
	b := array.NewRecordBatch(schema, cols, int64(n))
	releaseArrays(cols)
	return b
}

// fixedArray builds a fixed-width array from Go values; valid may be nil
// (all valid).
func fixedArray[T arrow.FixedWidthType](alloc memory.Allocator, dt arrow.DataType, vals []T, valid []bool) arrow.Array {
	return fixedFromBytes(alloc, dt, arrow.GetBytes(vals), len(vals), valid)
}

// fixedFromBytes builds an n-row fixed-width array of type dt whose values
// are the little-endian bytes raw.
func fixedFromBytes(alloc memory.Allocator, dt arrow.DataType, raw []byte, n int, valid []bool) arrow.Array {
	vb := mempool.Buffer(alloc, len(raw))
	copy(vb.Bytes(), raw)
	var nb *memory.Buffer
	nulls := 0
	if valid != nil {
		for _, v := range valid[:n] {
			if !v {
				nulls++
			}
		}
	}
	if nulls > 0 {
		nb = mempool.Buffer(alloc, int(bitutil.BytesForBits(int64(n))))
		bits := nb.Bytes()
		clear(bits)
		for i, v := range valid[:n] {
			if v {
				bitutil.SetBit(bits, i)
			}
		}
	}
	return newFixedArray(dt, n, nb, vb, nulls)
}

// newFixedArray wraps a value buffer and a validity bitmap (nil when
// nothing is NULL) into an n-row array of type dt, dropping the caller's
// references to them.
func newFixedArray(dt arrow.DataType, n int, nb, vb *memory.Buffer, nulls int) arrow.Array {
	d := array.NewData(dt, n, []*memory.Buffer{nb, vb}, nil, nulls, 0)
	a := array.MakeFromData(d)
	d.Release()
	vb.Release()
	if nb != nil {
		nb.Release()
	}
	return a
}

// boolArray builds a boolean array; valid may be nil.
func boolArray(alloc memory.Allocator, vals []bool, valid []bool) arrow.Array {
	b := array.NewBooleanBuilder(alloc)
	defer b.Release()
	b.AppendValues(vals, valid)
	return b.NewArray()
}

// castArray converts a to type to (used where a state's natural type and
// the planner's result type differ only in width).
func castArray(alloc memory.Allocator, a arrow.Array, to arrow.DataType) (arrow.Array, error) {
	ctx := compute.WithAllocator(context.Background(), alloc)
	out, err := compute.CastArray(ctx, a, compute.SafeCastOptions(to))
	if err != nil {
		return nil, errs.Wrap(errs.Execution, "converting %s to %s: %w", a.DataType(), to, err)
	}
	return out, nil
}

// ---- integer hash table ----

// intTable maps int64 keys to int32 values with open addressing and linear
// probing. It replaces a Go map on the hottest paths (join probe, group id
// lookup), where it is several times faster: no tombstones, and key and
// value side by side so a lookup usually touches one cache line.
type intTable struct {
	slots []intSlot
	shift uint
	n     int
}

type intSlot struct {
	key int64
	val int32 // -1: empty
}

func newIntTable(hint int) *intTable {
	size := 16
	for size < 2*hint {
		size <<= 1
	}
	t := &intTable{}
	t.alloc(size)
	return t
}

func (t *intTable) alloc(size int) {
	t.slots = make([]intSlot, size)
	for i := range t.slots {
		t.slots[i].val = -1
	}
	bits := uint(0)
	for 1<<bits < size {
		bits++
	}
	t.shift = 64 - bits
}

func (t *intTable) slot(k int64) int {
	// Fibonacci hashing: the multiply spreads sequential keys.
	return int((uint64(k) * 0x9E3779B97F4A7C15) >> t.shift)
}

// get returns the value of k, or -1.
func (t *intTable) get(k int64) int32 {
	mask := len(t.slots) - 1
	for i := t.slot(k); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.val < 0 || s.key == k {
			return s.val
		}
	}
}

// touch reads the home slot of every key before get looks at any, as
// touchSlots does for the join table: independent loads overlap their
// cache misses, where get's probe loop waits on each. A table that fits
// the L2 cache is left alone (its misses are cheap, the pass is not
// free). The result only keeps the loads from being optimised away.
func (t *intTable) touch(keys []int64) int32 {
	if len(t.slots) < touchMinSlots {
		return 0
	}
	var x int32
	slots := t.slots
	for _, k := range keys {
		x |= slots[t.slot(k)].val
	}
	return x
}

// touchMinSlots is the table size from which touch passes pay: half a
// MiB of 8-byte slots, 1 MiB of 16-byte ones.
const touchMinSlots = 1 << 16

// upsert returns the slot of k, adding k with value -1 when missing; the
// caller stores the value with set before the next upsert.
func (t *intTable) upsert(k int64) int {
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	mask := len(t.slots) - 1
	for i := t.slot(k); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.val < 0 {
			s.key = k
			t.n++
			return i
		}
		if s.key == k {
			return i
		}
	}
}

func (t *intTable) value(slot int) int32 { return t.slots[slot].val }

func (t *intTable) set(slot int, v int32) { t.slots[slot].val = v }

func (t *intTable) grow() {
	old := t.slots
	t.alloc(2 * len(old))
	mask := len(t.slots) - 1
	for _, s := range old {
		if s.val < 0 {
			continue
		}
		i := t.slot(s.key)
		for t.slots[i].val >= 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = s
	}
}

// bytes is the table's memory footprint.
func (t *intTable) bytes() int64 { return int64(len(t.slots)) * 16 }
