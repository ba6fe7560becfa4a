package exec

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/zeebo/xxh3"

	"github.com/fsql-dev/fsql/exec/expr"
)

// nullHash is the hash of a NULL key column. It is a fixed constant, so
// rows whose key is NULL always meet in the same key group, whichever
// producer wrote them.
const nullHash uint32 = 0x9b2f5f3d

// millisPerDay converts Date64 (milliseconds) to days so that a Date32 and
// a Date64 of the same day hash alike.
const millisPerDay = 86_400_000

// HashColumns writes into out[i] the shuffle hash of row i's composite key
// made of cols (all of the same length, len(out) rows). It is defined once
// here because producers of every exchange must agree on it:
//
//   - per column, NULL hashes to a fixed constant;
//   - a composite key combines as h = h*31 + colHash, starting from 0;
//   - every integer type, dates (as days), times and timestamps hash by
//     value as int64, so int32 and int64 keys of equal value hash equal;
//   - decimals hash by their 128-bit unscaled value (an unscaled value that
//     fits int64 hashes like that int64); scales are the planner's job;
//   - floats hash by the bits of their float64 value with -0 = 0 and one NaN;
//   - strings and binaries hash their bytes with FNV-1a; a string with an
//     explicit collation hashes its collation key (expr.Keys);
//   - dictionary arrays hash their values, not their indices.
//
// Types not listed hash their ValueStr text: correct, but slow.
func HashColumns(cols []arrow.Array, out []uint32) {
	hashKeyColumns(cols, out, make([]uint32, len(out)))
}

// hashKeyColumns is HashColumns with the caller's scratch (len(out)
// values), for callers that hash every batch.
func hashKeyColumns(cols []arrow.Array, out, scratch []uint32) {
	if len(cols) == 1 {
		hashColumn(cols[0], out)
		return
	}
	clear(out)
	for _, c := range cols {
		hashColumn(c, scratch)
		for i, h := range scratch {
			out[i] = out[i]*31 + h
		}
	}
}

// hashColumn writes the per-row hash of one column into out.
func hashColumn(a arrow.Array, out []uint32) {
	n := len(out)
	if n == 0 {
		return
	}
	switch a := a.(type) {
	case *array.Int8:
		v := a.Int8Values()
		for i := 0; i < n; i++ {
			out[i] = hashInt64(int64(v[i]))
		}
	case *array.Int16:
		v := a.Int16Values()
		for i := 0; i < n; i++ {
			out[i] = hashInt64(int64(v[i]))
		}
	case *array.Int32:
		v := a.Int32Values()
		for i := 0; i < n; i++ {
			out[i] = hashInt64(int64(v[i]))
		}
	case *array.Int64:
		v := a.Int64Values()
		for i := 0; i < n; i++ {
			out[i] = hashInt64(v[i])
		}
	case *array.Uint8:
		v := a.Uint8Values()
		for i := 0; i < n; i++ {
			out[i] = hashInt64(int64(v[i]))
		}
	case *array.Uint16:
		v := a.Uint16Values()
		for i := 0; i < n; i++ {
			out[i] = hashInt64(int64(v[i]))
		}
	case *array.Uint32:
		v := a.Uint32Values()
		for i := 0; i < n; i++ {
			out[i] = hashInt64(int64(v[i]))
		}
	case *array.Uint64:
		v := a.Uint64Values()
		for i := 0; i < n; i++ {
			out[i] = hashInt64(int64(v[i]))
		}
	case *array.Date32:
		v := a.Date32Values()
		for i := 0; i < n; i++ {
			out[i] = hashInt64(int64(v[i]))
		}
	case *array.Date64:
		v := a.Date64Values()
		for i := 0; i < n; i++ {
			d := int64(v[i])
			days := d / millisPerDay
			if d%millisPerDay < 0 {
				days-- // floor, for dates before 1970
			}
			out[i] = hashInt64(days)
		}
	case *array.Timestamp:
		v := a.TimestampValues()
		for i := 0; i < n; i++ {
			out[i] = hashInt64(int64(v[i]))
		}
	case *array.Time32:
		v := a.Time32Values()
		for i := 0; i < n; i++ {
			out[i] = hashInt64(int64(v[i]))
		}
	case *array.Time64:
		v := a.Time64Values()
		for i := 0; i < n; i++ {
			out[i] = hashInt64(int64(v[i]))
		}
	case *array.Boolean:
		for i := 0; i < n; i++ {
			if a.Value(i) {
				out[i] = hashInt64(1)
			} else {
				out[i] = hashInt64(0)
			}
		}
	case *array.Decimal128:
		v := a.Values()
		for i := 0; i < n; i++ {
			hi, lo := v[i].HighBits(), v[i].LowBits()
			if hi == int64(lo)>>63 {
				out[i] = hashInt64(int64(lo))
			} else {
				out[i] = hashInt64(hi)*31 + hashInt64(int64(lo))
			}
		}
	case *array.Float32:
		v := a.Float32Values()
		for i := 0; i < n; i++ {
			out[i] = hashFloat64(float64(v[i]))
		}
	case *array.Float64:
		v := a.Float64Values()
		for i := 0; i < n; i++ {
			out[i] = hashFloat64(v[i])
		}
	case *array.String:
		offs, data := a.ValueOffsets(), a.ValueBytes()
		base := offs[0] // ValueBytes starts at the first value's offset
		for i := 0; i < n; i++ {
			out[i] = fnv1a(data[offs[i]-base : offs[i+1]-base])
		}
	case *array.LargeString:
		offs, data := a.ValueOffsets(), a.ValueBytes()
		base := offs[0]
		for i := 0; i < n; i++ {
			out[i] = fnv1a(data[offs[i]-base : offs[i+1]-base])
		}
	case *array.Binary:
		offs, data := a.ValueOffsets(), a.ValueBytes()
		base := offs[0]
		for i := 0; i < n; i++ {
			out[i] = fnv1a(data[offs[i]-base : offs[i+1]-base])
		}
	case *array.LargeBinary:
		offs, data := a.ValueOffsets(), a.ValueBytes()
		base := offs[0]
		for i := 0; i < n; i++ {
			out[i] = fnv1a(data[offs[i]-base : offs[i+1]-base])
		}
	case *array.Null:
		// every row is NULL; the loop below writes nullHash
	case *expr.CollatedArray:
		// Strings equal under the collation hash alike: hash its keys.
		k := expr.Keys(memory.DefaultAllocator, a)
		hashColumn(k, out)
		k.Release()
	case *array.Dictionary:
		dict := a.Dictionary()
		dh := make([]uint32, dict.Len())
		hashColumn(dict, dh)
		for i := 0; i < n; i++ {
			if expr.IsValid(a, i) {
				out[i] = dh[a.GetValueIndex(i)]
			}
		}
	default:
		for i := 0; i < n; i++ {
			out[i] = fnv1aString(a.ValueStr(i))
		}
	}
	if a.NullN() > 0 {
		bits, off := expr.Validity(a)
		for i := 0; i < n; i++ {
			if !bitutil.BitIsSet(bits, off+i) {
				out[i] = nullHash
			}
		}
	}
}

