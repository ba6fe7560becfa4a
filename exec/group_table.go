package exec

import (
	"bytes"
	"encoding/binary"
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/internal/mempool"
)

// groupTable assigns dense group ids to key tuples and remembers each
// group's key values. NULL is a key value like any other, so NULLs group
// together; -0.0 and 0.0 are one key, every NaN is one key, and strings
// with an explicit collation are one key when their collation keys are.
//
// It works a batch at a time and holds no Go pointers per group, so the
// collector never scans it:
//
//   - one integer key looks its value up in an intTable;
//   - two or more integer keys whose values fit the ranges laid out from
//     the first batch are packed side by side into one 32- or 64-bit
//     word, which is looked up in the general path's (hash, group id)
//     slots by a hash of the word alone, with no per-column hashing or
//     compare
//     (group_table_packed.go); a batch that does not fit moves the table
//     to the general path for good;
//   - any other key is hashed column by column into one hash per row
//     (hashTableKeys: the shuffle's hash, with XXH3 for strings), looked
//     up in an open-addressing table of (hash, group id) words, and
//     compared column by column with the stored keys of the group whose
//     hash matches. Rows whose hash matches a different key probe on in
//     the next round.
//
// Group keys live column-wise: fixed-width values as little-endian bytes
// (floats canonical), strings in one byte arena with offsets, a validity
// byte per group. Ids are handed out in row order except after a full
// 32-bit hash collision; nothing may rely on the order.
type groupTable struct {
	types []arrow.DataType
	cols  []groupKeyCol
	n     int

	// One integer key.
	intKey bool
	ints   *intTable
	null   int32
	ibuf   []int64

	// Two or more integer keys packed into one; nil on the general path.
	pk *packedKeys

	// Any other key (and packed keys): slots hold hash<<32 | (group id +
	// 1), 0 when empty, at most half full.
	hashSlots

	// Per-batch scratch, kept between batches.
	views   []keyView
	hbuf    []uint32
	hcol    []uint32
	pos     []uint32
	sel     []int32
	cand    []int32
	miss    []int32
	newRows []int32
}

// keyKind is how a key column is stored and compared.
type keyKind uint8

const (
	keyNull  keyKind = iota // the NULL type: every value is NULL
	keyBool                 // one byte per group, 0 or 1
	keyFixed                // w little-endian bytes per group
	keyVar                  // bytes in an arena
)

type groupKeyCol struct {
	dt    arrow.DataType
	kind  keyKind
	w     int
	float bool // float32/64: canonical -0 and NaN
	// collated: data holds the collation keys (what equality means) and
	// orig the first-seen strings (what the output shows).
	collated bool
	raw      []byte
	offs     []int64 // keyVar: group g is data[offs[g]:offs[g+1]]
	data     []byte
	origOffs []int64
	orig     []byte
	valid    []bool
	nulls    int
}

// keyView is one batch's key column in the form the table compares: the
// validity bitmap, fixed-width bytes from row 0 (canonical floats), or
// 32-bit offsets into bytes. A collated column has both its keys and its
// strings.
type keyView struct {
	bits     []byte
	off      int
	raw      []byte
	bools    *array.Boolean
	offs     []int32
	data     []byte
	origOffs []int32
	orig     []byte
	// scratch for the conversions above, reused from batch to batch
	rawBuf  []byte
	offsBuf []int32
	dataBuf []byte
}

func (v *keyView) valid(i int) bool { return v.bits == nil || bitutil.BitIsSet(v.bits, v.off+i) }

func newGroupTable(types []arrow.DataType) *groupTable {
	g := &groupTable{types: types, null: -1}
	if len(types) == 0 {
		g.n = 1 // no GROUP BY: one group, even for empty input
		return g
	}
	g.intKey = len(types) == 1 && intKeyType(types[0])
	if g.intKey {
		g.ints = newIntTable(1024)
	} else {
		g.pk = newPackedKeys(types) // nil unless every key is an integer
		// Small at first: a table under a tiny share (an aggregate
		// partition being split to fit) must hold a few groups; it
		// doubles as groups arrive.
		g.allocSlots(16)
	}
	for _, t := range types {
		c := newKeyCol(t)
		if c.kind == keyVar {
			c.offs = []int64{0}
			if c.collated {
				c.origOffs = []int64{0}
			}
		}
		g.cols = append(g.cols, c)
	}
	g.views = make([]keyView, len(g.cols))
	return g
}

