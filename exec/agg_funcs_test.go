package exec

import (
	"math/big"
	"math/rand"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// divRoundBig is divRound through big.Int: the reference divRound64 must
// agree with.
func divRoundBig(v, d decimal128.Num) decimal128.Num {
	b, c := v.BigInt(), d.BigInt()
	q, r := new(big.Int).QuoRem(b, c, new(big.Int))
	r.Abs(r).Lsh(r, 1)
	if r.Cmp(new(big.Int).Abs(c)) >= 0 {
		if (b.Sign() < 0) != (c.Sign() < 0) {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return decimal128.FromBigInt(q)
}

// The machine-word division rounds half away from zero like big.Int, for
// either sign, magnitudes past 64 bits, halves exactly, and divisors up to
// 2^64-1; a divisor past 64 bits is left to the general path.
func TestDivRound64(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	word := func() uint64 {
		switch r.Intn(4) {
		case 0:
			return uint64(r.Intn(1000))
		case 1:
			return uint64(r.Int63n(1 << 40))
		}
		return r.Uint64()
	}
	cases := [][2]decimal128.Num{
		{decimal128.FromI64(5), decimal128.FromI64(2)},
		{decimal128.FromI64(-5), decimal128.FromI64(2)},
		{decimal128.FromI64(5), decimal128.FromI64(-2)},
		{decimal128.FromI64(-5), decimal128.FromI64(-2)},
		{decimal128.FromI64(7), decimal128.FromI64(3)},
		{decimal128.FromI64(0), decimal128.FromI64(9)},
		{decimal128.New(1<<62, 0), decimal128.FromI64(3)},
		{decimal128.New(-1<<62, 5), decimal128.New(0, ^uint64(0))},
		{decimal128.New(0, ^uint64(0)), decimal128.New(0, ^uint64(0))},
		{decimal128.New(0, 1<<63), decimal128.New(0, ^uint64(0))},
	}
	for i := 0; i < 20000; i++ {
		v := decimal128.New(int64(word()>>2), word())
		if r.Intn(3) == 0 {
			v = decimal128.FromI64(int64(word() >> 1))
		}
		if r.Intn(2) == 0 {
			v = v.Negate()
		}
		d := decimal128.New(0, word()|1)
		if r.Intn(2) == 0 {
			d = d.Negate()
		}
		cases = append(cases, [2]decimal128.Num{v, d})
	}
	for _, c := range cases {
		got, ok := divRound64(c[0], c[1])
		if !ok {
			t.Fatalf("%s / %s: not taken", c[0].BigInt(), c[1].BigInt())
		}
		if want := divRoundBig(c[0], c[1]); got != want {
			t.Fatalf("%s / %s = %s, want %s", c[0].BigInt(), c[1].BigInt(), got.BigInt(), want.BigInt())
		}
		if got := divRound(c[0], c[1]); got != divRoundBig(c[0], c[1]) {
			t.Fatalf("divRound(%s, %s) = %s", c[0].BigInt(), c[1].BigInt(), got.BigInt())
		}
	}
	if _, ok := divRound64(decimal128.FromI64(1), decimal128.New(1, 0)); ok {
		t.Fatal("a divisor of 2^64 took the 64-bit path")
	}
	if _, ok := divRound64(decimal128.FromI64(1), decimal128.FromI64(0)); ok {
		t.Fatal("a zero divisor took the 64-bit path")
	}
}
