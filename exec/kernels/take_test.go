package kernels

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/internal/mempool"
)

// testTypes are the types fsql's columns take, plus a dictionary (the
// compute fallback) and an extension type over strings (as collated
// strings are).
var testTypes = []arrow.DataType{
	arrow.FixedWidthTypes.Boolean,
	arrow.PrimitiveTypes.Int8,
	arrow.PrimitiveTypes.Int16,
	arrow.PrimitiveTypes.Int32,
	arrow.PrimitiveTypes.Int64,
	arrow.PrimitiveTypes.Uint8,
	arrow.PrimitiveTypes.Uint64,
	arrow.PrimitiveTypes.Float32,
	arrow.PrimitiveTypes.Float64,
	&arrow.Decimal128Type{Precision: 7, Scale: 2},
	&arrow.Decimal256Type{Precision: 40, Scale: 3},
	arrow.FixedWidthTypes.Date32,
	arrow.FixedWidthTypes.Date64,
	arrow.FixedWidthTypes.Time64us,
	arrow.FixedWidthTypes.Timestamp_us,
	arrow.BinaryTypes.String,
	arrow.BinaryTypes.Binary,
	arrow.BinaryTypes.LargeString,
	arrow.BinaryTypes.LargeBinary,
	arrow.Null,
	&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String},
	newLabelType(),
}

// randomArray builds n rows of type dt, about nullPct percent NULL.
func randomArray(t testing.TB, alloc memory.Allocator, dt arrow.DataType, n, nullPct int, r *rand.Rand) arrow.Array {
	t.Helper()
	if ext, ok := dt.(arrow.ExtensionType); ok {
		s := randomArray(t, alloc, ext.StorageType(), n, nullPct, r)
		defer s.Release()
		return array.NewExtensionArrayWithStorage(ext, s)
	}
	b := array.NewBuilder(alloc, dt)
	defer b.Release()
	for i := 0; i < n; i++ {
		if dt.ID() == arrow.NULL || r.IntN(100) < nullPct {
			b.AppendNull()
			continue
		}
		v := r.Int64N(1000) - 500
		switch b := b.(type) {
		case *array.BooleanBuilder:
			b.Append(v%2 == 0)
		case *array.Int8Builder:
			b.Append(int8(v))
		case *array.Int16Builder:
			b.Append(int16(v))
		case *array.Int32Builder:
			b.Append(int32(v))
		case *array.Int64Builder:
			b.Append(v << 20)
		case *array.Uint8Builder:
			b.Append(uint8(v))
		case *array.Uint64Builder:
			b.Append(uint64(v) << 3)
		case *array.Float32Builder:
			b.Append(float32(v) / 3)
		case *array.Float64Builder:
			b.Append(float64(v) / 7)
		case *array.Decimal128Builder:
			b.Append(decimal128.FromI64(v * 12345))
		case *array.Decimal256Builder:
			b.Append(decimal256.FromI64(-v * 98765))
		case *array.Date32Builder:
			b.Append(arrow.Date32(v))
		case *array.Date64Builder:
			b.Append(arrow.Date64(v * 86400000))
		case *array.Time64Builder:
			b.Append(arrow.Time64(v * 1000))
		case *array.TimestampBuilder:
			b.Append(arrow.Timestamp(v * 1e6))
		case *array.StringBuilder:
			b.Append(fmt.Sprintf("s%d-%s", v, "xyz"[:r.IntN(4)]))
		case *array.LargeStringBuilder:
			b.Append(fmt.Sprintf("L%d", v))
		case *array.BinaryBuilder:
			b.Append([]byte(fmt.Sprintf("b%d", v)[:r.IntN(3)]))
		case *array.BinaryDictionaryBuilder:
			if err := b.AppendString(fmt.Sprintf("d%d", v%7)); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("no generator for %s (%T)", dt, b)
		}
	}
	return b.NewArray()
}

// computeTake is the reference: arrow-go's Take with negative indexes as
// NULL indexes.
func computeTake(t testing.TB, alloc memory.Allocator, a arrow.Array, idx []int32) arrow.Array {
	t.Helper()
	ib := array.NewInt32Builder(alloc)
	defer ib.Release()
	for _, j := range idx {
		if j < 0 {
			ib.AppendNull()
		} else {
			ib.Append(j)
		}
	}
	ia := ib.NewArray()
	defer ia.Release()
	out, err := compute.TakeArray(compute.WithAllocator(context.Background(), alloc), a, ia)
	if err != nil {
		t.Fatalf("reference take of %s: %v", a.DataType(), err)
	}
	return out
}

