package exec

import (
	"math/bits"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// Sorting on packed keys. A sort whose keys are all integer-like (integers,
// dates, times, timestamps, booleans, decimals whose values fit in 64
// bits) or strings compared byte-wise (coded by the rank of their value
// among the column's distinct values, stringRanks) maps every row to one
// unsigned code that orders as the keys do:
// per key the value's offset from the key's minimum, reversed for DESC,
// with NULL one code below or above every value, and the keys' codes
// concatenated, each in as many bits as its range needs. When the codes
// fit in 64 bits the rows are sorted by them with a stable LSD radix sort,
// with no comparator calls at all: window partitions (q51's item and
// date, q47's store and month) and ORDER BY of surrogate keys and dates
// sort this way, and so do q47's strings. Anything else (floats, collated
// strings, codes past 64 bits) keeps the comparators of keyCmps.

// packedKey is one key column turned into codes.
type packedKey struct {
	vals    []int64
	valid   []byte // validity bitmap (nil: no NULLs)
	off     int
	min     int64
	count   uint64 // distinct codes of the values: max - min + 1
	hasNull bool
	bits    uint
}

// packedMinRows is the input size from which radix passes pay for their
// 256 counters; smaller inputs sort the packed codes with pdqsort.
const packedMinRows = 256

// packedSortPermutation writes into perm (n entries) the order of the n
// rows sorted by keys, ties in input order, and reports whether it could:
// false when a key is not integer-like or the codes need more than 64
// bits, and perm is then untouched.
func packedSortPermutation(keys []arrow.Array, specs []SortKey, perm []int32) bool {
	n := len(perm)
	pks := make([]packedKey, len(keys))
	var total uint
	for k, a := range keys {
		if !packKey(&pks[k], a, n, 64-total) {
			return false
		}
		total += pks[k].bits
		if total > 64 {
			return false
		}
	}
	codes := make([]uint64, n)
	for k := range pks {
		pk := &pks[k]
		if pk.bits == 0 {
			continue // one value for every row: it orders nothing
		}
		desc, nullsFirst := specs[k].Desc, specs[k].NullsFirst
		nullCode := uint64(0)
		shift := uint64(0)
		if pk.hasNull {
			if nullsFirst {
				shift = 1
			} else {
				nullCode = pk.count
			}
		}
		base := uint64(pk.min)
		top := pk.count - 1
		for i := range codes {
			var c uint64
			if pk.valid != nil && !bitIsSet(pk.valid, pk.off+i) {
				c = nullCode
			} else {
				c = uint64(pk.vals[i]) - base
				if desc {
					c = top - c
				}
				c += shift
			}
			codes[i] = codes[i]<<pk.bits | c
		}
	}
	if total <= 32 {
		// Code and row index in one word: sorting the words sorts by
		// code, ties by row.
		for i := range codes {
			codes[i] = codes[i]<<32 | uint64(i)
		}
		if n < packedMinRows {
			slices.Sort(codes)
		} else {
			radixSortWords(codes, make([]uint64, n), 32, 32+total)
		}
		for i, c := range codes {
			perm[i] = int32(uint32(c))
		}
		return true
	}
	pairs := make([]codeRow, n)
	for i, c := range codes {
		pairs[i] = codeRow{c, int32(i)}
	}
	if n < packedMinRows {
		slices.SortFunc(pairs, func(a, b codeRow) int {
			switch {
			case a.code < b.code:
				return -1
			case a.code > b.code:
				return 1
			}
			return int(a.row - b.row)
		})
	} else {
		radixSortPairs(pairs, make([]codeRow, n), total)
	}
	for i, p := range pairs {
		perm[i] = p.row
	}
	return true
}

func bitIsSet(b []byte, i int) bool { return b[i>>3]&(1<<(uint(i)&7)) != 0 }

// packKey reads column a (n rows) into pk, reporting false for a type
// that has no integer codes, a decimal value past 64 bits, or codes that
// need more than room bits.
func packKey(pk *packedKey, a arrow.Array, n int, room uint) bool {
	dt := a.DataType()
	switch {
	case plainStringType(dt):
		if !stringRanks(pk, a, n, room) {
			return false
		}
	case intKeyType(dt):
		pk.vals = intKeys(a, nil)
	case dt.ID() == arrow.BOOL:
		b := a.(*array.Boolean)
		pk.vals = make([]int64, n)
		for i := range pk.vals {
			if b.Value(i) {
				pk.vals[i] = 1
			}
		}
	case dt.ID() == arrow.DECIMAL128:
		v := arrow.GetValues[decimal128.Num](a.Data(), 1)
		pk.vals = make([]int64, n)
		for i, x := range v {
			lo := x.LowBits()
			if x.HighBits() != int64(lo)>>63 {
				if a.IsValid(i) {
					return false
				}
				continue // a NULL slot's bytes are not a value
			}
			pk.vals[i] = int64(lo)
		}
	default:
		return false
	}
	if a.NullN() > 0 {
		pk.hasNull = true
		pk.valid, pk.off = validity(a)
	}
	first := true
	var lo, hi int64
	for i, v := range pk.vals {
		if pk.valid != nil && !bitIsSet(pk.valid, pk.off+i) {
			continue
		}
		if first {
			lo, hi, first = v, v, false
			continue
		}
		lo, hi = min(lo, v), max(hi, v)
	}
	pk.min = lo
	span := uint64(hi) - uint64(lo) // hi >= lo, so this is the true difference
	if span == ^uint64(0) {
		return false // 2^64 values: no room for anything else
	}
	pk.count = span + 1
	codes := pk.count
	if pk.hasNull {
		codes++
		if codes == 0 {
			return false
		}
	}
	pk.bits = uint(bits.Len64(codes - 1))
	return pk.bits <= room
}

// plainStringType reports whether dt is a string or binary type compared
// byte-wise (a collated string orders by its collation's keys instead).
func plainStringType(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW, arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW:
		return true
	}
	return false
}

