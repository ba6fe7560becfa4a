package pruning

import (
	"hash/maphash"
	"math"
	"math/bits"
)

// bloomFilter is a plain bit-array bloom filter over 64-bit hashes, with k
// probe positions derived by double hashing (Kirsch–Mitzenmacher). It has
// no false negatives; its false-positive rate is about fpr while it holds
// at most the count it was sized for.
type bloomFilter struct {
	bits []uint64
	mask uint64 // number of bits - 1 (a power of two)
	k    int
}

// newBloomFilter sizes a filter for n values at false-positive rate fpr:
// m = -n ln(fpr) / ln(2)^2 bits, rounded up to a power of two (which only
// lowers the rate), and k = m/n ln 2 probes.
func newBloomFilter(n int, fpr float64) *bloomFilter {
	n = max(n, 1)
	m := uint64(math.Ceil(-float64(n) * math.Log(fpr) / (math.Ln2 * math.Ln2)))
	m = max(m, 64)
	m = 1 << bits.Len64(m-1)
	k := int(math.Round(float64(m) / float64(n) * math.Ln2))
	k = min(max(k, 1), 16)
	return &bloomFilter{bits: make([]uint64, m/64), mask: m - 1, k: k}
}

// add inserts a hash; it reports whether the hash was (maybe) already there.
func (b *bloomFilter) add(h uint64) bool {
	h1, h2 := h, bits.RotateLeft64(h, 32)|1
	present := true
	for i := 0; i < b.k; i++ {
		pos := (h1 + uint64(i)*h2) & b.mask
		w, bit := pos>>6, uint64(1)<<(pos&63)
		if b.bits[w]&bit == 0 {
			present = false
			b.bits[w] |= bit
		}
	}
	return present
}

// has reports whether h may have been added (never false for one that was).
func (b *bloomFilter) has(h uint64) bool {
	h1, h2 := h, bits.RotateLeft64(h, 32)|1
	for i := 0; i < b.k; i++ {
		pos := (h1 + uint64(i)*h2) & b.mask
		if b.bits[pos>>6]&(uint64(1)<<(pos&63)) == 0 {
			return false
		}
	}
	return true
}

func (b *bloomFilter) sizeBytes() int64 { return int64(len(b.bits)) * 8 }

// scalableBloom grows by adding filters of twice the previous capacity as
// values arrive, each with a tighter rate so the sum stays near the target
// (Almeida et al., "Scalable Bloom Filters"). Past maxBloomBytes in total
// it stops growing: the last filter takes every further value and its
// false-positive rate rises, but memory stays bounded and there are still
// no false negatives.
type scalableBloom struct {
	layers   []*bloomFilter
	capacity int // of the last layer
	inLast   int // distinct-looking values added to the last layer
	fpr      float64
	bytes    int64
}

// maxBloomBytes bounds one key column's bloom filters.
const maxBloomBytes = 16 << 20

func newScalableBloom(capacity int, fpr float64) *scalableBloom {
	s := &scalableBloom{fpr: fpr}
	s.grow(capacity)
	return s
}

func (s *scalableBloom) grow(capacity int) {
	// Layer i gets rate fpr/2^(i+1): the rates sum to less than fpr.
	rate := s.fpr / math.Pow(2, float64(len(s.layers)+1))
	l := newBloomFilter(capacity, rate)
	s.layers = append(s.layers, l)
	s.capacity, s.inLast = capacity, 0
	s.bytes += l.sizeBytes()
}

func (s *scalableBloom) add(h uint64) {
	if s.has(h) {
		return
	}
	if s.inLast >= s.capacity && s.bytes+2*s.layers[len(s.layers)-1].sizeBytes() <= maxBloomBytes {
		s.grow(2 * s.capacity)
	}
	s.layers[len(s.layers)-1].add(h)
	s.inLast++
}

func (s *scalableBloom) has(h uint64) bool {
	for _, l := range s.layers {
		if l.has(h) {
			return true
		}
	}
	return false
}

// hashInt mixes an integer key (murmur3's 64-bit finalizer): consecutive
// keys, the common case for surrogate keys, land far apart.
func hashInt(v int64) uint64 {
	x := uint64(v)
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// stringSeed is fixed per process: collectors and scans of one query run
// in the same process, so they hash alike.
var stringSeed = maphash.MakeSeed()

func hashString(s string) uint64 { return maphash.String(stringSeed, s) }
