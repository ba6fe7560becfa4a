package exec

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
)

// joinTable indexes the build rows of a hash join by a key of several
// columns, or of one column that is not an integer (one integer key takes
// the intTable in hash_join.go). It is the group table's design
// (group_table.go) without a copy of the keys:
//
//   - keys are hashed column by column a batch at a time (hashTableKeys);
//   - hashSlots holds one (hash, row) word per distinct key, the head of
//     the chain of build rows with that key (next[row] is the next, rows
//     in ascending order);
//   - on a hash match the probe row's key is compared, column by column
//     (groupKeyCol.match), with the head row's key in the build key
//     arrays themselves: fixed-width values and string bytes are read in
//     place, and only float columns (canonical -0 and NaN), booleans and
//     string offsets are converted.
//
// A NULL in a key matches nothing, unless that key is null-safe (<=>),
// where NULL equals NULL; -0.0 equals 0.0, NaN equals NaN, and strings
// with an explicit collation are equal when their collation keys are.
//
// Once built the table is only read: lookups keep their scratch in a
// joinProbe of their own.
type joinTable struct {
	hashSlots
	cols     []groupKeyCol
	nullSafe []bool
	// keys are the arrays cols read (collation keys for collated
	// columns), held until release; owned counts what of them, and of
	// the columns' conversions, the table allocated itself.
	keys    []arrow.Array
	owned   int64
	nullKey bool // a build row has a NULL in a key that is not null-safe
}

// joinProbe is one reader's scratch for a joinTable, kept from batch to
// batch.
type joinProbe struct {
	views           []keyView
	null            []bool
	hbuf, hcol, pos []uint32
	sel, cand, miss []int32
	out             []int32
	sink            uint64 // touchSlots's result, unused
}

// joinBuildRun is how many build rows are hashed and inserted at a time,
// so the scratch stays one batch's worth whatever the build side's size.
const joinBuildRun = BatchSize

// newJoinTable indexes the n rows of the build key arrays keys (the
// caller keeps its references) and writes the chains into next (n
// entries): next[r] is the next row after r with r's key, -1 after the
// last and for rows with a NULL key. nullSafe, nil or one flag per key,
// says which keys match NULL with NULL.
func newJoinTable(keys []arrow.Array, n int, nullSafe []bool, next []int32) (*joinTable, error) {
	t := &joinTable{nullSafe: nullSafe}
	cmp, release := collationKeys(keys)
	defer release()
	for i, a := range cmp {
		a.Retain()
		t.keys = append(t.keys, a)
		if a != keys[i] {
			t.owned += ArrayBytes(a)
		}
	}
	t.cols = make([]groupKeyCol, len(cmp))
	for i, a := range cmp {
		t.cols[i] = newKeyCol(a.DataType())
		var v keyView
		if err := v.load(&t.cols[i], a, a, n); err != nil {
			t.release()
			return nil, err
		}
		t.owned += t.cols[i].adopt(&v, n, t.safe(i))
	}
	size := 16
	for size < 2*n {
		size <<= 1
	}
	t.allocSlots(size)
	var p joinProbe
	part := make([]arrow.Array, len(cmp))
	for hi := n; hi > 0; {
		lo := max(hi-joinBuildRun, 0)
		for i, a := range cmp {
			part[i] = array.NewSlice(a, int64(lo), int64(hi))
		}
		if err := p.load(t, part, hi-lo); err != nil {
			releaseArrays(part)
			t.release()
			return nil, err
		}
		// Rows from last to first, so every chain ends up ascending.
		p.sel = p.sel[:0]
		for r := hi - lo - 1; r >= 0; r-- {
			if p.null[r] {
				t.nullKey = true
				next[lo+r] = -1
				continue
			}
			p.sel = append(p.sel, int32(r))
		}
		t.insert(&p, lo, next)
		releaseArrays(part)
		hi = lo
	}
	return t, nil
}

func (t *joinTable) safe(i int) bool { return t.nullSafe != nil && t.nullSafe[i] }

