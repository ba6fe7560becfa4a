package exec

import (
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func hashOf(t *testing.T, cols ...arrow.Array) []uint32 {
	t.Helper()
	out := make([]uint32, cols[0].Len())
	HashColumns(cols, out)
	for _, c := range cols {
		c.Release()
	}
	return out
}

func TestHashColumnsEqualAcrossWidths(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	vals := []int64{0, 1, -1, 42, 127, -128}

	b8 := array.NewInt8Builder(mem)
	b16 := array.NewInt16Builder(mem)
	b32 := array.NewInt32Builder(mem)
	b64 := array.NewInt64Builder(mem)
	bd := array.NewDate32Builder(mem)
	bdec := array.NewDecimal128Builder(mem, &arrow.Decimal128Type{Precision: 10, Scale: 0})
	for _, v := range vals {
		b8.Append(int8(v))
		b16.Append(int16(v))
		b32.Append(int32(v))
		b64.Append(v)
		bd.Append(arrow.Date32(v))
		bdec.Append(decimal128.FromI64(v))
	}
	// The last row is NULL in every column.
	for _, b := range []array.Builder{b8, b16, b32, b64, bd, bdec} {
		b.AppendNull()
	}
	arrs := []arrow.Array{b8.NewArray(), b16.NewArray(), b32.NewArray(), b64.NewArray(), bd.NewArray(), bdec.NewArray()}
	for _, b := range []array.Builder{b8, b16, b32, b64, bd, bdec} {
		b.Release()
	}
	want := hashOf(t, arrs[3])
	for i, a := range arrs {
		if i == 3 {
			continue
		}
		got := hashOf(t, a)
		for r := range want {
			if got[r] != want[r] {
				t.Errorf("%s row %d hashes %#x, int64 hashes %#x", a.DataType(), r, got[r], want[r])
			}
		}
	}
	if want[len(want)-1] != nullHash {
		t.Errorf("NULL hashes %#x, want the fixed %#x", want[len(want)-1], nullHash)
	}
	// Distinct values should hash differently.
	seen := map[uint32]bool{}
	for _, h := range want[:len(vals)] {
		if seen[h] {
			t.Errorf("collision among small ints: %v", want)
		}
		seen[h] = true
	}
}

func TestHashColumnsFloatsStringsComposite(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)

	fb := array.NewFloat64Builder(mem)
	fb.AppendValues([]float64{0, math.Copysign(0, -1), 1.5, math.NaN(), -math.NaN()}, nil)
	fh := hashOf(t, fb.NewArray())
	fb.Release()
	if fh[0] != fh[1] {
		t.Errorf("0 and -0 hash differently: %#x %#x", fh[0], fh[1])
	}
	if fh[3] != fh[4] {
		t.Errorf("NaNs hash differently")
	}
	f32 := array.NewFloat32Builder(mem)
	f32.AppendValues([]float32{0, float32(math.Copysign(0, -1)), 1.5}, nil)
	f32h := hashOf(t, f32.NewArray())
	f32.Release()
	for i := range f32h {
		if f32h[i] != fh[i] {
			t.Errorf("float32 row %d hashes unlike float64", i)
		}
	}

	// Strings: sliced arrays hash by their own bytes; string = large string = binary.
	sb := array.NewStringBuilder(mem)
	sb.AppendValues([]string{"x", "abc", "", "hello"}, nil)
	sb.AppendNull()
	sa := sb.NewArray()
	sb.Release()
	sliced := array.NewSlice(sa, 1, 5)
	lb := array.NewLargeStringBuilder(mem)
	lb.AppendValues([]string{"abc", "", "hello"}, nil)
	lb.AppendNull()
	bb := array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary)
	bb.AppendValues([][]byte{[]byte("abc"), {}, []byte("hello")}, nil)
	bb.AppendNull()
	s1 := hashOf(t, sliced)
	s2 := hashOf(t, lb.NewArray())
	s3 := hashOf(t, bb.NewArray())
	lb.Release()
	bb.Release()
	sa.Release()
	for i := range s1 {
		if s1[i] != s2[i] || s1[i] != s3[i] {
			t.Errorf("row %d: string %#x large string %#x binary %#x", i, s1[i], s2[i], s3[i])
		}
	}
	if s1[3] != nullHash {
		t.Errorf("NULL string hashes %#x", s1[3])
	}

	// Composite key: h = h*31 + colHash, and column order matters.
	ib := array.NewInt64Builder(mem)
	ib.AppendValues([]int64{7, 8}, nil)
	ia := ib.NewArray()
	ib.Release()
	sb2 := array.NewStringBuilder(mem)
	sb2.AppendValues([]string{"a", "b"}, nil)
	sa2 := sb2.NewArray()
	sb2.Release()
	out := make([]uint32, 2)
	HashColumns([]arrow.Array{ia, sa2}, out)
	rev := make([]uint32, 2)
	HashColumns([]arrow.Array{sa2, ia}, rev)
	for i, v := range []int64{7, 8} {
		want := hashInt64(v)*31 + fnv1aString(string(rune('a'+i)))
		if out[i] != want {
			t.Errorf("composite row %d = %#x, want %#x", i, out[i], want)
		}
		if rev[i] == out[i] {
			t.Errorf("composite key ignores column order")
		}
	}
	ia.Release()
	sa2.Release()
}

// The tables' hash takes XXH3 for every string-like type alike, so the
// two sides of a join on a string and a large string (or a view) find
// each other; NULL hashes as the shuffle hashes it, and non-string
// columns hash as the shuffle does.
func TestHashTableKeysStringTypes(t *testing.T) {
	vals := []string{"", "a", "AAAAAAAABAAA", "a string longer than sixteen bytes"}
	var want []uint32
	for _, dt := range []arrow.DataType{arrow.BinaryTypes.String, arrow.BinaryTypes.LargeString, arrow.BinaryTypes.Binary,
		arrow.BinaryTypes.LargeBinary, arrow.BinaryTypes.StringView, arrow.BinaryTypes.BinaryView} {
		b := array.NewBuilder(memory.DefaultAllocator, dt)
		for _, v := range vals {
			switch bb := b.(type) {
			case *array.BinaryBuilder:
				bb.AppendString(v)
			case *array.BinaryViewBuilder:
				bb.AppendString(v)
			default:
				if err := b.AppendValueFromString(v); err != nil {
					t.Fatal(err)
				}
			}
		}
		b.AppendNull()
		a := b.NewArray()
		b.Release()
		got := make([]uint32, a.Len())
		hashTableKeys([]arrow.Array{a}, got, make([]uint32, a.Len()))
		a.Release()
		if got[len(vals)] != nullHash {
			t.Fatalf("%s: NULL hashes to %x", dt, got[len(vals)])
		}
		if want == nil {
			want = got
			continue
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: %q hashes to %x, a string to %x", dt, vals[min(i, len(vals)-1)], got[i], want[i])
			}
		}
	}
	ints := array.NewInt64Builder(memory.DefaultAllocator)
	ints.AppendValues([]int64{0, 7, -1}, nil)
	ia := ints.NewArray()
	ints.Release()
	defer ia.Release()
	got, shuffle := make([]uint32, 3), make([]uint32, 3)
	hashTableKeys([]arrow.Array{ia}, got, make([]uint32, 3))
	HashColumns([]arrow.Array{ia}, shuffle)
	for i := range got {
		if got[i] != shuffle[i] {
			t.Fatalf("int64 %d: table hash %x, shuffle hash %x", i, got[i], shuffle[i])
		}
	}
}
