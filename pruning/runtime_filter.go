package pruning

import (
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"

	"github.com/fsql-dev/fsql/exec/expr"
)

// keyKind is how a runtime filter compares keys: integers of every width
// (and DATE) by value as int64, strings bytewise.
type keyKind uint8

const (
	kindUnknown keyKind = iota // no non-NULL key seen yet
	kindInt
	kindString
)

func (k keyKind) String() string {
	switch k {
	case kindInt:
		return "integer"
	case kindString:
		return "string"
	}
	return "no"
}

// kindOf maps an Arrow type to the way its keys are compared.
func kindOf(t arrow.DataType) (keyKind, bool) {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.DATE32:
		return kindInt, true
	case arrow.STRING, arrow.LARGE_STRING:
		return kindString, true
	}
	return kindUnknown, false
}

// SupportedKeyType reports whether join keys of type t can feed a dynamic
// filter: integers up to 64 bits signed (32 unsigned), DATE and strings.
// The planner checks it before placing a collector; the collector fails
// the query with ErrNotImplemented on any other type.
func SupportedKeyType(t arrow.DataType) bool {
	_, ok := kindOf(t)
	return ok
}

type intLike interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32
}

// keyBuilder accumulates the distinct non-NULL values of one key column
// of one collector, across all its tasks (the collector's mutex guards
// it). It keeps them exactly while there are at most maxValues, then
// degrades to a bloom filter plus min/max so memory stays bounded.
type keyBuilder struct {
	kind      keyKind
	maxValues int
	ints      *intSet
	strs      map[string]struct{}
	bloom     *scalableBloom // non-nil once degraded
	has       bool           // some non-NULL key was seen
	minI      int64
	maxI      int64
	minS      string
	maxS      string
}

func (k *keyBuilder) add(a arrow.Array) error {
	if a.DataType().ID() == arrow.NULL {
		return nil // every key is NULL, and a NULL key never joins
	}
	kind, ok := kindOf(a.DataType())
	if !ok {
		return fmt.Errorf("join keys of type %s cannot feed a dynamic filter", a.DataType())
	}
	if k.kind == kindUnknown {
		k.kind = kind
		if kind == kindInt {
			k.ints = newIntSet(nil)
		} else {
			k.strs = map[string]struct{}{}
		}
	} else if k.kind != kind {
		return fmt.Errorf("key column changed from %s to %s keys (%s)", k.kind, kind, a.DataType())
	}
	switch x := a.(type) {
	case *array.Int8:
		addInts(k, x.Int8Values(), a)
	case *array.Int16:
		addInts(k, x.Int16Values(), a)
	case *array.Int32:
		addInts(k, x.Int32Values(), a)
	case *array.Int64:
		addInts(k, x.Int64Values(), a)
	case *array.Uint8:
		addInts(k, x.Uint8Values(), a)
	case *array.Uint16:
		addInts(k, x.Uint16Values(), a)
	case *array.Uint32:
		addInts(k, x.Uint32Values(), a)
	case *array.Date32:
		addInts(k, x.Date32Values(), a)
	case *array.String:
		addStrings(k, x.Len(), x.Value, a)
	case *array.LargeString:
		addStrings(k, x.Len(), x.Value, a)
	default:
		return fmt.Errorf("join keys of type %s cannot feed a dynamic filter", a.DataType())
	}
	return nil
}

func addInts[T intLike](k *keyBuilder, vals []T, a arrow.Array) {
	valid, off := expr.Validity(a)
	for i, v := range vals {
		if valid != nil && !bitutil.BitIsSet(valid, off+i) {
			continue // a NULL key never joins
		}
		x := int64(v)
		if !k.has {
			k.has, k.minI, k.maxI = true, x, x
		} else if x < k.minI {
			k.minI = x
		} else if x > k.maxI {
			k.maxI = x
		}
		if k.bloom != nil {
			k.bloom.add(hashInt(x))
			continue
		}
		k.ints.add(x)
		if k.ints.len() > k.maxValues {
			k.degrade()
		}
	}
}

func addStrings(k *keyBuilder, n int, value func(int) string, a arrow.Array) {
	valid, off := expr.Validity(a)
	for i := 0; i < n; i++ {
		if valid != nil && !bitutil.BitIsSet(valid, off+i) {
			continue
		}
		s := value(i) // aliases the Arrow buffer: clone what is kept
		if !k.has {
			k.has, k.minS, k.maxS = true, strings.Clone(s), strings.Clone(s)
		} else if s < k.minS {
			k.minS = strings.Clone(s)
		} else if s > k.maxS {
			k.maxS = strings.Clone(s)
		}
		if k.bloom != nil {
			k.bloom.add(hashString(s))
			continue
		}
		if _, ok := k.strs[s]; ok {
			continue
		}
		k.strs[strings.Clone(s)] = struct{}{}
		if len(k.strs) > k.maxValues {
			k.degrade()
		}
	}
}