// hashInt64 folds a 64-bit value into 32 well-mixed bits (a multiply by
// the 64-bit golden ratio, high and low halves xor-ed).
func hashInt64(v int64) uint32 {
	x := uint64(v) * 0x9e3779b97f4a7c15
	return uint32(x>>32) ^ uint32(x)
}

// hashFloat64 hashes a float's bits after making -0 equal to 0 and every
// NaN the same NaN, so SQL-equal values hash equal.
func hashFloat64(f float64) uint32 {
	switch {
	case f == 0:
		f = 0
	case f != f:
		f = math.NaN()
	}
	return hashInt64(int64(math.Float64bits(f)))
}

const (
	fnvOffset32 = 2166136261
	fnvPrime32  = 16777619
)

func fnv1a(b []byte) uint32 {
	h := uint32(fnvOffset32)
	for _, c := range b {
		h ^= uint32(c)
		h *= fnvPrime32
	}
	return h
}

func fnv1aString(s string) uint32 {
	h := uint32(fnvOffset32)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= fnvPrime32
	}
	return h
}

// hashTableKeys is hashKeyColumns for the hash tables of one task (the
// group table, the join table), whose hashes never leave it: string and
// binary columns hash their bytes with XXH3 instead of FNV-1a, which
// takes a multiply per byte (12–23% of the group table's time on q67 and
// q23a); every other column hashes as the shuffle does. Every
// string-like type goes through XXH3, so the two sides of a join on a
// string and a large string hash alike.
func hashTableKeys(cols []arrow.Array, out, scratch []uint32) {
	if len(cols) == 1 {
		hashTableColumn(cols[0], out)
		return
	}
	clear(out)
	for _, c := range cols {
		hashTableColumn(c, scratch)
		for i, h := range scratch {
			out[i] = out[i]*31 + h
		}
	}
}

// hashTableColumn is hashColumn with XXH3 for strings and binaries.
func hashTableColumn(a arrow.Array, out []uint32) {
	switch a := a.(type) {
	case *array.String:
		xxhOffsets(a.ValueOffsets(), a.ValueBytes(), out)
	case *array.Binary:
		xxhOffsets(a.ValueOffsets(), a.ValueBytes(), out)
	case *array.LargeString:
		xxhOffsets(a.ValueOffsets(), a.ValueBytes(), out)
	case *array.LargeBinary:
		xxhOffsets(a.ValueOffsets(), a.ValueBytes(), out)
	case *array.StringView:
		for i := range out {
			out[i] = fold64(xxh3.HashString(a.Value(i)))
		}
	case *array.BinaryView:
		for i := range out {
			out[i] = fold64(xxh3.Hash(a.Value(i)))
		}
	default:
		hashColumn(a, out)
		return
	}
	if a.NullN() > 0 {
		bits, off := expr.Validity(a)
		for i := range out {
			if !bitutil.BitIsSet(bits, off+i) {
				out[i] = nullHash
			}
		}
	}
}

// xxhOffsets hashes the values of an offsets-and-bytes column; data
// starts at the first value's offset.
func xxhOffsets[T int32 | int64](offs []T, data []byte, out []uint32) {
	base := offs[0]
	for i := range out {
		out[i] = fold64(xxh3.Hash(data[offs[i]-base : offs[i+1]-base]))
	}
}

func fold64(h uint64) uint32 { return uint32(h) ^ uint32(h>>32) }