// stringRanks codes a string column by the rank of each row's value among
// the column's distinct values (byte-wise order, as the comparators
// compare), so strings sort as integers: the distinct values are found
// with a map and only they are sorted. Window partitions and ORDER BY
// keys are mostly a few categories, brands or names (q47's category,
// brand, store and company: 21 bits in all). It gives up once the
// distinct values need more than room bits.
func stringRanks(pk *packedKey, a arrow.Array, n int, room uint) bool {
	value, err := varBytes(a)
	if err != nil {
		return false
	}
	limit := 1 << min(room, 31)
	ids := make(map[string]int32)
	var distinct []string
	pk.vals = make([]int64, n)
	for i := 0; i < n; i++ {
		if a.IsNull(i) {
			continue
		}
		v := value(i)
		id, ok := ids[v]
		if !ok {
			if len(distinct) >= limit {
				return false
			}
			id = int32(len(distinct))
			ids[v] = id
			distinct = append(distinct, v)
		}
		pk.vals[i] = int64(id)
	}
	order := make([]int32, len(distinct))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(x, y int32) int { return strings.Compare(distinct[x], distinct[y]) })
	rank := make([]int64, len(distinct))
	for r, id := range order {
		rank[id] = int64(r)
	}
	if len(rank) > 0 {
		for i, id := range pk.vals {
			pk.vals[i] = rank[id] // a NULL row's 0 is never read
		}
	}
	return true
}

// codeRow is a row's code when the codes need more than 32 bits.
type codeRow struct {
	code uint64
	row  int32
}

// radixSortWords sorts words by their bits [lo, hi), stably (LSD, one
// byte a pass; a pass whose byte is the same in every word is skipped).
func radixSortWords(a, tmp []uint64, lo, hi uint) {
	orig := a
	for shift := lo; shift < hi; shift += 8 {
		var count [256]int
		for _, w := range a {
			count[byte(w>>shift)]++
		}
		if count[byte(a[0]>>shift)] == len(a) {
			continue
		}
		pos := 0
		for d := range count {
			c := count[d]
			count[d] = pos
			pos += c
		}
		for _, w := range a {
			d := byte(w >> shift)
			tmp[count[d]] = w
			count[d]++
		}
		a, tmp = tmp, a
	}
	if &a[0] != &orig[0] {
		copy(orig, a) // an odd number of passes left the words in tmp
	}
}

// radixSortPairs sorts pairs by code (its low total bits), stably.
func radixSortPairs(a, tmp []codeRow, total uint) {
	orig := a
	for shift := uint(0); shift < total; shift += 8 {
		var count [256]int
		for _, p := range a {
			count[byte(p.code>>shift)]++
		}
		if count[byte(a[0].code>>shift)] == len(a) {
			continue
		}
		pos := 0
		for d := range count {
			c := count[d]
			count[d] = pos
			pos += c
		}
		for _, p := range a {
			d := byte(p.code >> shift)
			tmp[count[d]] = p
			count[d]++
		}
		a, tmp = tmp, a
	}
	if &a[0] != &orig[0] {
		copy(orig, a) // an odd number of passes left the pairs in tmp
	}
}