// merge adds every key of o (another attempt's or task's keys of the same
// column) to k, degrading k to a bloom filter when the union passes the
// cap, as if the keys had been added one by one.
func (k *keyBuilder) merge(o *keyBuilder) error {
	if o.kind == kindUnknown {
		return nil
	}
	if k.kind == kindUnknown {
		k.kind = o.kind
		if o.kind == kindInt {
			k.ints = newIntSet(nil)
		} else {
			k.strs = map[string]struct{}{}
		}
	} else if k.kind != o.kind {
		return fmt.Errorf("key column is %s keys in one task and %s in another", k.kind, o.kind)
	}
	if o.has {
		if !k.has {
			k.has, k.minI, k.maxI, k.minS, k.maxS = true, o.minI, o.maxI, o.minS, o.maxS
		} else {
			k.minI, k.maxI = min(k.minI, o.minI), max(k.maxI, o.maxI)
			k.minS, k.maxS = min(k.minS, o.minS), max(k.maxS, o.maxS)
		}
	}
	if o.bloom != nil {
		if k.bloom == nil {
			k.degrade()
		}
		k.bloom.merge(o.bloom)
		return nil
	}
	if o.ints != nil {
		if k.bloom == nil {
			k.ints.reserve(min(k.ints.len()+o.ints.len(), k.maxValues+1))
		}
		o.ints.each(func(x int64) {
			if k.bloom != nil {
				k.bloom.add(hashInt(x))
				return
			}
			k.ints.add(x)
			if k.ints.len() > k.maxValues {
				k.degrade()
			}
		})
	}
	for s := range o.strs {
		if k.bloom != nil {
			k.bloom.add(hashString(s))
			continue
		}
		k.strs[s] = struct{}{}
		if len(k.strs) > k.maxValues {
			k.degrade()
		}
	}
	return nil
}

// degrade moves the exact set into a bloom filter sized for eight times
// the cap (it grows further if more keys come) and drops the set.
func (k *keyBuilder) degrade() {
	k.bloom = newScalableBloom(8 * max(k.maxValues, 1))
	if k.ints != nil {
		k.ints.each(func(x int64) { k.bloom.add(hashInt(x)) })
	}
	for s := range k.strs {
		k.bloom.add(hashString(s))
	}
	k.ints, k.strs = nil, nil
}

// runtimeFilter is the frozen, read-only form of a keyBuilder that scans
// test partitions, row groups and rows against; safe for concurrent use.
type runtimeFilter struct {
	kind  keyKind
	empty bool // no non-NULL key: matches nothing
	exact bool // ints/strs hold every key; otherwise bloom + min/max
	count int  // distinct keys when exact

	ints   []int64 // sorted, exact only
	intSet *intSet
	// dense is a bitmap over [minI, minI+span) used instead of intSet when
	// the keys are a narrow range (surrogate and date keys usually are).
	dense []uint64
	span  uint64

	strs   []string // sorted, exact only
	strSet map[string]struct{}

	bloom      *scalableBloom
	minI, maxI int64
	minS, maxS string
}

// maxDenseBits bounds the dense bitmap (2 MiB).
const maxDenseBits = 1 << 24

func (k *keyBuilder) freeze() *runtimeFilter {
	f := &runtimeFilter{kind: k.kind, empty: !k.has, exact: k.bloom == nil,
		minI: k.minI, maxI: k.maxI, minS: k.minS, maxS: k.maxS, bloom: k.bloom}
	if f.empty || !f.exact {
		return f
	}
	switch k.kind {
	case kindInt:
		f.count = k.ints.len()
		f.ints = make([]int64, 0, f.count)
		k.ints.each(func(x int64) { f.ints = append(f.ints, x) })
		slices.Sort(f.ints)
		span := uint64(f.maxI-f.minI) + 1
		if span != 0 && span <= maxDenseBits && span <= 64*uint64(f.count)+1<<16 {
			f.span = span
			f.dense = make([]uint64, (span+63)/64)
			for _, x := range f.ints {
				d := uint64(x - f.minI)
				f.dense[d>>6] |= 1 << (d & 63)
			}
		} else {
			f.intSet = newIntSet(f.ints)
		}
	case kindString:
		f.count = len(k.strs)
		f.strSet = k.strs
		f.strs = make([]string, 0, len(k.strs))
		for s := range k.strs {
			f.strs = append(f.strs, s)
		}
		slices.Sort(f.strs)
	}
	return f
}

// matchInt reports whether v may be a collected key (exactly, when exact).
func (f *runtimeFilter) matchInt(v int64) bool {
	if f.empty || f.kind != kindInt || v < f.minI || v > f.maxI {
		return false
	}
	switch {
	case f.dense != nil:
		d := uint64(v - f.minI)
		return f.dense[d>>6]&(1<<(d&63)) != 0
	case f.exact:
		return f.intSet.has(v)
	}
	return f.bloom.has(hashInt(v))
}

func (f *runtimeFilter) matchString(s string) bool {
	if f.empty || f.kind != kindString || s < f.minS || s > f.maxS {
		return false
	}
	if f.exact {
		_, ok := f.strSet[s]
		return ok
	}
	return f.bloom.has(hashString(s))
}

