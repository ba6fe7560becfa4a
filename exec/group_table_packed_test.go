package exec

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// intCol is an integer key column of type dt holding vals, NULL where
// null[i] (null may be nil), sliced at an offset as exchanges hand them.
func intCol(dt arrow.DataType, vals []int64, null []bool) arrow.Array {
	const lead = 3
	n := len(vals) + lead
	valid := make([]bool, n)
	raw := make([]int64, n)
	for i := range valid {
		valid[i] = i < lead || null == nil || !null[i-lead]
		if i >= lead {
			raw[i] = vals[i-lead]
		}
	}
	var whole arrow.Array
	unsigned := dt.ID() == arrow.UINT8 || dt.ID() == arrow.UINT16 || dt.ID() == arrow.UINT32
	switch w := fixedWidth(dt); {
	case w == 1 && unsigned:
		whole = fixedArray(memory.DefaultAllocator, dt, convert[uint8](raw), valid)
	case w == 1:
		whole = fixedArray(memory.DefaultAllocator, dt, convert[int8](raw), valid)
	case w == 2 && unsigned:
		whole = fixedArray(memory.DefaultAllocator, dt, convert[uint16](raw), valid)
	case w == 2:
		whole = fixedArray(memory.DefaultAllocator, dt, convert[int16](raw), valid)
	case w == 4 && unsigned:
		whole = fixedArray(memory.DefaultAllocator, dt, convert[uint32](raw), valid)
	case w == 4:
		whole = fixedArray(memory.DefaultAllocator, dt, convert[int32](raw), valid)
	default:
		whole = fixedArray(memory.DefaultAllocator, dt, raw, valid)
	}
	defer whole.Release()
	return array.NewSlice(whole, lead, int64(n))
}

func convert[T intValue](vals []int64) []T {
	out := make([]T, len(vals))
	for i, v := range vals {
		out[i] = T(v)
	}
	return out
}

// refGroups is the test's own grouping: a map from each key tuple, as
// text, to the id the table gave its first row.
type refGroups struct {
	ids  map[string]int32
	keys map[int32]string
}

func newRefGroups() *refGroups {
	return &refGroups{ids: map[string]int32{}, keys: map[int32]string{}}
}

// tupleKeys is every row's key tuple as text, NULL as "N".
func tupleKeys(cols []arrow.Array) []string {
	vals := make([][]int64, len(cols))
	for c, a := range cols {
		vals[c] = intKeys(a, nil)
	}
	out := make([]string, cols[0].Len())
	for i := range out {
		var sb strings.Builder
		for c, a := range cols {
			if a.IsNull(i) {
				sb.WriteString("N|")
			} else {
				fmt.Fprintf(&sb, "%d|", vals[c][i])
			}
		}
		out[i] = sb.String()
	}
	return out
}