// newKeyCol is an empty key column of type t: how its values are stored
// and compared.
func newKeyCol(t arrow.DataType) groupKeyCol {
	c := groupKeyCol{dt: t, w: fixedWidth(t), collated: expr.CollationOf(t) != nil}
	switch {
	case t.ID() == arrow.NULL:
		c.kind = keyNull
	case t.ID() == arrow.BOOL:
		c.kind, c.w = keyBool, 1
	case c.w > 0:
		c.kind = keyFixed
		c.float = t.ID() == arrow.FLOAT32 || t.ID() == arrow.FLOAT64
	default:
		c.kind = keyVar
	}
	return c
}

// bytes is the table's memory: what its slots and stored keys hold, by
// capacity, so it grows with the groups. The per-batch scratch (hashes,
// probe positions, converted key columns) is bounded by one batch, like
// any operator's batch buffers, and is not counted.
func (g *groupTable) bytes() int64 {
	n := int64(cap(g.slots)) * 8
	if g.ints != nil {
		n += g.ints.bytes()
	}
	if g.pk != nil {
		n += int64(cap(g.pk.keys)) * 8
	}
	for i := range g.cols {
		c := &g.cols[i]
		n += int64(cap(c.raw)+cap(c.data)+cap(c.orig)+cap(c.valid)) + int64(cap(c.offs)+cap(c.origOffs))*8
	}
	return n
}

// ids fills out with the group id of every row, adding new groups.
func (g *groupTable) ids(keys []arrow.Array, n int, out []int32) ([]int32, error) {
	out = growSlice(out[:0], n)
	if len(g.types) == 0 || n == 0 {
		clear(out)
		return out, nil
	}
	if g.intKey {
		return g.intIDs(keys[0], n, out)
	}
	if g.pk != nil {
		if ok, err := g.packedIDs(keys, n, out); ok || err != nil {
			return out, err
		}
	}
	cmpKeys, release := collationKeys(keys)
	defer release()
	for c := range g.cols {
		if err := g.views[c].load(&g.cols[c], cmpKeys[c], keys[c], n); err != nil {
			return nil, err
		}
	}
	g.hbuf = growSlice(g.hbuf[:0], n)
	g.hcol = growSlice(g.hcol[:0], n)
	hashTableKeys(cmpKeys, g.hbuf[:n], g.hcol[:n])
	g.pos = growSlice(g.pos[:0], n)
	// Rows go in runs that cannot fill the slots past half, so the table
	// grows with its groups (by doubling), not with the batch size.
	for lo := 0; lo < n; {
		room := len(g.slots)/2 - g.n
		if want := min(n-lo, 16); room < want {
			g.growSlots(g.n + want)
			room = len(g.slots)/2 - g.n
		}
		hi := lo + min(n-lo, room)
		g.probe(lo, hi, out)
		lo = hi
	}
	return out, nil
}

// probe finds or adds the groups of rows [lo, hi), which fit in the
// slots' free half.
func (g *groupTable) probe(lo, hi int, out []int32) {
	g.sel = g.sel[:0]
	for r := lo; r < hi; r++ {
		g.pos[r] = g.slotOf(g.hbuf[r])
		g.sel = append(g.sel, int32(r))
	}
	mask := uint32(len(g.slots) - 1)
	for len(g.sel) > 0 {
		g.cand, g.newRows = g.cand[:0], g.newRows[:0]
		for _, r := range g.sel {
			h, p := g.hbuf[r], g.pos[r]
			for {
				s := g.slots[p]
				if s == 0 {
					id := g.n + len(g.newRows)
					g.slots[p] = uint64(h)<<32 | uint64(id+1)
					g.newRows = append(g.newRows, r)
					out[r] = int32(id)
					break
				}
				if uint32(s>>32) == h {
					out[r] = int32(uint32(s)) - 1
					g.cand = append(g.cand, r)
					break
				}
				p = (p + 1) & mask
			}
			g.pos[r] = p
		}
		g.appendGroups(g.newRows)
		// Candidates whose key differs probe on from the next slot.
		g.miss = g.miss[:0]
		for c := range g.cols {
			if len(g.cand) == 0 {
				break
			}
			g.cand = g.cols[c].match(&g.views[c], g.cand, out, &g.miss)
		}
		for _, r := range g.miss {
			g.pos[r] = (g.pos[r] + 1) & mask
		}
		g.sel = append(g.sel[:0], g.miss...)
	}
}

