package pruning

import "math/bits"

// intSet is a read-only open-addressing hash set of int64 keys, built
// once when a filter freezes. Every row of a probed batch looks a key up
// in it, and Go's map (memhash plus group probing) was a third of q84's
// and q1's CPU at scale 1; a multiplicative hash with linear probing over
// a table at most half full costs a fraction of that.
type intSet struct {
	slots []int64 // empty slots hold the sentinel
	shift uint    // 64 - log2(len(slots))
	// hasSentinel says whether the sentinel value itself is a key (it
	// cannot mark itself in the table).
	hasSentinel bool
}

// intSetEmpty marks an unused slot; a real key equal to it is recorded in
// hasSentinel instead.
const intSetEmpty = -1 << 63

func newIntSet(keys []int64) *intSet {
	n := max(2*len(keys), 8)
	logn := bits.Len(uint(n - 1)) // round up to a power of two
	s := &intSet{slots: make([]int64, 1<<logn), shift: uint(64 - logn)}
	for i := range s.slots {
		s.slots[i] = intSetEmpty
	}
	mask := uint64(len(s.slots) - 1)
	for _, k := range keys {
		if k == intSetEmpty {
			s.hasSentinel = true
			continue
		}
		for h := s.hash(k); ; h = (h + 1) & mask {
			if s.slots[h] == k {
				break
			}
			if s.slots[h] == intSetEmpty {
				s.slots[h] = k
				break
			}
		}
	}
	return s
}

// hash is Fibonacci hashing: the high bits of the key times 2^64/phi.
func (s *intSet) hash(k int64) uint64 {
	return (uint64(k) * 0x9E3779B97F4A7C15) >> s.shift
}

func (s *intSet) has(k int64) bool {
	if k == intSetEmpty {
		return s.hasSentinel
	}
	slots := s.slots
	mask := uint64(len(slots) - 1)
	for h := s.hash(k); ; h = (h + 1) & mask {
		switch slots[h] {
		case k:
			return true
		case intSetEmpty:
			return false
		}
	}
}