// check feeds one batch to g and compares its ids with the reference:
// one id per key tuple, a new id for every new tuple.
func (r *refGroups) check(t *testing.T, g *groupTable, cols []arrow.Array) {
	t.Helper()
	n := cols[0].Len()
	ids, err := g.ids(cols, n, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range tupleKeys(cols) {
		want, ok := r.ids[k]
		if !ok {
			if other, taken := r.keys[ids[i]]; taken {
				t.Fatalf("row %d: new key %s got group %d, which %s has", i, k, ids[i], other)
			}
			r.ids[k], r.keys[ids[i]] = ids[i], k
			continue
		}
		if ids[i] != want {
			t.Fatalf("row %d: key %s got group %d, want %d", i, k, ids[i], want)
		}
	}
	if g.n != len(r.ids) {
		t.Fatalf("%d groups, want %d", g.n, len(r.ids))
	}
}

// checkKeys compares the table's key arrays with the reference.
func (r *refGroups) checkKeys(t *testing.T, g *groupTable) {
	t.Helper()
	out, err := g.arrays(memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	defer releaseArrays(out)
	got := tupleKeys(out)
	for id, k := range r.keys {
		if got[id] != k {
			t.Fatalf("group %d: key arrays say %s, want %s", id, got[id], k)
		}
	}
}

// randIn is a random value in [lo, hi].
func randIn(r *rand.Rand, lo, hi int64) int64 {
	span := uint64(hi) - uint64(lo) + 1
	if span == 0 {
		return int64(r.Uint64())
	}
	return int64(uint64(lo) + r.Uint64()%span)
}

// generalTable is a table on the hashed path from the start.
func generalTable(t *testing.T, types []arrow.DataType) *groupTable {
	g := newGroupTable(types)
	if err := g.unpack(); err != nil {
		t.Fatal(err)
	}
	return g
}

// TestGroupTablePackedRandom: random integer key sets, with NULLs,
// negative values, the types' extremes and now and then a batch of
// values far from the first batch's, through the packed and the hashed
// path alike.
func TestGroupTablePackedRandom(t *testing.T) {
	types := []arrow.DataType{
		arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Uint8, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Uint16,
		arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Uint32, arrow.PrimitiveTypes.Int64,
		arrow.FixedWidthTypes.Date32, arrow.FixedWidthTypes.Timestamp_us,
	}
	migrated, stayed, wide, narrow := 0, 0, 0, 0
	for seed := int64(0); seed < 60; seed++ {
		r := rand.New(rand.NewSource(seed))
		ncols := 2 + r.Intn(3)
		ts := make([]arrow.DataType, ncols)
		for c := range ts {
			ts[c] = types[r.Intn(len(types))]
		}
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			packed, general := newGroupTable(ts), generalTable(t, ts)
			if packed.pk == nil {
				t.Fatal("integer keys are not on the packed path")
			}
			refP, refG := newRefGroups(), newRefGroups()
			card := []int64{3, 40, 1000}[r.Intn(3)]
			for b := 0; b < 8; b++ {
				rows := 1 + r.Intn(600)
				far := b > 0 && r.Intn(6) == 0
				cols := make([]arrow.Array, ncols)
				for c, dt := range ts {
					lo, hi := intDomain(dt)
					vals, null := make([]int64, rows), make([]bool, rows)
					for i := range vals {
						switch {
						case r.Intn(6) == 0:
							null[i] = true
						case r.Intn(50) == 0:
							vals[i] = []int64{lo, hi, lo + 1, hi - 1}[r.Intn(4)]
						case far:
							vals[i] = randIn(r, lo, hi)
						default:
							vals[i] = r.Int63n(2*card+1) - card
							if lo == 0 {
								vals[i] += card
							}
						}
					}
					cols[c] = intCol(dt, vals, null)
				}
				refP.check(t, packed, cols)
				refG.check(t, general, cols)
				if b == 0 && packed.pk != nil {
					if packed.pk.wide {
						wide++
					} else {
						narrow++
					}
				}
				if b == 1 && r.Intn(2) == 0 && packed.pk != nil {
					want := packed.n * 3
					need := packed.sizedBytes(want)
					packed.presize(want)
					table := int64(len(packed.slots)+cap(packed.pk.keys)) * 8
					if len(packed.slots) < 2*want || cap(packed.pk.keys) < want || need < table {
						t.Fatalf("presize(%d): %d slots, room for %d keys, sizedBytes said %d for %d bytes of them",
							want, len(packed.slots), cap(packed.pk.keys), need, table)
					}
				}
				releaseArrays(cols)
			}
			refP.checkKeys(t, packed)
			refG.checkKeys(t, general)
			if len(refP.ids) != len(refG.ids) {
				t.Fatalf("packed path: %d groups, hashed path: %d", len(refP.ids), len(refG.ids))
			}
			for k := range refG.ids {
				if _, ok := refP.ids[k]; !ok {
					t.Fatalf("key %s: a group on the hashed path only", k)
				}
			}
			if packed.pk == nil {
				migrated++
			} else {
				stayed++
			}
		})
	}
	if migrated == 0 || stayed == 0 || wide == 0 || narrow == 0 {
		t.Fatalf("%d tables moved to the hashed path, %d stayed packed, %d packed into 64 bits, %d into 32: each must be tested",
			migrated, stayed, wide, narrow)
	}
}

// TestGroupTablePackedWindowEdges: after the first batch lays out the
// fields, values at both ends of a window stay packed, one step beyond
// either end moves the table to the hashed path, keeping every group.
func TestGroupTablePackedWindowEdges(t *testing.T) {
	types := []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int32}
	for _, top := range []int64{1000, 1 << 26} {
		for _, side := range []string{"below", "above"} {
			for _, col := range []int{0, 1} {
				t.Run(fmt.Sprintf("up to %d, %s column %d", top, side, col), func(t *testing.T) {
					windowEdges(t, types, top, side, col)
				})
			}
		}
	}
}