// intIDs is ids for one integer key.
func (g *groupTable) intIDs(k arrow.Array, n int, out []int32) ([]int32, error) {
	if err := g.views[0].load(&g.cols[0], k, k, n); err != nil {
		return nil, err
	}
	g.ibuf = intKeys(k, g.ibuf)
	g.newRows = g.newRows[:0]
	bits, off := validity(k)
	for i, v := range g.ibuf[:n] {
		if !isValid(bits, off, i) {
			if g.null < 0 {
				g.null = int32(g.n + len(g.newRows))
				g.newRows = append(g.newRows, int32(i))
			}
			out[i] = g.null
			continue
		}
		slot := g.ints.upsert(v)
		id := g.ints.value(slot)
		if id < 0 {
			id = int32(g.n + len(g.newRows))
			g.ints.set(slot, id)
			g.newRows = append(g.newRows, int32(i))
		}
		out[i] = id
	}
	g.appendGroups(g.newRows)
	return out, nil
}

// hashSlots is the open-addressing table the group table and the hash
// join's table share: a power-of-two array of hash<<32 | (id + 1) words,
// 0 when empty, probed linearly from slotOf(hash). No Go pointers, so the
// collector never scans it.
type hashSlots struct {
	slots []uint64
	shift uint
}

// slotOf is the first slot to probe for hash h (Fibonacci hashing: the
// multiply spreads every bit of h into the index, so the shuffle's key
// groups, which share low bits within a task, still spread).
func (t *hashSlots) slotOf(h uint32) uint32 {
	return uint32((uint64(h) * 0x9E3779B97F4A7C15) >> t.shift)
}

// allocSlots makes size (a power of two) empty slots.
func (t *hashSlots) allocSlots(size int) {
	t.slots = make([]uint64, size)
	bits := uint(0)
	for 1<<bits < size {
		bits++
	}
	t.shift = 64 - bits
}

// growSlots makes room for want groups at most half full, re-inserting
// every word of the old slots, in slot order. A slot is the top bits of
// the multiplied hash (slotOf), so in a table 2^j times larger a word's
// home is its old home times 2^j plus the next j bits: walking the old
// slots in order writes the new ones in order too, a stream instead of
// a cache miss per group (re-inserting by group id was 15% of q97's
// profile).
func (g *groupTable) growSlots(want int) {
	size := len(g.slots)
	for size < 2*want {
		size <<= 1
	}
	old := g.slots
	g.allocSlots(size)
	mask := uint32(size - 1)
	for _, w := range old {
		if w == 0 {
			continue
		}
		p := g.slotOf(uint32(w >> 32))
		for g.slots[p] != 0 {
			p = (p + 1) & mask
		}
		g.slots[p] = w
	}
}

// appendGroups stores rows' keys (from the loaded views) as the next
// groups, in order.
func (g *groupTable) appendGroups(rows []int32) {
	if len(rows) == 0 {
		return
	}
	for c := range g.cols {
		g.cols[c].append(&g.views[c], rows)
	}
	g.n += len(rows)
}

