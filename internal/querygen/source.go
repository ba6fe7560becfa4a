package querygen

import "math/rand/v2"

// Source makes the generator's choices: Intn returns a number in [0, n).
type Source interface {
	Intn(n int) int
}

// NewRand returns a seeded source: the same seed gives the same queries.
func NewRand(seed uint64) Source {
	return randSource{rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))}
}

type randSource struct{ r *rand.Rand }

func (s randSource) Intn(n int) int { return s.r.IntN(n) }

// BytesSource draws choices from a fuzzer's bytes. Once they run out every
// choice is 0, the first alternative, which the generator arranges to be
// the one that ends the query soonest, so generation always stops.
type BytesSource struct {
	Data []byte
	pos  int
}

// Intn takes one byte (two when n > 256).
func (b *BytesSource) Intn(n int) int {
	if n <= 1 || b.pos >= len(b.Data) {
		return 0
	}
	v := int(b.Data[b.pos])
	b.pos++
	if n > 256 && b.pos < len(b.Data) {
		v = v<<8 | int(b.Data[b.pos])
		b.pos++
	}
	return v % n
}
