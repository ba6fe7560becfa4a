package exec

import (
	"cmp"
	"fmt"
	"math"
	"math/rand"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// comparatorPermutation is the order keyCmps gives, ties by row: what
// packedSortPermutation must reproduce exactly.
func comparatorPermutation(t testing.TB, keys []arrow.Array, specs []SortKey, n int) []int32 {
	c, err := keyCmps(keys, specs)
	if err != nil {
		t.Fatal(err)
	}
	perm := make([]int32, n)
	for i := range perm {
		perm[i] = int32(i)
	}
	slices.SortFunc(perm, func(a, b int32) int {
		if r := c(int(a), int(b)); r != 0 {
			return r
		}
		return cmp.Compare(a, b)
	})
	return perm
}

// packedColumn makes a column of n random values of one kind, NULL with
// probability nulls.
func packedColumn(r *rand.Rand, kind string, n int, nulls float64) arrow.Array {
	mem := memory.DefaultAllocator
	null := func() bool { return r.Float64() < nulls }
	switch kind {
	case "int32":
		b := array.NewInt32Builder(mem)
		for i := 0; i < n; i++ {
			if null() {
				b.AppendNull()
			} else {
				b.Append(int32(r.Intn(50)) - 20)
			}
		}
		return b.NewArray()
	case "int64wide":
		b := array.NewInt64Builder(mem)
		for i := 0; i < n; i++ {
			if null() {
				b.AppendNull()
			} else {
				b.Append(r.Int63n(1<<40) - 1<<39)
			}
		}
		return b.NewArray()
	case "int64extreme":
		b := array.NewInt64Builder(mem)
		vals := []int64{math.MinInt64, math.MaxInt64, 0, -1, 1}
		for i := 0; i < n; i++ {
			if null() {
				b.AppendNull()
			} else {
				b.Append(vals[r.Intn(len(vals))])
			}
		}
		return b.NewArray()
	case "date32":
		b := array.NewDate32Builder(mem)
		for i := 0; i < n; i++ {
			if null() {
				b.AppendNull()
			} else {
				b.Append(arrow.Date32(10957 + r.Intn(400)))
			}
		}
		return b.NewArray()
	case "uint8":
		b := array.NewUint8Builder(mem)
		for i := 0; i < n; i++ {
			if null() {
				b.AppendNull()
			} else {
				b.Append(uint8(r.Intn(256)))
			}
		}
		return b.NewArray()
	case "bool":
		b := array.NewBooleanBuilder(mem)
		for i := 0; i < n; i++ {
			if null() {
				b.AppendNull()
			} else {
				b.Append(r.Intn(2) == 1)
			}
		}
		return b.NewArray()
	case "decimal", "decimalwide":
		b := array.NewDecimal128Builder(mem, &arrow.Decimal128Type{Precision: 38, Scale: 2})
		for i := 0; i < n; i++ {
			switch {
			case null():
				b.AppendNull()
			case kind == "decimalwide" && r.Intn(10) == 0:
				b.Append(decimal128.New(int64(r.Intn(3))-1, r.Uint64())) // past 64 bits
			default:
				b.Append(decimal128.FromI64(int64(r.Intn(2000)) - 1000))
			}
		}
		return b.NewArray()
	case "string", "stringunique", "binary":
		words := []string{"", "a", "ab", "abc", "b", "B", "ba", "\xff", "z\x00", "zz"}
		var b array.Builder
		if kind == "binary" {
			b = array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary)
		} else {
			b = array.NewStringBuilder(mem)
		}
		for i := 0; i < n; i++ {
			v := words[r.Intn(len(words))]
			if kind == "stringunique" {
				v = fmt.Sprintf("%x-%d", r.Int63(), i)
			}
			switch {
			case null():
				b.AppendNull()
			case kind == "binary":
				b.(*array.BinaryBuilder).Append([]byte(v))
			default:
				b.(*array.StringBuilder).Append(v)
			}
		}
		return b.NewArray()
	case "constant":
		b := array.NewInt32Builder(mem)
		for i := 0; i < n; i++ {
			if null() {
				b.AppendNull()
			} else {
				b.Append(7)
			}
		}
		return b.NewArray()
	}
	panic("unknown kind " + kind)
}

