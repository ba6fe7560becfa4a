package pruning

import (
	"math/bits"

	"github.com/zeebo/xxh3"
)

// bloomFilter is a split-block bloom filter (the layout Parquet uses):
// a hash picks one 256-bit block, and eight bits are set in it, one per
// 32-bit word, so a lookup touches one cache line however many "hashes"
// it tests. It has no false negatives; its false-positive rate is about
// 1% at 11 bits per value, lower with more.
type bloomFilter struct {
	blocks []sbbfBlock
}

type sbbfBlock [8]uint32

// sbbfSalt are Parquet's salts: odd constants that spread one 32-bit hash
// into eight bit positions.
var sbbfSalt = [8]uint32{0x47b6137b, 0x44974d91, 0x8824ad5b, 0xa2b7289d, 0x705495c7, 0x2df1424b, 0x9efc4947, 0x5c6bfb31}

// bloomBitsPerValue sizes filters for about 0.5% false positives.
const bloomBitsPerValue = 14

// newBloomFilter sizes a filter for n values, rounded up to a power of two
// blocks (which only lowers the rate).
func newBloomFilter(n int) *bloomFilter {
	n = max(n, 1)
	nb := (uint64(n)*bloomBitsPerValue + 255) / 256
	nb = 1 << bits.Len64(max(nb, 1)-1)
	return &bloomFilter{blocks: make([]sbbfBlock, nb)}
}

func (b *bloomFilter) block(h uint64) (*sbbfBlock, uint32) {
	// The high half picks the block (a power of two, so a mask), the low
	// half the bits inside it.
	return &b.blocks[(h>>32)&uint64(len(b.blocks)-1)], uint32(h)
}

// add inserts a hash.
func (b *bloomFilter) add(h uint64) {
	blk, x := b.block(h)
	for i := range blk {
		blk[i] |= 1 << ((x * sbbfSalt[i]) >> 27)
	}
}

// has reports whether h may have been added (never false for one that was).
func (b *bloomFilter) has(h uint64) bool {
	blk, x := b.block(h)
	for i := range blk {
		if blk[i]&(1<<((x*sbbfSalt[i])>>27)) == 0 {
			return false
		}
	}
	return true
}

func (b *bloomFilter) sizeBytes() int64 { return int64(len(b.blocks)) * 32 }

// scalableBloom grows by adding filters of four times the previous
// capacity as values arrive (Almeida et al., "Scalable Bloom Filters"), so
// a lookup tests few filters. Past maxBloomBytes in total
// it stops growing: the last filter takes every further value and its
// false-positive rate rises, but memory stays bounded and there are still
// no false negatives.
type scalableBloom struct {
	layers   []*bloomFilter
	capacity int // of the last layer
	inLast   int // distinct-looking values added to the last layer
	bytes    int64
}

// maxBloomBytes bounds one key column's bloom filters.
const maxBloomBytes = 16 << 20

func newScalableBloom(capacity int) *scalableBloom {
	s := &scalableBloom{}
	s.grow(capacity)
	return s
}

func (s *scalableBloom) grow(capacity int) {
	l := newBloomFilter(capacity)
	s.layers = append(s.layers, l)
	s.capacity, s.inLast = capacity, 0
	s.bytes += l.sizeBytes()
}

func (s *scalableBloom) add(h uint64) {
	if s.has(h) {
		return
	}
	if s.inLast >= s.capacity && s.bytes+4*s.layers[len(s.layers)-1].sizeBytes() <= maxBloomBytes {
		s.grow(4 * s.capacity)
	}
	s.layers[len(s.layers)-1].add(h)
	s.inLast++
}

// merge adds every value of o to s. Layers of the same size (both started
// at the same capacity, as a collector's filters do) are OR-ed block by
// block; o's layers beyond s's are appended. No value of either is lost.
func (s *scalableBloom) merge(o *scalableBloom) {
	appended := false
	for i, l := range o.layers {
		if i < len(s.layers) && len(s.layers[i].blocks) == len(l.blocks) {
			dst := s.layers[i].blocks
			for b := range l.blocks {
				for w := range dst[b] {
					dst[b][w] |= l.blocks[b][w]
				}
			}
			continue
		}
		c := &bloomFilter{blocks: append([]sbbfBlock(nil), l.blocks...)}
		s.layers = append(s.layers, c)
		s.bytes += c.sizeBytes()
		appended = true
	}
	if appended {
		s.capacity, s.inLast = o.capacity, o.inLast
	} else {
		s.inLast += o.inLast
	}
}

func (s *scalableBloom) has(h uint64) bool {
	for i := len(s.layers) - 1; i >= 0; i-- { // the largest holds the most
		if s.layers[i].has(h) {
			return true
		}
	}
	return false
}

// hashInt mixes an integer key (murmur3's 64-bit finalizer, a fixed
// function like hashString): consecutive keys, the common case for
// surrogate keys, land far apart.
func hashInt(v int64) uint64 {
	x := uint64(v)
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// hashString hashes a string key with XXH3-64 (seed 0), a fixed function:
// a filter built by collectors in one process is tested by scans in
// another, so the hash must not depend on the process (as maphash's
// random seed does). bloom_test.go pins known values.
func hashString(s string) uint64 { return xxh3.HashString(s) }