// load points the view at one batch's column: cmp is what equality reads
// (collation keys for a collated column), orig the column itself.
func (v *keyView) load(c *groupKeyCol, cmp, orig arrow.Array, n int) error {
	v.bits, v.off = validity(cmp)
	v.raw, v.bools, v.offs, v.data, v.origOffs, v.orig = nil, nil, nil, nil, nil, nil
	switch c.kind {
	case keyNull:
	case keyBool:
		v.bools = cmp.(*array.Boolean)
	case keyFixed:
		d := cmp.Data()
		if b := d.Buffers()[1]; b != nil && b.Len() >= (d.Offset()+n)*c.w {
			v.raw = b.Bytes()[d.Offset()*c.w : (d.Offset()+n)*c.w]
		} else {
			// No value buffer (all NULL): zeros stand in.
			v.rawBuf = append(v.rawBuf[:0], make([]byte, n*c.w)...)
			v.raw = v.rawBuf
		}
		if c.float {
			v.rawBuf = append(v.rawBuf[:0], v.raw...)
			v.raw = v.rawBuf
			canonicalFloats(v.raw, c.w)
		}
	case keyVar:
		var err error
		if v.offs, v.data, err = v.varOf(cmp, n, false); err != nil {
			return err
		}
		if c.collated {
			if v.origOffs, v.orig, err = v.varOf(expr.Storage(orig), n, true); err != nil {
				return err
			}
		}
	}
	return nil
}

// varOf returns the n+1 32-bit offsets of a string or binary column and
// its bytes, which start at offset offs[0]; types other than String and
// Binary are copied into the view's scratch (offsets from 0). second says
// the scratch is taken already.
func (v *keyView) varOf(a arrow.Array, n int, second bool) ([]int32, []byte, error) {
	switch a := a.(type) {
	case *array.String:
		offs := a.ValueOffsets()[:n+1]
		return offs, a.ValueBytes()[:offs[n]-offs[0]], nil
	case *array.Binary:
		offs := a.ValueOffsets()[:n+1]
		return offs, a.ValueBytes()[:offs[n]-offs[0]], nil
	}
	vb, err := varBytes(a)
	if err != nil {
		return nil, nil, err
	}
	if second {
		// A collated column's strings are always *array.String.
		return nil, nil, errs.New(errs.Internal, "collated key storage of type %s", a.DataType())
	}
	v.offsBuf = append(v.offsBuf[:0], 0)
	v.dataBuf = v.dataBuf[:0]
	for i := 0; i < n; i++ {
		if expr.IsValid(a, i) {
			v.dataBuf = append(v.dataBuf, vb(i)...)
		}
		if len(v.dataBuf) > math.MaxInt32 {
			return nil, nil, errs.New(errs.Resources, "group keys of one batch exceed 2 GiB")
		}
		v.offsBuf = append(v.offsBuf, int32(len(v.dataBuf)))
	}
	return v.offsBuf, v.dataBuf, nil
}

// canonicalFloats rewrites -0 as +0 and every NaN as the one NaN, so
// SQL-equal floats have equal bytes (as hashFloat64 hashes them).
func canonicalFloats(raw []byte, w int) {
	if w == 8 {
		for p := 0; p+8 <= len(raw); p += 8 {
			f := math.Float64frombits(binary.LittleEndian.Uint64(raw[p:]))
			if f == 0 || f != f {
				binary.LittleEndian.PutUint64(raw[p:], math.Float64bits(canonicalFloat(f)))
			}
		}
		return
	}
	for p := 0; p+4 <= len(raw); p += 4 {
		f := math.Float32frombits(binary.LittleEndian.Uint32(raw[p:]))
		if f == 0 || f != f {
			binary.LittleEndian.PutUint32(raw[p:], math.Float32bits(float32(canonicalFloat(float64(f)))))
		}
	}
}

