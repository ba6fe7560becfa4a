package exec

import (
	"math"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/shuffle/keygroup"
)

// Two or more integer keys packed into one word.
//
// TPC-DS's slowest aggregates group by two surrogate keys (q65's store
// and item, q97's customer and item). On the general path each row hashes
// every key column, probes the (hash, id) slots and, on a hash match,
// reads every key column of the group to compare: a cache miss per
// column on top of the slot's (probe and growSlots were a third of q65's
// profile). Surrogate keys are small, so the key columns of a row fit
// side by side in one word, which needs no per-column hashing or
// comparing.
//
// The layout is fixed by the first batch's values: a column takes the
// bits its observed range needs (with a code for NULL); if every column
// can also get 3 bits more (a window 8 times its observed range, or its
// type's whole range) within 32 bits, the key is packed into 32 bits,
// else into 64; the spare bits are dealt out to the columns one at a
// time, and each column's window is centred on its observed range,
// clamped to its type's range (a column whose bits cover its whole type
// never leaves its window). A row's key is, column by column, 0 for NULL
// or 1 + (value - window base), each in its own bits: distinct key tuples
// whose values lie in the windows get distinct keys.
//
// The keys go into the general path's slots, hash<<32 | (id + 1), mixed
// first by a bijection so that the fields' runs spread. A 32-bit key is
// its own hash: a matching slot is the group, with one load. A 64-bit
// key's top half is the hash, confirmed against the group's key in a
// dense array. (The one-key path's intTable holds 16-byte slots; for
// near-unique pairs it was slower than the general path, twice the memory
// to miss in and to grow through.)
//
// When a batch brings a value outside its column's window, or the first
// batch's ranges need more than 64 bits, the table moves to the general
// path for good before it looks at that batch: the groups so far are
// hashed from their stored key columns into fresh slots, keeping their
// ids.

// packedKeys is the layout of the packed key and its per-batch scratch.
type packedKeys struct {
	laid bool
	wide bool // 64 bits, else 32
	cols []packedCol
	buf  []int64
	keys []int64 // wide: each group's mixed packed key
}

// packedCol is one column's field: values base .. base+lim-1 are codes
// 1 .. lim, NULL is 0, in bits shift .. shift+w-1 (lim = 2^w - 1).
type packedCol struct {
	base  int64
	lim   uint64
	shift uint
}

// newPackedKeys is the packed path for keys of these types, nil unless
// they are two or more integers.
func newPackedKeys(types []arrow.DataType) *packedKeys {
	if len(types) < 2 {
		return nil
	}
	for _, t := range types {
		if !intKeyType(t) {
			return nil
		}
	}
	return &packedKeys{}
}

// packedIDs is ids on the packed path. It reports false, having moved the
// table to the general path, when the batch does not fit the layout; the
// caller then finds the batch's ids there.
func (g *groupTable) packedIDs(keys []arrow.Array, n int, out []int32) (bool, error) {
	pk := g.pk
	if !pk.laid && !pk.layout(keys, g.types, n) {
		return false, g.unpack()
	}
	pk.buf = growSlice(pk.buf[:0], n)
	clear(pk.buf)
	for c, k := range keys {
		if !packColumn(pk.buf, k, pk.cols[c]) {
			return false, g.unpack()
		}
	}
	for c := range g.cols {
		if err := g.views[c].load(&g.cols[c], keys[c], keys[c], n); err != nil {
			return false, err
		}
	}
	// Scramble each packed key, bijectively, so distinct keys stay
	// distinct, before its bits pick a slot. slotOf multiplies by one odd
	// constant, which spreads a run of one integer well; a packed key is
	// several runs at fixed shifts, and a field shifted up meets only the
	// constant's low bits: unmixed, q65-like pairs clustered into long
	// probe chains. (Murmur3's finalizers: mix64, keygroup.BitMix.)
	if pk.wide {
		for i, k := range pk.buf {
			pk.buf[i] = int64(mix64(uint64(k)))
		}
	} else {
		for i, k := range pk.buf {
			pk.buf[i] = int64(keygroup.BitMix(uint32(k)))
		}
	}
	g.newRows = g.newRows[:0]
	for lo := 0; lo < n; {
		groups := g.n + len(g.newRows)
		room := len(g.slots)/2 - groups
		if want := min(n-lo, 16); room < want {
			g.growSlots(groups + want)
			room = len(g.slots)/2 - groups
		}
		hi := lo + min(n-lo, room)
		if pk.wide {
			pk.keys = growArena(pk.keys, hi-lo)
			g.wideProbe(lo, hi, out)
		} else {
			g.narrowProbe(lo, hi, out)
		}
		lo = hi
	}
	g.appendGroups(g.newRows)
	return true, nil
}

