package exec

import (
	"math/rand"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fsql-dev/fsql/exec/expr"
)

// keyColumns makes one column per generator, n rows sliced at an offset
// (as exchanges hand batches).
func keyColumns(r *rand.Rand, gens []keyGen, n int) []arrow.Array {
	cols := make([]arrow.Array, len(gens))
	for i, kg := range gens {
		whole := kg.gen(r, n+3)
		cols[i] = array.NewSlice(whole, 3, int64(n+3))
		whole.Release()
	}
	return cols
}

// checkJoinTable builds a join table over generated build keys and looks
// up generated probe batches, checking against keyEncoder's byte keys
// (NULL equal to NULL, so a row with a NULL in a key that is not
// null-safe is left out by hand): every probe row's chain is exactly the
// build rows with its key, in ascending order, and a row's NULL flag is
// set exactly when a key that is not null-safe is NULL.
func checkJoinTable(t *testing.T, build, probe []keyGen, nullSafe []bool, buildRows, batches, rows int) *joinTable {
	t.Helper()
	r := rand.New(rand.NewSource(int64(len(build)*1000 + buildRows)))
	var enc keyEncoder
	hasNull := func(cols []arrow.Array, i int) bool {
		for c, a := range cols {
			if !expr.IsValid(a, i) && (nullSafe == nil || !nullSafe[c]) {
				return true
			}
		}
		return false
	}
	bcols := keyColumns(r, build, buildRows)
	defer releaseArrays(bcols)
	want := map[string][]int32{}
	if err := enc.encode(bcols, buildRows); err != nil {
		t.Fatal(err)
	}
	nulls := 0
	for i := 0; i < buildRows; i++ {
		if hasNull(bcols, i) {
			nulls++
			continue
		}
		k := string(enc.key(i))
		want[k] = append(want[k], int32(i))
	}
	next := make([]int32, buildRows)
	tab, err := newJoinTable(bcols, buildRows, nullSafe, next)
	if err != nil {
		t.Fatal(err)
	}
	if tab.nullKey != (nulls > 0) {
		t.Fatalf("nullKey %v with %d build rows holding a NULL key", tab.nullKey, nulls)
	}
	var p joinProbe
	heads := make([]int32, rows)
	null := make([]bool, rows)
	matched := 0
	for b := 0; b < batches; b++ {
		pcols := keyColumns(r, probe, rows)
		if err := tab.lookup(&p, pcols, rows, heads, null); err != nil {
			t.Fatal(err)
		}
		if err := enc.encode(pcols, rows); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < rows; i++ {
			if null[i] != hasNull(pcols, i) {
				t.Fatalf("batch %d row %d: null %v, want %v", b, i, null[i], !null[i])
			}
			var chain []int32
			for h := heads[i]; h >= 0; h = next[h] {
				chain = append(chain, h)
				if len(chain) > buildRows {
					t.Fatalf("batch %d row %d: the chain loops", b, i)
				}
			}
			var w []int32
			if !null[i] {
				w = want[string(enc.key(i))]
			}
			if !slices.Equal(chain, w) {
				t.Fatalf("batch %d row %d: build rows %v, want %v", b, i, chain, w)
			}
			if len(w) > 0 {
				matched++
			}
		}
		releaseArrays(pcols)
	}
	if matched == 0 && len(want) > 0 {
		t.Fatal("no probe row matched: the test compares no chains")
	}
	if tab.bytes() <= 0 {
		t.Fatal("bytes() is not positive")
	}
	tab.release()
	return tab
}