func TestTakeMatchesCompute(t *testing.T) {
	cases := []struct {
		name            string
		n, nullPct      int
		sliceOff, slice int // slice [sliceOff, sliceOff+slice) of the n rows; slice<0: no slice
		idx             func(r *rand.Rand, n int) []int32
	}{
		{"empty input empty idx", 0, 0, 0, -1, func(*rand.Rand, int) []int32 { return nil }},
		{"empty input only nulls", 0, 0, 0, -1, func(*rand.Rand, int) []int32 { return []int32{-1, -1} }},
		{"no nulls", 100, 0, 0, -1, randomIdx(0)},
		{"with nulls", 100, 30, 0, -1, randomIdx(0)},
		{"all null", 40, 100, 0, -1, randomIdx(0)},
		{"negative idx", 100, 20, 0, -1, randomIdx(25)},
		{"sliced unaligned", 200, 20, 13, 150, randomIdx(10)},
		{"sliced aligned", 200, 0, 64, 64, randomIdx(0)},
		{"sliced empty", 50, 0, 7, 0, func(*rand.Rand, int) []int32 { return []int32{-1} }},
		{"repeated", 10, 10, 0, -1, func(r *rand.Rand, n int) []int32 { return []int32{3, 3, 3, 0, 9, 0} }},
		{"empty idx", 100, 10, 0, -1, func(*rand.Rand, int) []int32 { return []int32{} }},
		{"long", 5000, 5, 3, 4990, randomIdx(1)},
		{"runs", 300, 10, 0, -1, runsIdx(90, 5)},
		{"runs sliced", 300, 10, 17, 250, runsIdx(70, 10)},
		{"one run", 64, 0, 0, -1, func(_ *rand.Rand, n int) []int32 { return ascending(0, n) }},
	}
	for _, dt := range testTypes {
		for _, tc := range cases {
			t.Run(dt.String()+"/"+tc.name, func(t *testing.T) {
				alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer alloc.AssertSize(t, 0)
				r := rand.New(rand.NewPCG(uint64(len(tc.name)), uint64(tc.n)))
				a := randomArray(t, alloc, dt, tc.n, tc.nullPct, r)
				defer a.Release()
				if tc.slice >= 0 {
					s := array.NewSlice(a, int64(tc.sliceOff), int64(tc.sliceOff+tc.slice))
					defer s.Release()
					a = s
				}
				idx := tc.idx(r, a.Len())
				got, err := Take(alloc, a, idx)
				if err != nil {
					t.Fatal(err)
				}
				defer got.Release()
				want := computeTake(t, alloc, a, idx)
				defer want.Release()
				checkSame(t, got, want)
			})
		}
	}
}

// randomIdx draws indexes into n rows, negPct percent of them -1.
func randomIdx(negPct int) func(r *rand.Rand, n int) []int32 {
	return func(r *rand.Rand, n int) []int32 {
		idx := make([]int32, 2*n+3)
		for i := range idx {
			if n == 0 || r.IntN(100) < negPct {
				idx[i] = -1
			} else {
				idx[i] = int32(r.IntN(n))
			}
		}
		return idx
	}
}

// runsIdx keeps keepPct percent of the rows in order, as a join's probe
// side or a filter does, with negPct percent of the kept indexes -1, and
// then restarts from a random row: runs of consecutive indexes of every
// length, broken by gaps, NULLs and backward jumps.
func runsIdx(keepPct, negPct int) func(r *rand.Rand, n int) []int32 {
	return func(r *rand.Rand, n int) []int32 {
		var idx []int32
		for pass := 0; pass < 3 && n > 0; pass++ {
			for j := r.IntN(n); j < n; j++ {
				switch {
				case r.IntN(100) >= keepPct:
				case r.IntN(100) < negPct:
					idx = append(idx, -1)
				default:
					idx = append(idx, int32(j))
				}
			}
		}
		return idx
	}
}

// ascending is start, start+1, ..., start+n-1.
func ascending(start, n int) []int32 {
	idx := make([]int32, n)
	for i := range idx {
		idx[i] = int32(start + i)
	}
	return idx
}