// adopt makes the column the n rows of a loaded view, reading its memory
// in place, and returns the bytes it allocated for conversions. A key
// that is not null-safe keeps no validity: its NULL rows never reach a
// comparison.
func (c *groupKeyCol) adopt(v *keyView, n int, nullSafe bool) int64 {
	var owned int64
	if nullSafe {
		c.valid = make([]bool, n)
		for i := range c.valid {
			c.valid[i] = v.valid(i)
			if !c.valid[i] {
				c.nulls++
			}
		}
		owned += int64(n)
	}
	switch c.kind {
	case keyBool:
		c.raw = make([]byte, n)
		for i := range c.raw {
			if v.valid(i) && v.bools.Value(i) {
				c.raw[i] = 1
			}
		}
		owned += int64(n)
	case keyFixed:
		c.raw = v.raw
		if v.rawBuf != nil {
			// Canonical floats, or zeros for an all-NULL column.
			owned += int64(cap(v.rawBuf))
		}
	case keyVar:
		base := v.offs[0]
		c.offs = make([]int64, n+1)
		for i := range c.offs {
			c.offs[i] = int64(v.offs[i] - base)
		}
		c.data = v.data
		owned += int64(8 * (n + 1))
		if v.dataBuf != nil {
			owned += int64(cap(v.dataBuf))
		}
	}
	return owned
}

// load points the probe's views at key columns cmp of m rows (collation
// keys already), hashes them into hbuf and marks in null the rows with a
// NULL in a key that is not null-safe.
func (p *joinProbe) load(t *joinTable, cmp []arrow.Array, m int) error {
	if len(p.views) != len(cmp) {
		p.views = make([]keyView, len(cmp))
	}
	p.null = growSlice(p.null[:0], m)[:m]
	clear(p.null)
	for c := range cmp {
		v := &p.views[c]
		if err := v.load(&t.cols[c], cmp[c], cmp[c], m); err != nil {
			return err
		}
		if v.bits != nil && !t.safe(c) {
			for r := 0; r < m; r++ {
				if !bitutil.BitIsSet(v.bits, v.off+r) {
					p.null[r] = true
				}
			}
			// The rows left to compare are valid here.
			v.bits = nil
		}
	}
	p.hbuf = growSlice(p.hbuf[:0], m)[:m]
	p.hcol = growSlice(p.hcol[:0], m)[:m]
	p.pos = growSlice(p.pos[:0], m)[:m]
	p.out = growSlice(p.out[:0], m)[:m]
	hashTableKeys(cmp, p.hbuf, p.hcol)
	return nil
}

// insert adds the loaded rows p.sel (run positions; row lo+r of the
// build side) to the table: a row whose key is there becomes its chain's
// head, any other takes an empty slot.
func (t *joinTable) insert(p *joinProbe, lo int, next []int32) {
	for _, r := range p.sel {
		p.pos[r] = t.slotOf(p.hbuf[r])
	}
	p.sink = touchSlots(t.slots, p.sel, p.pos)
	mask := uint32(len(t.slots) - 1)
	for len(p.sel) > 0 {
		p.cand = p.cand[:0]
		for _, r := range p.sel {
			h, q := p.hbuf[r], p.pos[r]
			for {
				s := t.slots[q]
				if s == 0 {
					t.slots[q] = uint64(h)<<32 | uint64(lo+int(r)+1)
					next[lo+int(r)] = -1
					break
				}
				if uint32(s>>32) == h {
					p.out[r] = int32(uint32(s)) - 1
					p.cand = append(p.cand, r)
					break
				}
				q = (q + 1) & mask
			}
			p.pos[r] = q
		}
		t.match(p)
		for _, r := range p.cand {
			// Rows of one key come in descending order: each goes in
			// front of the chain as it stands now.
			q := p.pos[r]
			s := t.slots[q]
			next[lo+int(r)] = int32(uint32(s)) - 1
			t.slots[q] = s&^0xffffffff | uint64(lo+int(r)+1)
		}
		for _, r := range p.miss {
			p.pos[r] = (p.pos[r] + 1) & mask
		}
		p.sel = append(p.sel[:0], p.miss...)
	}
}