// append stores the key of every row in rows as the next groups. The
// arenas grow by doubling (growArena), and each kind has its own row
// loop.
func (c *groupKeyCol) append(v *keyView, rows []int32) {
	c.valid = growArena(c.valid, len(rows))
	vd := c.valid[len(c.valid) : len(c.valid)+len(rows)]
	c.valid = c.valid[:len(c.valid)+len(rows)]
	if v.bits == nil {
		for i := range vd {
			vd[i] = true
		}
	} else {
		for i, r := range rows {
			ok := v.valid(int(r))
			vd[i] = ok
			if !ok {
				c.nulls++
			}
		}
	}
	switch c.kind {
	case keyBool:
		c.raw = growArena(c.raw, len(rows))
		for _, r := range rows {
			b := byte(0)
			if v.valid(int(r)) && v.bools.Value(int(r)) {
				b = 1
			}
			c.raw = append(c.raw, b)
		}
	case keyFixed:
		c.raw = growArena(c.raw, len(rows)*c.w)
		if c.w == 8 || c.w == 4 {
			c.appendWord(v, rows)
			return
		}
		w := c.w
		z := zeros[:]
		if w > len(z) {
			z = make([]byte, w)
		}
		for _, r := range rows {
			p := int(r) * w
			if v.valid(int(r)) {
				c.raw = append(c.raw, v.raw[p:p+w]...)
			} else {
				c.raw = append(c.raw, z[:w]...)
			}
		}
	case keyVar:
		c.offs = growArena(c.offs, len(rows))
		c.data = appendVar(c.data, &c.offs, v, v.offs, v.data, rows)
		if c.collated {
			c.origOffs = growArena(c.origOffs, len(rows))
			c.orig = appendVar(c.orig, &c.origOffs, v, v.origOffs, v.orig, rows)
		}
	}
}

// appendWord is append for 4- and 8-byte keys (c.raw has room): one
// typed store per row instead of a variable-length append per row, which
// was more than half of the table's time on q97's new groups. A NULL row
// stores zeros.
func (c *groupKeyCol) appendWord(v *keyView, rows []int32) {
	base := len(c.raw)
	c.raw = c.raw[:base+len(rows)*c.w]
	dst := c.raw[base:]
	if c.w == 8 {
		d, s := arrow.Uint64Traits.CastFromBytes(dst), arrow.Uint64Traits.CastFromBytes(v.raw)
		for i, r := range rows {
			d[i] = s[r]
		}
		if v.bits != nil {
			for i, r := range rows {
				if !v.valid(int(r)) {
					d[i] = 0
				}
			}
		}
		return
	}
	d, s := arrow.Uint32Traits.CastFromBytes(dst), arrow.Uint32Traits.CastFromBytes(v.raw)
	for i, r := range rows {
		d[i] = s[r]
	}
	if v.bits != nil {
		for i, r := range rows {
			if !v.valid(int(r)) {
				d[i] = 0
			}
		}
	}
}

// zeros stand in for the value of a NULL fixed-width key.
var zeros [32]byte

// appendVar appends the strings of rows (offsets offs into data, which
// starts at offs[0]) to arena, and their end offsets to *ends; a NULL row
// adds no bytes.
func appendVar(arena []byte, ends *[]int64, v *keyView, offs []int32, data []byte, rows []int32) []byte {
	base := offs[0]
	n := 0
	for _, r := range rows {
		if v.valid(int(r)) {
			n += int(offs[r+1] - offs[r])
		}
	}
	arena = growArena(arena, n)
	e := *ends
	for _, r := range rows {
		if v.valid(int(r)) {
			arena = append(arena, data[offs[r]-base:offs[r+1]-base]...)
		}
		e = append(e, int64(len(arena)))
	}
	*ends = e
	return arena
}

// growArena returns s with room for n more elements, doubling its
// capacity when it must grow. append and slices.Grow add only a quarter
// to a large slice, so an arena that grows with every batch's new groups
// was copied several times over (a third of the group table's time on
// q23a and q67).
func growArena[T any](s []T, n int) []T {
	if cap(s)-len(s) >= n {
		return s
	}
	ns := make([]T, len(s), max(2*cap(s), len(s)+n, 16))
	copy(ns, s)
	return ns
}

