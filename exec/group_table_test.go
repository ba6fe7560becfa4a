package exec

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/exec/expr"
)

// keyGen makes one key column of n rows for a group table test.
type keyGen struct {
	dt  arrow.DataType
	gen func(r *rand.Rand, n int) arrow.Array
}

func nullEvery(r *rand.Rand) bool { return r.Intn(5) == 0 }

func int32Keys(card int) keyGen {
	return keyGen{arrow.PrimitiveTypes.Int32, func(r *rand.Rand, n int) arrow.Array {
		b := array.NewInt32Builder(memory.DefaultAllocator)
		defer b.Release()
		for i := 0; i < n; i++ {
			if nullEvery(r) {
				b.AppendNull()
			} else {
				b.Append(int32(r.Intn(card)))
			}
		}
		return b.NewArray()
	}}
}

func int64Keys(card int, nulls bool) keyGen {
	return keyGen{arrow.PrimitiveTypes.Int64, func(r *rand.Rand, n int) arrow.Array {
		b := array.NewInt64Builder(memory.DefaultAllocator)
		defer b.Release()
		for i := 0; i < n; i++ {
			if nulls && nullEvery(r) {
				b.AppendNull()
			} else {
				b.Append(int64(r.Intn(card)))
			}
		}
		return b.NewArray()
	}}
}

// stringKeys includes the empty string, which must not group with NULL.
func stringKeys(dt arrow.DataType, card int) keyGen {
	return keyGen{dt, func(r *rand.Rand, n int) arrow.Array {
		b := array.NewBuilder(memory.DefaultAllocator, dt)
		defer b.Release()
		for i := 0; i < n; i++ {
			v := ""
			if k := r.Intn(card); k > 0 {
				v = fmt.Sprintf("s%d", k)
			}
			switch bb := b.(type) {
			case *array.StringBuilder:
				if nullEvery(r) {
					bb.AppendNull()
				} else {
					bb.Append(v)
				}
			case *array.LargeStringBuilder:
				if nullEvery(r) {
					bb.AppendNull()
				} else {
					bb.Append(v)
				}
			case *array.BinaryBuilder:
				if nullEvery(r) {
					bb.AppendNull()
				} else {
					bb.AppendString(v)
				}
			case *array.StringViewBuilder:
				if nullEvery(r) {
					bb.AppendNull()
				} else {
					bb.Append(v + "-a-string-longer-than-twelve")
				}
			}
		}
		return b.NewArray()
	}}
}

// floatKeys mixes -0, 0, NaNs with different payloads and NULL.
func floatKeys(dt arrow.DataType) keyGen {
	specials := []float64{0, math.Copysign(0, -1), math.NaN(), math.Float64frombits(0x7ff8000000000001), -math.NaN(), 1.5, -2.25, math.Inf(1)}
	return keyGen{dt, func(r *rand.Rand, n int) arrow.Array {
		b := array.NewBuilder(memory.DefaultAllocator, dt)
		defer b.Release()
		for i := 0; i < n; i++ {
			v := specials[r.Intn(len(specials))]
			switch bb := b.(type) {
			case *array.Float64Builder:
				if nullEvery(r) {
					bb.AppendNull()
				} else {
					bb.Append(v)
				}
			case *array.Float32Builder:
				if nullEvery(r) {
					bb.AppendNull()
				} else {
					bb.Append(float32(v))
				}
			}
		}
		return b.NewArray()
	}}
}

func collatedKeys(t *testing.T) keyGen {
	c, err := expr.LookupCollation("utf8mb4_general_ci")
	if err != nil {
		t.Fatal(err)
	}
	vals := []string{"a", "A", "A ", "Á", "b", "B", ""}
	return keyGen{c.Type(), func(r *rand.Rand, n int) arrow.Array {
		b := array.NewStringBuilder(memory.DefaultAllocator)
		for i := 0; i < n; i++ {
			if nullEvery(r) {
				b.AppendNull()
			} else {
				b.Append(vals[r.Intn(len(vals))])
			}
		}
		s := b.NewArray()
		b.Release()
		return expr.Collated(c.Type(), s)
	}}
}

