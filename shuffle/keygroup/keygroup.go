package keygroup

import (
	"fmt"
	"math"
	"math/bits"
)

// MaxMaxParallelism is the largest number of key groups a plan may use
// (Flink's UPPER_BOUND_MAX_PARALLELISM).
const MaxMaxParallelism = 32768

// minDefaultMaxParallelism is Flink's DEFAULT_LOWER_BOUND_MAX_PARALLELISM:
// small jobs still get enough key groups to be rescaled later.
const minDefaultMaxParallelism = 128

// DefaultMaxParallelism is Flink's default number of key groups for an
// operator of parallelism p: 1.5 p rounded up to a power of two, at least
// 128 and at most MaxMaxParallelism. The headroom lets a later run (or
// the adaptive scheduler) raise the parallelism without re-planning.
func DefaultMaxParallelism(p int) int {
	if p < 1 {
		p = 1
	}
	n := roundUpToPowerOfTwo(p + p/2)
	return min(max(n, minDefaultMaxParallelism), MaxMaxParallelism)
}

func roundUpToPowerOfTwo(x int) int {
	if x <= 1 {
		return 1
	}
	if x > MaxMaxParallelism {
		// Everything above is clamped by the caller anyway; avoid overflow.
		return MaxMaxParallelism * 2
	}
	return 1 << bits.Len(uint(x-1))
}

// Check validates a (parallelism, maxParallelism) pair. A parallelism above
// maxParallelism is an error rather than a silent clamp: some tasks would
// own no key group and the user asked for something the plan cannot give.
func Check(parallelism, maxParallelism int) error {
	if maxParallelism < 1 || maxParallelism > MaxMaxParallelism {
		return fmt.Errorf("max parallelism (number of key groups) must be between 1 and %d, got %d; set pipeline.max-parallelism", MaxMaxParallelism, maxParallelism)
	}
	if parallelism < 1 {
		return fmt.Errorf("parallelism must be at least 1, got %d", parallelism)
	}
	if parallelism > maxParallelism {
		return fmt.Errorf("parallelism %d is above the max parallelism (number of key groups) %d; lower parallelism.default or raise pipeline.max-parallelism", parallelism, maxParallelism)
	}
	return nil
}

// Murmur is Flink's MathUtils.murmurHash: one murmur3 mixing round of the
// 32-bit input followed by the murmur3 finalizer, returned as a
// non-negative int32. Key hashes from columnar hashing are often poorly
// spread in their low bits; this scrambles them before the modulo.
func Murmur(h uint32) uint32 {
	c := h * 0xcc9e2d51
	c = bits.RotateLeft32(c, 15)
	c *= 0x1b873593
	c = bits.RotateLeft32(c, 13)
	c = c*5 + 0xe6546b64
	c ^= 4
	c = BitMix(c)
	s := int32(c)
	switch {
	case s >= 0:
		return uint32(s)
	case s != math.MinInt32:
		return uint32(-s)
	default:
		return 0
	}
}

// BitMix is the murmur3 32-bit finalizer (Flink's MathUtils.bitMix), a
// bijection of uint32 that spreads every input bit over the output.
func BitMix(h uint32) uint32 {
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}

// ForHash is the key group of a row whose key hashes to keyHash.
func ForHash(keyHash uint32, maxParallelism int) int {
	// Murmur's result is below 2^31, so the modulo is never negative.
	return int(Murmur(keyHash) % uint32(maxParallelism))
}

// OperatorIndex is the task (of parallelism tasks) that owns keyGroup under
// Flink's count-based ranges; it agrees with Range.
func OperatorIndex(keyGroup, parallelism, maxParallelism int) int {
	return keyGroup * parallelism / maxParallelism
}

// Range is the inclusive key-group range [start, end] that task i of
// parallelism tasks reads. Ranges of consecutive tasks are contiguous and
// cover 0..maxParallelism-1 exactly once.
func Range(maxParallelism, parallelism, i int) (start, end int) {
	start = (i*maxParallelism + parallelism - 1) / parallelism
	end = ((i+1)*maxParallelism - 1) / parallelism
	return start, end
}