// overlapsInts reports whether some collected key may lie in [lo, hi].
func (f *runtimeFilter) overlapsInts(lo, hi int64) bool {
	if f.empty || hi < f.minI || lo > f.maxI {
		return false
	}
	if !f.exact {
		return true
	}
	i, _ := slices.BinarySearch(f.ints, lo)
	return i < len(f.ints) && f.ints[i] <= hi
}

func (f *runtimeFilter) overlapsStrings(lo, hi string) bool {
	if f.empty || hi < f.minS || lo > f.maxS {
		return false
	}
	if !f.exact {
		return true
	}
	i, _ := slices.BinarySearch(f.strs, lo)
	return i < len(f.strs) && f.strs[i] <= hi
}

// matchValue tests a Go value as hive hands out partition values and
// statistics: int32, int64, arrow.Date32 or string; nil never matches.
func (f *runtimeFilter) matchValue(v any) bool {
	if x, ok := intValue(v); ok {
		return f.matchInt(x)
	}
	if s, ok := v.(string); ok {
		return f.matchString(s)
	}
	return false
}

func intValue(v any) (int64, bool) {
	switch x := v.(type) {
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case arrow.Date32:
		return int64(x), true
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int:
		return int64(x), true
	}
	return 0, false
}

// mayHoldRange reports whether a row group whose column spans [lo, hi] by
// its statistics may hold a collected key; true when it cannot tell.
func (f *runtimeFilter) mayHoldRange(lo, hi any) bool {
	if a, ok := intValue(lo); ok {
		if b, ok := intValue(hi); ok && f.kind == kindInt {
			return f.overlapsInts(a, b)
		}
		return true
	}
	if a, ok := lo.(string); ok {
		if b, ok := hi.(string); ok && f.kind == kindString {
			return f.overlapsStrings(a, b)
		}
	}
	return true
}

// fillMask sets bit i of out (a zeroed bitmap of a.Len() bits) for every
// row of a whose key may be collected; NULLs stay unset. a must have the
// filter's kind.
func (f *runtimeFilter) fillMask(a arrow.Array, out []byte) error {
	switch x := a.(type) {
	case *array.Null:
		return nil // every row is NULL: none may join
	case *array.Int8:
		fillIntMask(f, x.Int8Values(), out)
	case *array.Int16:
		fillIntMask(f, x.Int16Values(), out)
	case *array.Int32:
		fillIntMask(f, x.Int32Values(), out)
	case *array.Int64:
		fillIntMask(f, x.Int64Values(), out)
	case *array.Uint8:
		fillIntMask(f, x.Uint8Values(), out)
	case *array.Uint16:
		fillIntMask(f, x.Uint16Values(), out)
	case *array.Uint32:
		fillIntMask(f, x.Uint32Values(), out)
	case *array.Date32:
		fillIntMask(f, x.Date32Values(), out)
	case *array.String:
		fillStringMask(f, x.Len(), x.Value, out)
	case *array.LargeString:
		fillStringMask(f, x.Len(), x.Value, out)
	default:
		return fmt.Errorf("a dynamic filter cannot test %s values", a.DataType())
	}
	// A NULL key never joins: clear its bit, reading the validity bitmap
	// directly (a call per row through the Array interface cost a third
	// of q96's CPU on flat data).
	if valid, off := expr.Validity(a); valid != nil {
		n := a.Len()
		if off%8 == 0 {
			valid = valid[off/8:]
			for b := 0; b < len(out) && b < len(valid); b++ {
				out[b] &= valid[b]
			}
		} else {
			for i := 0; i < n; i++ {
				if !bitutil.BitIsSet(valid, off+i) {
					bitutil.ClearBit(out, i)
				}
			}
		}
	}
	return nil
}

// fillIntMask is the hot loop: one branch-free-ish pass per filter mode.
func fillIntMask[T intLike](f *runtimeFilter, vals []T, out []byte) {
	if f.empty || f.kind != kindInt {
		return
	}
	lo, hi := f.minI, f.maxI
	switch {
	case f.dense != nil:
		dense, span := f.dense, f.span
		for i, v := range vals {
			d := uint64(int64(v) - lo)
			if d < span && dense[d>>6]&(1<<(d&63)) != 0 {
				out[i>>3] |= 1 << (i & 7)
			}
		}
	case f.exact:
		set := f.intSet
		for i, v := range vals {
			x := int64(v)
			if x < lo || x > hi {
				continue
			}
			if set.has(x) {
				out[i>>3] |= 1 << (i & 7)
			}
		}
	default:
		bloom := f.bloom
		for i, v := range vals {
			x := int64(v)
			if x >= lo && x <= hi && bloom.has(hashInt(x)) {
				out[i>>3] |= 1 << (i & 7)
			}
		}
	}
}

func fillStringMask(f *runtimeFilter, n int, value func(int) string, out []byte) {
	for i := 0; i < n; i++ {
		if f.matchString(value(i)) {
			out[i>>3] |= 1 << (i & 7)
		}
	}
}