// match keeps in cand the rows whose value in this column equals that of
// their candidate group out[r], appending the others to miss. One loop
// per kind, so the row loop holds no type switch.
func (c *groupKeyCol) match(v *keyView, cand []int32, out []int32, miss *[]int32) []int32 {
	keep := cand[:0]
	nulls := v.bits != nil || c.nulls > 0
	if !nulls {
		switch {
		case c.kind == keyFixed && c.w == 8:
			bv, tv := arrow.Uint64Traits.CastFromBytes(v.raw), arrow.Uint64Traits.CastFromBytes(c.raw)
			for _, r := range cand {
				if bv[r] == tv[out[r]] {
					keep = append(keep, r)
				} else {
					*miss = append(*miss, r)
				}
			}
			return keep
		case c.kind == keyFixed && c.w == 4:
			bv, tv := arrow.Uint32Traits.CastFromBytes(v.raw), arrow.Uint32Traits.CastFromBytes(c.raw)
			for _, r := range cand {
				if bv[r] == tv[out[r]] {
					keep = append(keep, r)
				} else {
					*miss = append(*miss, r)
				}
			}
			return keep
		case c.kind == keyVar:
			base := v.offs[0]
			for _, r := range cand {
				g := out[r]
				if string(v.data[v.offs[r]-base:v.offs[r+1]-base]) == string(c.data[c.offs[g]:c.offs[g+1]]) {
					keep = append(keep, r)
				} else {
					*miss = append(*miss, r)
				}
			}
			return keep
		}
	}
	for _, r := range cand {
		g := int(out[r])
		if nulls {
			rv, gv := v.valid(int(r)), c.valid[g]
			if rv != gv {
				*miss = append(*miss, r)
				continue
			}
			if !rv {
				keep = append(keep, r)
				continue
			}
		}
		var eq bool
		switch c.kind {
		case keyNull:
			eq = true
		case keyBool:
			eq = v.bools.Value(int(r)) == (c.raw[g] == 1)
		case keyFixed:
			eq = fixedEqual(v.raw, c.raw, int(r), g, c.w)
		case keyVar:
			base := v.offs[0]
			eq = bytes.Equal(v.data[v.offs[r]-base:v.offs[r+1]-base], c.data[c.offs[g]:c.offs[g+1]])
		}
		if eq {
			keep = append(keep, r)
		} else {
			*miss = append(*miss, r)
		}
	}
	return keep
}

// fixedEqual compares value r of a batch with value g of the table, both
// w bytes wide.
func fixedEqual(batch, table []byte, r, g, w int) bool {
	a, b := batch[r*w:r*w+w], table[g*w:g*w+w]
	switch w {
	case 4:
		return binary.LittleEndian.Uint32(a) == binary.LittleEndian.Uint32(b)
	case 8:
		return binary.LittleEndian.Uint64(a) == binary.LittleEndian.Uint64(b)
	case 16:
		return binary.LittleEndian.Uint64(a) == binary.LittleEndian.Uint64(b) &&
			binary.LittleEndian.Uint64(a[8:]) == binary.LittleEndian.Uint64(b[8:])
	}
	return bytes.Equal(a, b)
}