// wideDecimalKeys need both 64-bit halves.
func wideDecimalKeys() keyGen {
	dt := &arrow.Decimal128Type{Precision: 38, Scale: 2}
	return keyGen{dt, func(r *rand.Rand, n int) arrow.Array {
		b := array.NewDecimal128Builder(memory.DefaultAllocator, dt)
		defer b.Release()
		for i := 0; i < n; i++ {
			if nullEvery(r) {
				b.AppendNull()
				continue
			}
			b.Append(decimal128.New(int64(r.Intn(3))-1, uint64(r.Intn(4))<<62|uint64(r.Intn(3))))
		}
		return b.NewArray()
	}}
}

func boolKeys() keyGen {
	return keyGen{arrow.FixedWidthTypes.Boolean, func(r *rand.Rand, n int) arrow.Array {
		b := array.NewBooleanBuilder(memory.DefaultAllocator)
		defer b.Release()
		for i := 0; i < n; i++ {
			if nullEvery(r) {
				b.AppendNull()
			} else {
				b.Append(r.Intn(2) == 0)
			}
		}
		return b.NewArray()
	}}
}

func nullKeys() keyGen {
	return keyGen{arrow.Null, func(_ *rand.Rand, n int) arrow.Array { return array.NewNull(n) }}
}

func dateKeys() keyGen {
	return keyGen{arrow.FixedWidthTypes.Date32, func(r *rand.Rand, n int) arrow.Array {
		b := array.NewDate32Builder(memory.DefaultAllocator)
		defer b.Release()
		for i := 0; i < n; i++ {
			if nullEvery(r) {
				b.AppendNull()
			} else {
				b.Append(arrow.Date32(r.Intn(40)))
			}
		}
		return b.NewArray()
	}}
}