func TestJoinTableKeys(t *testing.T) {
	str := stringKeys(arrow.BinaryTypes.String, 30)
	cases := []struct {
		name         string
		build, probe []keyGen
		nullSafe     []bool
	}{
		{"string", []keyGen{str}, nil, nil},
		{"string and large string", []keyGen{str}, []keyGen{stringKeys(arrow.BinaryTypes.LargeString, 30)}, nil},
		{"binary", []keyGen{stringKeys(arrow.BinaryTypes.Binary, 30)}, nil, nil},
		{"string view", []keyGen{stringKeys(arrow.BinaryTypes.StringView, 30)}, nil, nil},
		{"float64 -0 NaN", []keyGen{floatKeys(arrow.PrimitiveTypes.Float64)}, nil, nil},
		{"float32 -0 NaN", []keyGen{floatKeys(arrow.PrimitiveTypes.Float32)}, nil, nil},
		{"collated", []keyGen{collatedKeys(t)}, nil, nil},
		{"wide decimal", []keyGen{wideDecimalKeys()}, nil, nil},
		{"bool", []keyGen{boolKeys()}, nil, nil},
		{"null type", []keyGen{nullKeys()}, nil, nil},
		{"null type, null-safe", []keyGen{nullKeys(), int32Keys(5)}, nil, []bool{true, false}},
		{"int and string", []keyGen{int32Keys(5), str}, nil, nil},
		{"int and string, both null-safe", []keyGen{int32Keys(5), str}, nil, []bool{true, true}},
		{"int and string, string null-safe", []keyGen{int32Keys(5), str}, nil, []bool{false, true}},
		{"wide decimal and date", []keyGen{wideDecimalKeys(), dateKeys()}, nil, nil},
		{"many columns", []keyGen{int32Keys(2), stringKeys(arrow.BinaryTypes.String, 2), floatKeys(arrow.PrimitiveTypes.Float64),
			collatedKeys(t), boolKeys(), int64Keys(2, true), stringKeys(arrow.BinaryTypes.LargeString, 2)}, nil, nil},
		{"many columns, null-safe", []keyGen{int32Keys(2), floatKeys(arrow.PrimitiveTypes.Float64), collatedKeys(t), boolKeys(), nullKeys()},
			nil, []bool{true, true, true, true, true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			probe := tc.probe
			if probe == nil {
				probe = tc.build
			}
			checkJoinTable(t, tc.build, probe, tc.nullSafe, 700, 4, 500)
		})
	}
}

// TestJoinTableDuplicatesAndCollisions indexes a build side of many runs
// in which every key has many rows (long chains), and one with enough
// distinct keys that some share their full 32-bit hash, so rows probe
// past a matching hash whose key differs.
func TestJoinTableDuplicatesAndCollisions(t *testing.T) {
	dup := []keyGen{int32Keys(7), stringKeys(arrow.BinaryTypes.String, 3)}
	checkJoinTable(t, dup, dup, nil, 5*joinBuildRun+17, 3, 1000)

	// 2^34 keys: 300,000 build rows hold a few dozen pairs of distinct
	// keys with one hash, and a probe batch as large matches thousands.
	wide := []keyGen{int64Keys(1<<17, false), int64Keys(1<<17, false)}
	const n = 300_000
	r := rand.New(rand.NewSource(int64(len(wide)*1000 + n))) // checkJoinTable's build rows
	cols := keyColumns(r, wide, n)
	h := make([]uint32, n)
	HashColumns(cols, h)
	a, b := cols[0].(*array.Int64), cols[1].(*array.Int64)
	keyOf := make(map[uint32][2]int64, n)
	collisions := 0
	for i, v := range h {
		k := [2]int64{a.Value(i), b.Value(i)}
		if o, ok := keyOf[v]; ok && o != k {
			collisions++
		}
		keyOf[v] = k
	}
	releaseArrays(cols)
	if collisions == 0 {
		t.Fatal("no two build keys share a hash: the collision path is not tested")
	}
	checkJoinTable(t, wide, wide, nil, n, 1, n)
}

// The table reads fixed-width and string keys in place: beyond its slots
// it holds the string offsets (8 bytes a row) and nothing per value.
func TestJoinTableBytes(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	const n = 10_000
	cols := keyColumns(r, []keyGen{int64Keys(100, true), stringKeys(arrow.BinaryTypes.String, 100)}, n)
	defer releaseArrays(cols)
	tab, err := newJoinTable(cols, n, nil, make([]int32, n))
	if err != nil {
		t.Fatal(err)
	}
	defer tab.release()
	if got, max := tab.bytes(), int64(8*4*n+8*(n+1)); got > max {
		t.Fatalf("bytes() = %d for %d rows, more than slots and offsets (%d)", got, n, max)
	}
}
