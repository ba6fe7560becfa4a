package pruning

import (
	"math/rand/v2"
	"testing"
)

// TestIntSet checks membership, size and iteration against a Go map, including keys that
// collide in the table, negative keys and the empty-slot sentinel.
func TestIntSet(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 7, 100, 5000} {
		want := map[int64]bool{}
		var keys []int64
		for len(keys) < n {
			k := rng.Int64N(1<<20) - 1<<19
			if len(keys)%10 == 0 {
				k = int64(len(keys)) << 40 // the same low bits: probes chain
			}
			if !want[k] {
				want[k] = true
				keys = append(keys, k)
			}
		}
		if n == 7 {
			keys = append(keys, intSetEmpty, intSetEmpty) // duplicates too
			want[intSetEmpty] = true
		}
		// Built at once, and grown from empty one key at a time.
		s := newIntSet(keys)
		grown := newIntSet(nil)
		for _, k := range keys {
			grown.add(k)
		}
		for _, set := range []*intSet{s, grown} {
			if set.len() != len(want) {
				t.Fatalf("n=%d: len %d, want %d", n, set.len(), len(want))
			}
			seen := map[int64]bool{}
			set.each(func(k int64) { seen[k] = true })
			if len(seen) != len(want) {
				t.Fatalf("n=%d: each gave %d keys, want %d", n, len(seen), len(want))
			}
			for k := range seen {
				if !want[k] {
					t.Fatalf("n=%d: each gave %d, never added", n, k)
				}
			}
		}
		s = grown
		for k := range want {
			if !s.has(k) {
				t.Fatalf("n=%d: key %d missing", n, k)
			}
		}
		for i := 0; i < 20000; i++ {
			k := rng.Int64N(1<<21) - 1<<20
			if i%3 == 0 {
				k = int64(i) << 40
			}
			if s.has(k) != want[k] {
				t.Fatalf("n=%d: has(%d) = %v, want %v", n, k, s.has(k), want[k])
			}
		}
		if n != 7 && s.has(intSetEmpty) {
			t.Fatalf("n=%d: the sentinel matched", n)
		}
	}
}