// arrays returns the key columns of all groups.
func (g *groupTable) arrays(alloc memory.Allocator) ([]arrow.Array, error) {
	out := make([]arrow.Array, 0, len(g.cols))
	for i := range g.cols {
		c := &g.cols[i]
		var a arrow.Array
		var err error
		switch c.kind {
		case keyNull:
			a = array.MakeArrayOfNull(alloc, c.dt, g.n)
		case keyBool:
			vals := make([]bool, len(c.raw))
			for i, v := range c.raw {
				vals[i] = v == 1
			}
			a = boolArray(alloc, vals, c.valid)
		case keyFixed:
			a = fixedFromBytes(alloc, c.dt, c.raw, len(c.valid), c.valid)
		case keyVar:
			if c.collated {
				var s arrow.Array
				s, err = varArray(alloc, arrow.BinaryTypes.String, c.origOffs, c.orig, c.valid)
				if err == nil {
					a = expr.Collated(c.dt, s)
				}
			} else {
				a, err = varArray(alloc, c.dt, c.offs, c.data, c.valid)
			}
		}
		if err != nil {
			releaseArrays(out)
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// varArray builds a string or binary array of type dt from an arena:
// value i is data[offs[i]:offs[i+1]], NULL where !valid[i].
func varArray(alloc memory.Allocator, dt arrow.DataType, offs []int64, data []byte, valid []bool) (arrow.Array, error) {
	n := len(valid)
	var ob *memory.Buffer
	switch dt.ID() {
	case arrow.STRING, arrow.BINARY:
		if offs[n] > math.MaxInt32 {
			return nil, errs.New(errs.Resources, "group keys of type %s hold %d bytes, more than one array can (2 GiB)", dt, offs[n])
		}
		ob = mempool.Buffer(alloc, 4*(n+1)) // every offset is written
		o := arrow.Int32Traits.CastFromBytes(ob.Bytes())
		for i, v := range offs[:n+1] {
			o[i] = int32(v)
		}
	case arrow.LARGE_STRING, arrow.LARGE_BINARY:
		ob = mempool.Buffer(alloc, 8*(n+1))
		copy(arrow.Int64Traits.CastFromBytes(ob.Bytes()), offs[:n+1])
	default:
		vals := make([]string, n)
		for i := range vals {
			vals[i] = string(data[offs[i]:offs[i+1]])
		}
		return stringArray(alloc, dt, vals, valid)
	}
	db := mempool.Buffer(alloc, len(data))
	copy(db.Bytes(), data)
	nulls := 0
	var nb *memory.Buffer
	if slices.Contains(valid, false) {
		nb = mempool.Buffer(alloc, int(bitutil.BytesForBits(int64(n))))
		bits := nb.Bytes()
		clear(bits)
		for i, v := range valid {
			if v {
				bitutil.SetBit(bits, i)
			} else {
				nulls++
			}
		}
	}
	d := array.NewData(dt, n, []*memory.Buffer{nb, ob, db}, nil, nulls, 0)
	a := array.MakeFromData(d)
	d.Release()
	ob.Release()
	db.Release()
	if nb != nil {
		nb.Release()
	}
	return a, nil
}

// presize makes room for groups groups at once: slots that hold them at
// most half full, and key arenas of that capacity (strings: their
// offsets). One integer key keeps its own table, which grows as before.
func (g *groupTable) presize(groups int) {
	if len(g.types) == 0 || g.intKey {
		return
	}
	if len(g.slots) < 2*groups {
		g.growSlots(groups)
	}
	if g.pk != nil {
		g.pk.keys = growCap(g.pk.keys, groups)
	}
	for i := range g.cols {
		c := &g.cols[i]
		c.valid = growCap(c.valid, groups)
		switch c.kind {
		case keyBool:
			c.raw = growCap(c.raw, groups)
		case keyFixed:
			c.raw = growCap(c.raw, groups*c.w)
		case keyVar:
			c.offs = growCap(c.offs, groups+1)
			c.data = growCap(c.data, g.varBytes(len(c.data), groups))
			if c.collated {
				c.origOffs = growCap(c.origOffs, groups+1)
				c.orig = growCap(c.orig, g.varBytes(len(c.orig), groups))
			}
		}
	}
}

// varBytes is the bytes groups groups of a string key would hold at the
// average of the groups so far, which hold used bytes.
func (g *groupTable) varBytes(used, groups int) int {
	if g.n == 0 {
		return used
	}
	return int(int64(used) * int64(groups) / int64(g.n))
}

// sizedBytes is what bytes would say after presize(groups), for the
// reservation to be taken first.
func (g *groupTable) sizedBytes(groups int) int64 {
	if len(g.types) == 0 || g.intKey {
		return g.bytes()
	}
	size := max(len(g.slots), 16)
	for size < 2*groups {
		size <<= 1
	}
	n := int64(size) * 8
	if g.pk != nil {
		n += int64(max(cap(g.pk.keys), groups)) * 8
	}
	for i := range g.cols {
		c := &g.cols[i]
		per := int64(1) // validity
		switch c.kind {
		case keyBool:
			per++
		case keyFixed:
			per += int64(c.w)
		case keyVar:
			per += 8
			n += int64(max(cap(c.data), g.varBytes(len(c.data), groups)))
			if c.collated {
				per += 8
				n += int64(max(cap(c.orig), g.varBytes(len(c.orig), groups)))
			}
		}
		n += per * int64(groups)
	}
	return n
}

// growCap returns s with capacity for n elements in all.
func growCap[T any](s []T, n int) []T {
	return slices.Grow(s, max(n-len(s), 0))
}
