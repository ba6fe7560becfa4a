package tpcds

import "math"

// rng is a small, fast deterministic generator (splitmix64). Each chunk of
// output owns one, seeded from (seed, table, chunk), which is what makes the
// output independent of scheduling.
type rng struct{ s uint64 }

func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// newRNG derives an independent stream from a seed and any number of keys.
func newRNG(seed uint64, keys ...uint64) *rng {
	h := mix64(seed + 0x9e3779b97f4a7c15)
	for _, k := range keys {
		h = mix64(h ^ (k + 0x9e3779b97f4a7c15))
	}
	return &rng{s: h}
}

func hashString(s string) uint64 {
	h := uint64(1469598103934665603)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	return mix64(r.s)
}

// intn returns a value in [0, n).
func (r *rng) intn(n int) int {
	if n <= 1 {
		return 0
	}
	hi, _ := mulhi(r.next(), uint64(n))
	return int(hi)
}

func mulhi(a, b uint64) (uint64, uint64) {
	const mask32 = 1<<32 - 1
	a0, a1 := a&mask32, a>>32
	b0, b1 := b&mask32, b>>32
	w0 := a0 * b0
	t := a1*b0 + w0>>32
	w1 := t&mask32 + a0*b1
	return a1*b1 + t>>32 + w1>>32, a * b
}

// rangeInt returns a value in [lo, hi].
func (r *rng) rangeInt(lo, hi int) int { return lo + r.intn(hi-lo+1) }

// float returns a value in [0, 1).
func (r *rng) float() float64 { return float64(r.next()>>11) / (1 << 53) }

// chance reports true with probability p.
func (r *rng) chance(p float64) bool { return p > 0 && r.float() < p }

// geometricSkip returns how many trials to skip before the next success
// when each trial succeeds with probability p.
func (r *rng) geometricSkip(p float64) int {
	if p >= 1 {
		return 0
	}
	u := r.float()
	if u <= 0 {
		u = 1e-12
	}
	return int(math.Floor(math.Log(u) / math.Log(1-p)))
}
