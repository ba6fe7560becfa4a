package pruning

import "math/bits"

// intSet is an open-addressing hash set of int64 keys. A collector adds
// every key of its build side to one (a Go map's hashing and rehashing
// were 7% of q75, whose collectors gather 65k ticket numbers), and a
// frozen filter's set is looked up for every row of a probed batch (Go's
// map, memhash plus group probing, was a third of q84's and q1's CPU at
// scale 1); a multiplicative hash with linear probing over a table at
// most half full costs a fraction of either.
type intSet struct {
	slots []int64 // empty slots hold the sentinel
	shift uint    // 64 - log2(len(slots))
	n     int     // keys in slots
	// hasSentinel says whether the sentinel value itself is a key (it
	// cannot mark itself in the table).
	hasSentinel bool
}

// intSetEmpty marks an unused slot; a real key equal to it is recorded in
// hasSentinel instead.
const intSetEmpty = -1 << 63

func newIntSet(keys []int64) *intSet {
	s := &intSet{}
	s.alloc(max(2*len(keys), 8))
	for _, k := range keys {
		s.add(k)
	}
	return s
}

// alloc makes at least n empty slots (a power of two).
func (s *intSet) alloc(n int) {
	logn := bits.Len(uint(n - 1))
	s.slots, s.shift = make([]int64, 1<<logn), uint(64-logn)
	for i := range s.slots {
		s.slots[i] = intSetEmpty
	}
}

// hash is Fibonacci hashing: the high bits of the key times 2^64/phi.
func (s *intSet) hash(k int64) uint64 {
	return (uint64(k) * 0x9E3779B97F4A7C15) >> s.shift
}

// len is the number of keys.
func (s *intSet) len() int {
	if s.hasSentinel {
		return s.n + 1
	}
	return s.n
}

// add inserts k, doubling the table when it would pass half full.
func (s *intSet) add(k int64) {
	if k == intSetEmpty {
		s.hasSentinel = true
		return
	}
	if 2*(s.n+1) > len(s.slots) {
		s.reserve(s.n + 1)
	}
	s.insert(k)
}

// reserve grows the table to hold n keys at most half full. Keys move in
// slot order, which is hash order: into a table at least as large they
// land in order too, but into a smaller one they pile up in runs that
// every later probe walks, so a set merged into another reserves room for
// both first.
func (s *intSet) reserve(n int) {
	if 2*n <= len(s.slots) {
		return
	}
	old := s.slots
	s.alloc(max(2*n, 2*len(old)))
	s.n = 0
	for _, x := range old {
		if x != intSetEmpty {
			s.insert(x)
		}
	}
}

// insert puts k (not the sentinel) in a table with room for it.
func (s *intSet) insert(k int64) {
	mask := uint64(len(s.slots) - 1)
	for h := s.hash(k); ; h = (h + 1) & mask {
		switch s.slots[h] {
		case k:
			return
		case intSetEmpty:
			s.slots[h] = k
			s.n++
			return
		}
	}
}

// each calls f with every key, in slot order.
func (s *intSet) each(f func(int64)) {
	if s.hasSentinel {
		f(intSetEmpty)
	}
	for _, x := range s.slots {
		if x != intSetEmpty {
			f(x)
		}
	}
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