// checkSame compares type, length, null count and values row by row.
func checkSame(t *testing.T, got, want arrow.Array) {
	t.Helper()
	if g, ok := got.(array.ExtensionArray); ok {
		if !arrow.TypeEqual(got.DataType(), want.DataType()) {
			t.Fatalf("type %s, want %s", got.DataType(), want.DataType())
		}
		checkSame(t, g.Storage(), want.(array.ExtensionArray).Storage())
		return
	}
	if !arrow.TypeEqual(got.DataType(), want.DataType()) {
		t.Fatalf("type %s, want %s", got.DataType(), want.DataType())
	}
	if got.Len() != want.Len() || got.NullN() != want.NullN() {
		t.Fatalf("len %d nulls %d, want len %d nulls %d", got.Len(), got.NullN(), want.Len(), want.NullN())
	}
	if v, ok := got.(interface{ ValidateFull() error }); ok {
		if err := v.ValidateFull(); err != nil {
			t.Fatalf("invalid output: %v", err)
		}
	}
	for i := 0; i < got.Len(); i++ {
		if got.IsNull(i) != want.IsNull(i) {
			t.Fatalf("row %d: null %v, want %v", i, got.IsNull(i), want.IsNull(i))
		}
		if got.IsValid(i) && got.ValueStr(i) != want.ValueStr(i) {
			t.Fatalf("row %d: %s, want %s", i, got.ValueStr(i), want.ValueStr(i))
		}
	}
	if !array.Equal(got, want) {
		t.Fatalf("arrays differ: %v vs %v", got, want)
	}
}

func TestTakeExplicit(t *testing.T) {
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer alloc.AssertSize(t, 0)
	sb := array.NewStringBuilder(alloc)
	sb.AppendValues([]string{"a", "", "ccc", "dd"}, []bool{true, true, false, true})
	s := sb.NewArray()
	sb.Release()
	defer s.Release()
	got, err := Take(alloc, s, []int32{3, -1, 0, 2, 1, 3})
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	if g, w := got.String(), `["dd" (null) "a" (null) "" "dd"]`; g != w {
		t.Fatalf("got %s, want %s", g, w)
	}
	if got.NullN() != 2 {
		t.Fatalf("null count %d, want 2", got.NullN())
	}
	// No NULL in the input and no negative index: no validity bitmap.
	ib := array.NewInt64Builder(alloc)
	ib.AppendValues([]int64{10, 20, 30}, nil)
	ints := ib.NewArray()
	ib.Release()
	defer ints.Release()
	gi, err := Take(alloc, ints, []int32{2, 0})
	if err != nil {
		t.Fatal(err)
	}
	defer gi.Release()
	if gi.Data().Buffers()[0] != nil || gi.String() != "[30 10]" {
		t.Fatalf("got %s with validity %v", gi, gi.Data().Buffers()[0] != nil)
	}
}

// labelType is a test extension type over strings, shaped like fsql's
// collated strings.
type labelType struct {
	arrow.ExtensionBase
}

func newLabelType() *labelType {
	return &labelType{ExtensionBase: arrow.ExtensionBase{Storage: arrow.BinaryTypes.String}}
}

func (*labelType) ArrayType() reflect.Type { return reflect.TypeOf(labelArray{}) }
func (*labelType) ExtensionName() string   { return "fsql.test.label" }
func (*labelType) Serialize() string       { return "" }
func (t *labelType) ExtensionEquals(o arrow.ExtensionType) bool {
	return o.ExtensionName() == t.ExtensionName()
}
func (*labelType) Deserialize(arrow.DataType, string) (arrow.ExtensionType, error) {
	return newLabelType(), nil
}

type labelArray struct {
	array.ExtensionArrayBase
}

// TestTakeFromPoisonedPool: gathered buffers come from a Pool uncleared
// (mempool.Buffer), so every byte they expose must be written by the
// kernel; a pool whose freed buffers are poisoned makes a missed byte
// show as a wrong value or NULL.
func TestTakeFromPoisonedPool(t *testing.T) {
	pool := mempool.New()
	pool.Poison = true
	poison := func() {
		var bufs [][]byte
		for size := 64; size <= 1<<16; size *= 2 {
			for k := 0; k < 4; k++ {
				bufs = append(bufs, pool.Allocate(size))
			}
		}
		for _, b := range bufs {
			pool.Free(b)
		}
	}
	for _, dt := range testTypes {
		for _, neg := range []int{0, 10} {
			t.Run(fmt.Sprintf("%s/neg%d", dt, neg), func(t *testing.T) {
				r := rand.New(rand.NewPCG(7, uint64(neg)))
				a := randomArray(t, memory.NewGoAllocator(), dt, 3000, 15, r)
				defer a.Release()
				idx := randomIdx(neg)(r, a.Len())
				poison()
				got, err := Take(pool, a, idx)
				if err != nil {
					t.Fatal(err)
				}
				defer got.Release()
				want := computeTake(t, memory.NewGoAllocator(), a, idx)
				defer want.Release()
				checkSame(t, got, want)
			})
		}
	}
}