// narrowProbe finds or adds the groups of rows [lo, hi), which fit in
// the slots' free half, for keys packed into 32 bits: a slot's hash is
// the mixed key, so a hash that matches is the key.
func (g *groupTable) narrowProbe(lo, hi int, out []int32) {
	slots, mask := g.slots, uint32(len(g.slots)-1)
	for r := lo; r < hi; r++ {
		h := uint32(g.pk.buf[r])
		for p := g.slotOf(h); ; p = (p + 1) & mask {
			s := slots[p]
			if s == 0 {
				id := g.n + len(g.newRows)
				slots[p] = uint64(h)<<32 | uint64(id+1)
				g.newRows = append(g.newRows, int32(r))
				out[r] = int32(id)
				break
			}
			if uint32(s>>32) == h {
				out[r] = int32(uint32(s)) - 1
				break
			}
		}
	}
}

// wideProbe is narrowProbe for keys packed into 64 bits: a slot's hash is
// the top half of the mixed key, which the group's key confirms.
func (g *groupTable) wideProbe(lo, hi int, out []int32) {
	pk := g.pk
	slots, mask := g.slots, uint32(len(g.slots)-1)
	for r := lo; r < hi; r++ {
		k := pk.buf[r]
		h := uint32(uint64(k) >> 32)
		for p := g.slotOf(h); ; p = (p + 1) & mask {
			s := slots[p]
			if s == 0 {
				id := len(pk.keys)
				slots[p] = uint64(h)<<32 | uint64(id+1)
				pk.keys = append(pk.keys, k)
				g.newRows = append(g.newRows, int32(r))
				out[r] = int32(id)
				break
			}
			if uint32(s>>32) == h && pk.keys[uint32(s)-1] == k {
				out[r] = int32(uint32(s)) - 1
				break
			}
		}
	}
}

// layout chooses the fields from the first n rows; false when their
// ranges need more than 64 bits.
func (pk *packedKeys) layout(keys []arrow.Array, types []arrow.DataType, n int) bool {
	type field struct {
		lo, hi       int64  // observed range (0, 0 when all NULL)
		domLo, domHi int64  // the type's range
		w, full      uint   // bits taken; bits the whole type needs
		span         uint64 // hi - lo
	}
	fs := make([]field, len(keys))
	used, roomy := uint(0), uint(0)
	for c, k := range keys {
		f := &fs[c]
		f.domLo, f.domHi = intDomain(types[c])
		f.lo, f.hi = intRange(k, n)
		f.span = uint64(f.hi) - uint64(f.lo)
		f.full = fieldBits(uint64(f.domHi) - uint64(f.domLo))
		f.w = fieldBits(f.span)
		used += f.w
		if used > 64 {
			return false
		}
		roomy += min(f.w+narrowHeadroom, f.full)
	}
	width := uint(32)
	if roomy > 32 {
		width = 64
	}
	pk.wide = width == 64
	for spare, dealt := width-used, true; spare > 0 && dealt; {
		dealt = false
		for c := range fs {
			if spare > 0 && fs[c].w < fs[c].full {
				fs[c].w++
				spare--
				dealt = true
			}
		}
	}
	pk.cols = make([]packedCol, len(fs))
	shift := uint(0)
	for c := range fs {
		f := &fs[c]
		// f.w < 64: every column takes at least one bit.
		lim := uint64(1)<<f.w - 1
		// In offsets from the type's lowest value.
		dom := uint64(f.domHi) - uint64(f.domLo)
		ubase := uint64(0)
		if lim <= dom {
			ulo := uint64(f.lo) - uint64(f.domLo)
			slack := lim - (f.span + 1)
			ubase = ulo - min(ulo, slack/2)
			if top := dom - (lim - 1); ubase > top {
				ubase = top
			}
		}
		pk.cols[c] = packedCol{base: int64(ubase + uint64(f.domLo)), lim: lim, shift: shift}
		shift += f.w
	}
	pk.laid = true
	return true
}

// narrowHeadroom is the bits beyond its observed range every field must
// get for the keys to be packed into 32 bits rather than 64: a window 8
// times the first batch's range (or the type's whole range).
const narrowHeadroom = 3

// fieldBits is the bits a field of span+1 values and NULL needs (65 for
// the whole int64 range).
func fieldBits(span uint64) uint {
	if span == math.MaxUint64 {
		return 65
	}
	return uint(bits.Len64(span + 1))
}

// intDomain is the range of an integer key type's values.
func intDomain(dt arrow.DataType) (int64, int64) {
	unsigned := dt.ID() == arrow.UINT8 || dt.ID() == arrow.UINT16 || dt.ID() == arrow.UINT32
	switch w := fixedWidth(dt); {
	case w == 8:
		return math.MinInt64, math.MaxInt64
	case unsigned:
		return 0, 1<<(8*w) - 1
	default:
		return -1 << (8*w - 1), 1<<(8*w-1) - 1
	}
}