// checkGroupTable feeds batches of the generated columns (each batch
// sliced at an offset, as exchanges hand them) to a group table and checks
// it against keyEncoder, the byte encoding joins use: two rows share a
// group exactly when their encoded keys are equal, ids are dense, and the
// table's key arrays give back each group's key (a collated string as
// first seen).
func checkGroupTable(t *testing.T, gens []keyGen, batches, rows int) *groupTable {
	t.Helper()
	r := rand.New(rand.NewSource(int64(len(gens)*1000 + rows)))
	types := make([]arrow.DataType, len(gens))
	for i, kg := range gens {
		types[i] = kg.dt
	}
	g := newGroupTable(types)
	byKey := map[string]int32{}
	first := map[int32][]string{} // group -> first row's values (ValueStr)
	var enc keyEncoder
	var ids []int32
	for b := 0; b < batches; b++ {
		cols := make([]arrow.Array, len(gens))
		for i, kg := range gens {
			whole := kg.gen(r, rows+3)
			cols[i] = array.NewSlice(whole, 3, int64(rows+3))
			whole.Release()
		}
		var err error
		if ids, err = g.ids(cols, rows, ids); err != nil {
			t.Fatal(err)
		}
		if err := enc.encode(cols, rows); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < rows; i++ {
			k := string(enc.key(i))
			want, ok := byKey[k]
			if !ok {
				if _, taken := first[ids[i]]; taken {
					t.Fatalf("batch %d row %d: new key got group %d, which another key has", b, i, ids[i])
				}
				byKey[k] = ids[i]
				vals := make([]string, len(cols))
				for c, a := range cols {
					vals[c] = a.ValueStr(i)
				}
				first[ids[i]] = vals
				continue
			}
			if ids[i] != want {
				t.Fatalf("batch %d row %d: group %d, want %d (same key)", b, i, ids[i], want)
			}
		}
		releaseArrays(cols)
	}
	if g.n != len(byKey) {
		t.Fatalf("%d groups, want %d", g.n, len(byKey))
	}
	out, err := g.arrays(memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	defer releaseArrays(out)
	if err := enc.encode(out, g.n); err != nil {
		t.Fatal(err)
	}
	for k, id := range byKey {
		if int(id) >= g.n || string(enc.key(int(id))) != k {
			t.Fatalf("group %d: key arrays give a different key", id)
		}
	}
	for c, kg := range gens {
		if expr.CollationOf(kg.dt) == nil {
			continue
		}
		for id, vals := range first {
			if got := out[c].ValueStr(int(id)); got != vals[c] {
				t.Fatalf("collated column %d, group %d: %q, want the first seen %q", c, id, got, vals[c])
			}
		}
	}
	if g.bytes() <= 0 {
		t.Fatal("bytes() is not positive")
	}
	return g
}

func TestGroupTableKeys(t *testing.T) {
	cases := []struct {
		name string
		gens []keyGen
	}{
		{"int32 (integer path)", []keyGen{int32Keys(50)}},
		{"date (integer path)", []keyGen{dateKeys()}},
		{"string", []keyGen{stringKeys(arrow.BinaryTypes.String, 30)}},
		{"large string", []keyGen{stringKeys(arrow.BinaryTypes.LargeString, 30)}},
		{"binary", []keyGen{stringKeys(arrow.BinaryTypes.Binary, 30)}},
		{"string view", []keyGen{stringKeys(arrow.BinaryTypes.StringView, 30)}},
		{"float64 -0 NaN", []keyGen{floatKeys(arrow.PrimitiveTypes.Float64)}},
		{"float32 -0 NaN", []keyGen{floatKeys(arrow.PrimitiveTypes.Float32)}},
		{"collated", []keyGen{collatedKeys(t)}},
		{"wide decimal", []keyGen{wideDecimalKeys()}},
		{"bool", []keyGen{boolKeys()}},
		{"null type", []keyGen{nullKeys()}},
		{"int and string", []keyGen{int32Keys(5), stringKeys(arrow.BinaryTypes.String, 5)}},
		{"many columns", []keyGen{int32Keys(3), stringKeys(arrow.BinaryTypes.String, 3), floatKeys(arrow.PrimitiveTypes.Float64),
			collatedKeys(t), wideDecimalKeys(), boolKeys(), nullKeys(), dateKeys(), int64Keys(2, true), stringKeys(arrow.BinaryTypes.LargeString, 2)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checkGroupTable(t, tc.gens, 6, 1000)
		})
	}
}

// TestGroupTableGrowthAndCollisions grows the table through many
// rehashes with enough distinct keys that some share their full 32-bit
// hash, so rows probe past a matching hash whose key differs. The keys
// span too much to pack into one int64, so they take the hashed path.
func TestGroupTableGrowthAndCollisions(t *testing.T) {
	const rows = 4096
	g := checkGroupTable(t, []keyGen{int64Keys(1<<62, false), int64Keys(1<<62, false)}, 80, rows)
	if g.pk != nil {
		t.Fatal("keys of 62 bits each were packed")
	}
	if g.n < 300_000 {
		t.Fatalf("%d groups: too few to grow the table", g.n)
	}
	seen := make(map[uint32]bool, g.n)
	collisions := 0
	for _, w := range g.slots {
		if w == 0 {
			continue
		}
		if h := uint32(w >> 32); seen[h] {
			collisions++
		} else {
			seen[h] = true
		}
	}
	if collisions == 0 {
		t.Fatal("no two groups share a hash: the collision path is not tested")
	}
	if len(g.slots) < 2*g.n {
		t.Fatalf("%d slots for %d groups: more than half full", len(g.slots), g.n)
	}
	if want := int64(g.n) * (8 + 8 + 2 + 8); g.bytes() < want {
		t.Fatalf("bytes() = %d, less than the %d its groups hold", g.bytes(), want)
	}
}

// A table's bytes follow its groups, not its batches: one group seen in
// a batch of 8,192 rows costs a few hundred bytes, so a spilled
// partition of a few groups fits a tiny share.
func TestGroupTableBytesFollowGroups(t *testing.T) {
	b := array.NewStringBuilder(memory.DefaultAllocator)
	for i := 0; i < 8192; i++ {
		b.Append("one key")
	}
	a := b.NewArray()
	b.Release()
	defer a.Release()
	g := newGroupTable([]arrow.DataType{arrow.BinaryTypes.String})
	if _, err := g.ids([]arrow.Array{a}, a.Len(), nil); err != nil {
		t.Fatal(err)
	}
	if g.n != 1 || g.bytes() > 1024 {
		t.Fatalf("%d groups charged %d bytes", g.n, g.bytes())
	}
}

// BenchmarkGroupTableTwoIntKeys: 512K rows of two int64 keys, nearly all
// distinct (q97's customer and item pairs), into a fresh table: the
// slots grow from 16 to 1M through every doubling.
func BenchmarkGroupTableTwoIntKeys(b *testing.B) {
	const n = 512 << 10
	r := rand.New(rand.NewSource(1))
	benchGroupTable(b, n, arrow.PrimitiveTypes.Int64, func() (int64, int64) {
		return int64(r.Intn(100_000)), int64(r.Intn(18_000))
	}, func(groups int) bool { return groups >= n*9/10 })
}

// BenchmarkGroupTableRepeatedIntKeys: 512K rows of two int32 keys
// drawn from 100K pairs (q65's store and item pairs, each seen several
// times), into a fresh table.
func BenchmarkGroupTableRepeatedIntKeys(b *testing.B) {
	const n, pairs = 512 << 10, 100_000
	r := rand.New(rand.NewSource(1))
	ss, is := make([]int32, pairs), make([]int32, pairs)
	for p := range ss {
		ss[p], is[p] = int32(1+r.Intn(400)), int32(1+r.Intn(18_000))
	}
	benchGroupTable(b, n, arrow.PrimitiveTypes.Int32, func() (int64, int64) {
		p := r.Intn(pairs)
		return int64(ss[p]), int64(is[p])
	}, func(groups int) bool { return groups >= pairs*9/10 && groups <= pairs })
}

// benchGroupTable times n rows of two integer keys of type dt (made by
// next, in batches of BatchSize) going into a fresh table; ok checks the
// groups it made.
func benchGroupTable(b *testing.B, n int, dt arrow.DataType, next func() (int64, int64), ok func(groups int) bool) {
	var batches [][]arrow.Array
	for start := 0; start < n; start += BatchSize {
		rows := min(BatchSize, n-start)
		x, y := array.NewBuilder(memory.DefaultAllocator, dt), array.NewBuilder(memory.DefaultAllocator, dt)
		for i := 0; i < rows; i++ {
			a, c := next()
			appendInt(x, a)
			appendInt(y, c)
		}
		batches = append(batches, []arrow.Array{x.NewArray(), y.NewArray()})
		x.Release()
		y.Release()
	}
	defer func() {
		for _, k := range batches {
			releaseArrays(k)
		}
	}()
	types := []arrow.DataType{dt, dt}
	var ids []int32
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		g := newGroupTable(types)
		for _, k := range batches {
			var err error
			if ids, err = g.ids(k, k[0].Len(), ids); err != nil {
				b.Fatal(err)
			}
		}
		if !ok(g.n) {
			b.Fatalf("%d groups", g.n)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// appendInt appends v to an Int32 or Int64 builder.
func appendInt(bld array.Builder, v int64) {
	switch x := bld.(type) {
	case *array.Int32Builder:
		x.Append(int32(v))
	case *array.Int64Builder:
		x.Append(v)
	}
}