// match keeps in p.cand the rows whose key equals that of build row
// p.out[r], and puts the others in p.miss. Rows are positions in the
// loaded views (a probe batch, or a run of the build side); p.out holds
// rows of the whole build side.
func (t *joinTable) match(p *joinProbe) {
	p.miss = p.miss[:0]
	for c := range t.cols {
		if len(p.cand) == 0 {
			break
		}
		p.cand = t.cols[c].match(&p.views[c], p.cand, p.out, &p.miss)
	}
}

// lookup sets heads[r] to the first build row whose key equals probe row
// r's, -1 when none, and null[r] (from p.null) when the row's key holds a
// NULL that matches nothing. keys are the probe key columns of n rows.
func (t *joinTable) lookup(p *joinProbe, keys []arrow.Array, n int, heads []int32, null []bool) error {
	cmp, release := collationKeys(keys)
	defer release()
	if err := p.load(t, cmp, n); err != nil {
		return err
	}
	copy(null, p.null)
	for lo := 0; lo < n; lo += touchRun {
		t.lookupRun(p, lo, min(lo+touchRun, n), heads)
	}
	return nil
}

// touchRun is how many rows touchSlots reads ahead of the loop over
// them: the slots' cache lines (64 bytes each) must still be in the L2
// cache when the loop gets to them, next to the batch's keys and hashes.
const touchRun = 2048

// lookupRun is lookup's probe of the loaded rows [lo, hi).
func (t *joinTable) lookupRun(p *joinProbe, lo, hi int, heads []int32) {
	p.sel = p.sel[:0]
	for r := lo; r < hi; r++ {
		heads[r] = -1
		if !p.null[r] {
			p.pos[r] = t.slotOf(p.hbuf[r])
			p.sel = append(p.sel, int32(r))
		}
	}
	p.sink = touchSlots(t.slots, p.sel, p.pos)
	mask := uint32(len(t.slots) - 1)
	for len(p.sel) > 0 {
		p.cand = p.cand[:0]
		for _, r := range p.sel {
			h, q := p.hbuf[r], p.pos[r]
			for {
				s := t.slots[q]
				if s == 0 {
					break
				}
				if uint32(s>>32) == h {
					p.out[r] = int32(uint32(s)) - 1
					p.cand = append(p.cand, r)
					break
				}
				q = (q + 1) & mask
			}
			p.pos[r] = q
		}
		t.match(p)
		for _, r := range p.cand {
			heads[r] = p.out[r]
		}
		for _, r := range p.miss {
			p.pos[r] = (p.pos[r] + 1) & mask
		}
		p.sel = append(p.sel[:0], p.miss...)
	}
}

// touchSlots reads the first slot of every row in sel before the probe
// or insert loop looks at any: the loads depend neither on one another
// nor on a branch, so the processor keeps many cache misses in flight at
// once, where the loop, branching on each slot it reads, waits for them
// nearly one by one (Go has no prefetch instruction to ask for them). A
// table past the L2 cache (q78's store_returns: 1M slots, 8 MiB) misses
// on almost every row; one that fits is left alone. The result only
// keeps the loads from being optimised away.
func touchSlots(slots []uint64, sel []int32, pos []uint32) uint64 {
	if len(slots) < touchMinSlots {
		return 0
	}
	var x uint64
	for _, r := range sel {
		x |= slots[pos[r]]
	}
	return x
}

// bytes is what the table holds beyond the build rows: its slots, and the
// key arrays and conversions it made. The caller counts the chains
// (next) and key arrays evaluated apart from the build columns.
func (t *joinTable) bytes() int64 { return int64(cap(t.slots))*8 + t.owned }

// release drops the table's references to the key arrays.
func (t *joinTable) release() {
	releaseArrays(t.keys)
	t.keys, t.cols, t.slots = nil, nil, nil
}

// keyNulls sets null[r] for the n rows whose key holds a NULL in a key
// that is not null-safe (such a row matches nothing).
func keyNulls(keys []arrow.Array, nullSafe []bool, n int, null []bool) {
	clear(null[:n])
	for c, a := range keys {
		if nullSafe != nil && nullSafe[c] {
			continue
		}
		bits, off := validity(a)
		if bits == nil {
			continue
		}
		for r := 0; r < n; r++ {
			if !bitutil.BitIsSet(bits, off+r) {
				null[r] = true
			}
		}
	}
}