// intRange is the smallest and largest valid value of the first n rows
// of an integer key column, (0, 0) when none is valid.
func intRange(k arrow.Array, n int) (int64, int64) {
	if k.NullN() == k.Len() {
		return 0, 0
	}
	d := k.Data()
	switch fixedWidth(k.DataType()) {
	case 1:
		if k.DataType().ID() == arrow.UINT8 {
			return observedRange(arrow.GetValues[uint8](d, 1)[:n], k)
		}
		return observedRange(arrow.GetValues[int8](d, 1)[:n], k)
	case 2:
		if k.DataType().ID() == arrow.UINT16 {
			return observedRange(arrow.GetValues[uint16](d, 1)[:n], k)
		}
		return observedRange(arrow.GetValues[int16](d, 1)[:n], k)
	case 4:
		if k.DataType().ID() == arrow.UINT32 {
			return observedRange(arrow.GetValues[uint32](d, 1)[:n], k)
		}
		return observedRange(arrow.GetValues[int32](d, 1)[:n], k)
	}
	return observedRange(arrow.GetValues[int64](d, 1)[:n], k)
}

type intValue interface {
	int8 | int16 | int32 | int64 | uint8 | uint16 | uint32
}

func observedRange[T intValue](vals []T, k arrow.Array) (int64, int64) {
	bits, off := validity(k)
	var lo, hi int64
	seen := false
	for i, v := range vals {
		if !isValid(bits, off, i) {
			continue
		}
		x := int64(v)
		if !seen {
			lo, hi, seen = x, x, true
		}
		lo, hi = min(lo, x), max(hi, x)
	}
	return lo, hi
}

// packColumn ORs column k's field into the packed keys dst; false when a
// valid value lies outside the field's window.
func packColumn(dst []int64, k arrow.Array, f packedCol) bool {
	if k.NullN() == k.Len() {
		return true // all NULL: every code is 0, the values may be absent
	}
	d := k.Data()
	n := len(dst)
	switch fixedWidth(k.DataType()) {
	case 1:
		if k.DataType().ID() == arrow.UINT8 {
			return packValues(dst, arrow.GetValues[uint8](d, 1)[:n], k, f)
		}
		return packValues(dst, arrow.GetValues[int8](d, 1)[:n], k, f)
	case 2:
		if k.DataType().ID() == arrow.UINT16 {
			return packValues(dst, arrow.GetValues[uint16](d, 1)[:n], k, f)
		}
		return packValues(dst, arrow.GetValues[int16](d, 1)[:n], k, f)
	case 4:
		if k.DataType().ID() == arrow.UINT32 {
			return packValues(dst, arrow.GetValues[uint32](d, 1)[:n], k, f)
		}
		return packValues(dst, arrow.GetValues[int32](d, 1)[:n], k, f)
	}
	return packValues(dst, arrow.GetValues[int64](d, 1)[:n], k, f)
}

func packValues[T intValue](dst []int64, vals []T, k arrow.Array, f packedCol) bool {
	base, lim, shift := uint64(f.base), f.lim, f.shift
	out := false
	if k.NullN() == 0 {
		for i, v := range vals {
			d := uint64(int64(v)) - base
			if d >= lim {
				out = true
			}
			dst[i] |= int64((d + 1) << shift)
		}
		return !out
	}
	bits, off := validity(k)
	for i, v := range vals {
		if !bitutil.BitIsSet(bits, off+i) {
			continue // NULL: code 0
		}
		d := uint64(int64(v)) - base
		if d >= lim {
			out = true
		}
		dst[i] |= int64((d + 1) << shift)
	}
	return !out
}

// unpack moves the table to the general path: the groups so far are
// hashed from their stored keys, as their rows would have been, into
// slots at most half full, each under its id.
func (g *groupTable) unpack() error {
	g.pk = nil
	size := 16
	for size < 2*g.n {
		size <<= 1
	}
	g.allocSlots(size)
	if g.n == 0 {
		return nil
	}
	keys, err := g.arrays(memory.DefaultAllocator)
	if err != nil {
		return err
	}
	h, scratch := make([]uint32, g.n), make([]uint32, g.n)
	hashTableKeys(keys, h, scratch)
	releaseArrays(keys)
	mask := uint32(size - 1)
	for id, hv := range h {
		p := g.slotOf(hv)
		for g.slots[p] != 0 {
			p = (p + 1) & mask
		}
		g.slots[p] = uint64(hv)<<32 | uint64(id+1)
	}
	return nil
}