// TestPackedSortMatchesComparators sorts random keys of every supported
// kind, with and without NULLs, ascending and descending, NULLs first and
// last, below and above the radix threshold and past 32 bits of codes,
// and checks the order (ties included) is the comparators'. Keys the
// packing refuses (64-bit extremes, wide decimals) must fall back.
func TestPackedSortMatchesComparators(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	sets := [][]string{
		{"int32"}, {"int32", "date32"}, {"date32", "int32", "bool"}, {"uint8", "decimal"},
		{"int64wide"}, {"int64wide", "int32"}, {"decimal", "int64wide"},
		{"int64extreme"}, {"decimalwide"}, {"constant", "int32"}, {"bool"},
		{"string"}, {"string", "int32", "binary"}, {"stringunique"}, {"date32", "string"},
		{"stringunique", "stringunique", "stringunique", "stringunique"},
	}
	refuses := map[string]bool{"int64extreme": true, "decimalwide": true, "stringunique": true}
	for _, set := range sets {
		for _, n := range []int{1, 17, 300, 5000} {
			for _, nulls := range []float64{0, 0.2, 1} {
				for trial := 0; trial < 4; trial++ {
					keys := make([]arrow.Array, len(set))
					specs := make([]SortKey, len(set))
					refused := false
					for k, kind := range set {
						keys[k] = packedColumn(r, kind, n, nulls)
						specs[k] = SortKey{Desc: r.Intn(2) == 1, NullsFirst: r.Intn(2) == 1}
						refused = refused || (refuses[kind] && nulls < 1)
					}
					name := fmt.Sprintf("%v/n=%d/nulls=%v/%d", set, n, nulls, trial)
					want := comparatorPermutation(t, keys, specs, n)
					got := make([]int32, n)
					ok := packedSortPermutation(keys, specs, got)
					if !ok {
						if !refused {
							t.Errorf("%s: packing refused keys it supports", name)
						}
					} else if !slices.Equal(got, want) {
						t.Errorf("%s: packed order differs from the comparators'\n got %v\nwant %v", name, got[:min(n, 20)], want[:min(n, 20)])
					}
					via, err := sortPermutation(keys, specs, n)
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(via, want) {
						t.Errorf("%s: sortPermutation differs from the comparators'", name)
					}
					releaseArrays(keys)
				}
			}
		}
	}
}

// TestPackedSortSlicedColumns: keys that are slices of larger arrays (a
// batch's offset) read their values and validity from the offset.
func TestPackedSortSlicedColumns(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for _, kind := range []string{"int32", "date32", "bool", "decimal", "string"} {
		full := packedColumn(r, kind, 1000, 0.1)
		part := array.NewSlice(full, 123, 823)
		specs := []SortKey{{Desc: true, NullsFirst: false}}
		want := comparatorPermutation(t, []arrow.Array{part}, specs, 700)
		got := make([]int32, 700)
		if !packedSortPermutation([]arrow.Array{part}, specs, got) {
			t.Fatalf("%s: refused", kind)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: sliced column sorts differently", kind)
		}
		part.Release()
		full.Release()
	}
}

// BenchmarkSortPermutation: 500k rows by (int32 key of 18,000 values,
// date of 365), a window partition's keys, packed against comparators.
func BenchmarkSortPermutation(b *testing.B) {
	const n = 500_000
	r := rand.New(rand.NewSource(1))
	item := array.NewInt32Builder(memory.DefaultAllocator)
	date := array.NewDate32Builder(memory.DefaultAllocator)
	for i := 0; i < n; i++ {
		item.Append(int32(r.Intn(18000)))
		date.Append(arrow.Date32(11000 + r.Intn(365)))
	}
	keys := []arrow.Array{item.NewArray(), date.NewArray()}
	defer releaseArrays(keys)
	specs := []SortKey{{NullsFirst: true}, {NullsFirst: true}}
	b.Run("packed", func(b *testing.B) {
		perm := make([]int32, n)
		for i := 0; i < b.N; i++ {
			if !packedSortPermutation(keys, specs, perm) {
				b.Fatal("refused")
			}
		}
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	})
	b.Run("comparators", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			comparatorPermutation(b, keys, specs, n)
		}
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	})
}

// BenchmarkSortPermutationStrings: 200k rows by four strings of few
// values and two small integers, q47's window keys (category, brand,
// store, company, year, month).
func BenchmarkSortPermutationStrings(b *testing.B) {
	const n = 200_000
	r := rand.New(rand.NewSource(1))
	card := []int{10, 700, 12, 6}
	var keys []arrow.Array
	for _, c := range card {
		sb := array.NewStringBuilder(memory.DefaultAllocator)
		for i := 0; i < n; i++ {
			sb.Append(fmt.Sprintf("value number %d", r.Intn(c)))
		}
		keys = append(keys, sb.NewArray())
	}
	for _, c := range []int{3, 12} {
		ib := array.NewInt32Builder(memory.DefaultAllocator)
		for i := 0; i < n; i++ {
			ib.Append(int32(1999 + r.Intn(c)))
		}
		keys = append(keys, ib.NewArray())
	}
	defer releaseArrays(keys)
	specs := make([]SortKey, len(keys))
	for i := range specs {
		specs[i].NullsFirst = true
	}
	b.Run("packed", func(b *testing.B) {
		perm := make([]int32, n)
		for i := 0; i < b.N; i++ {
			if !packedSortPermutation(keys, specs, perm) {
				b.Fatal("refused")
			}
		}
	})
	b.Run("comparators", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			comparatorPermutation(b, keys, specs, n)
		}
	})
}