// windowEdges lays out the fields with a first batch of values from -5
// to top in column 0 and from 1 to 4 in column 1 (a top of 1000 packs
// into 32 bits, 1<<26 into 64).
func windowEdges(t *testing.T, types []arrow.DataType, top int64, side string, col int) {
	g, ref := newGroupTable(types), newRefGroups()
	first := []arrow.Array{
		intCol(types[0], []int64{-5, 0, 7, top, -5}, []bool{false, false, true, false, false}),
		intCol(types[1], []int64{1, 2, 3, 4, 1}, nil),
	}
	ref.check(t, g, first)
	releaseArrays(first)
	if g.pk == nil {
		t.Fatal("the first batch left the packed path")
	}
	if g.pk.wide != (top > 1000) {
		t.Fatalf("values up to %d packed wide: %v", top, g.pk.wide)
	}
	edges := make([][]int64, 2)
	for c, f := range g.pk.cols {
		lo, hi := f.base, int64(uint64(f.base)+f.lim-1)
		edges[c] = []int64{lo, hi, lo + 1, hi - 1}
	}
	// Every pair of edges, and each edge with NULL.
	var a, b []int64
	var an, bn []bool
	for i, x := range edges[0] {
		for j, y := range edges[1] {
			a, b = append(a, x), append(b, y)
			an, bn = append(an, false), append(bn, i == j)
		}
		a, b = append(a, x), append(b, 0)
		an, bn = append(an, true), append(bn, false)
	}
	fit := []arrow.Array{intCol(types[0], a, an), intCol(types[1], b, bn)}
	ref.check(t, g, fit)
	ref.check(t, g, fit) // again: every key found
	releaseArrays(fit)
	if g.pk == nil {
		t.Fatal("values at the windows' edges left the packed path")
	}
	before := g.n
	out := edges[col][0] - 1
	if side == "above" {
		out = edges[col][1] + 1
	}
	vals := [][]int64{{-5, top, 3}, {1, 4, 2}}
	vals[col] = append(vals[col][:2], out)
	beyond := []arrow.Array{intCol(types[0], vals[0], nil), intCol(types[1], vals[1], nil)}
	ref.check(t, g, beyond)
	releaseArrays(beyond)
	if g.pk != nil {
		t.Fatalf("value %d beyond column %d's window stayed packed", out, col)
	}
	if g.n != before+1 {
		t.Fatalf("%d groups after the move, want %d", g.n, before+1)
	}
	// The hashed path finds the groups made before the move.
	again := []arrow.Array{
		intCol(types[0], append(a, math.MinInt64, math.MaxInt64), append(an, false, false)),
		intCol(types[1], append(b, math.MinInt32, math.MaxInt32), append(bn, false, false)),
	}
	ref.check(t, g, again)
	releaseArrays(again)
	ref.checkKeys(t, g)
}

// TestGroupTablePackedLayout: narrow types whose whole ranges fit 32
// bits get them, so their extremes never leave the packed path; keys whose first
// batch spans more than 64 bits are never packed; an all-NULL first
// batch still packs.
func TestGroupTablePackedLayout(t *testing.T) {
	narrow := []arrow.DataType{arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Uint8, arrow.PrimitiveTypes.Int8}
	g, ref := newGroupTable(narrow), newRefGroups()
	small := make([]arrow.Array, len(narrow))
	for c, dt := range narrow {
		small[c] = intCol(dt, []int64{1, 2}, nil)
	}
	ref.check(t, g, small)
	releaseArrays(small)
	ext := make([]arrow.Array, len(narrow))
	for c, dt := range narrow {
		lo, hi := intDomain(dt)
		ext[c] = intCol(dt, []int64{lo, hi, lo, 0, hi}, []bool{false, false, false, true, false})
	}
	ref.check(t, g, ext)
	releaseArrays(ext)
	if g.pk == nil {
		t.Fatal("extremes of narrow types left the packed path")
	}
	ref.checkKeys(t, g)

	wide := []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int64}
	g, ref = newGroupTable(wide), newRefGroups()
	cols := []arrow.Array{intCol(wide[0], []int64{0, 1 << 40}, nil), intCol(wide[1], []int64{-1 << 30, 1 << 30}, nil)}
	ref.check(t, g, cols)
	releaseArrays(cols)
	if g.pk != nil {
		t.Fatal("keys of 41 and 32 bits were packed into 64")
	}
	ref.checkKeys(t, g)

	g, ref = newGroupTable(wide), newRefGroups()
	cols = []arrow.Array{intCol(wide[0], []int64{0, 0}, []bool{true, true}), intCol(wide[1], []int64{7, 7}, nil)}
	ref.check(t, g, cols)
	releaseArrays(cols)
	cols = []arrow.Array{intCol(wide[0], []int64{0, 1234, 0}, []bool{true, false, false}), intCol(wide[1], []int64{7, 8, 7}, nil)}
	ref.check(t, g, cols)
	releaseArrays(cols)
	if g.pk == nil {
		t.Fatal("values near an all-NULL first batch left the packed path")
	}
	ref.checkKeys(t, g)
}
