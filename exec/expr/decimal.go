package expr

import (
	"math/big"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// Decimal arithmetic on decimal128.Num. Arrow's own Num ops wrap around on
// overflow and divide through big.Int; these check against 38 digits and
// keep the common case (operands under 2^64) on machine words.

type num = decimal128.Num

var maxDec38 = decimal128.GetMaxValue(maxDecimalPrecision)

func pow10(k int32) num { return decimal128.GetScaleMultiplier(int(k)) }

// u128 splits n into magnitude words and sign.
func u128(n num) (hi, lo uint64, neg bool) {
	if n.HighBits() < 0 {
		n = n.Negate()
		return uint64(n.HighBits()), n.LowBits(), true
	}
	return uint64(n.HighBits()), n.LowBits(), false
}

func fromU128(hi, lo uint64, neg bool) num {
	n := decimal128.New(int64(hi), lo)
	if neg {
		return n.Negate()
	}
	return n
}

// fits38 reports whether |n| has at most 38 digits.
func fits38(n num) bool {
	return n.Abs().LessEqual(maxDec38) && n.HighBits() != -1<<63
}

func fitsPrecision(n num, p int32) bool {
	return n.Abs().LessEqual(decimal128.GetMaxValue(p)) && n.HighBits() != -1<<63
}

// decAdd returns a+b, false past 38 digits.
func decAdd(a, b num) (num, bool) {
	r := a.Add(b)
	return r, fits38(r)
}

func decSub(a, b num) (num, bool) {
	r := a.Sub(b)
	return r, fits38(r)
}

// decMul returns a*b, false past 38 digits.
func decMul(a, b num) (num, bool) {
	ahi, alo, an := u128(a)
	bhi, blo, bn := u128(b)
	if ahi != 0 && bhi != 0 {
		return num{}, false
	}
	hi, lo := bits.Mul64(alo, blo)
	var cross uint64
	var over uint64
	if ahi != 0 {
		over, cross = bits.Mul64(ahi, blo)
	} else if bhi != 0 {
		over, cross = bits.Mul64(alo, bhi)
	}
	if over != 0 {
		return num{}, false
	}
	var carry uint64
	hi, carry = bits.Add64(hi, cross, 0)
	if carry != 0 || hi>>63 != 0 {
		return num{}, false
	}
	r := fromU128(hi, lo, an != bn)
	return r, fits38(r)
}

// decScaleUp multiplies n by 10^k, false past 38 digits.
func decScaleUp(n num, k int32) (num, bool) {
	if k <= 0 {
		return n, true
	}
	if k > maxDecimalPrecision {
		return n, n.Sign() == 0
	}
	return decMul(n, pow10(k))
}

// decDivRound is a/b rounded half away from zero; b must not be zero.
func decDivRound(a, b num) num {
	ahi, alo, an := u128(a)
	bhi, blo, bn := u128(b)
	if bhi == 0 {
		qhi := ahi / blo
		r1 := ahi % blo
		qlo, r := bits.Div64(r1, alo, blo)
		if r >= blo-r { // 2r >= b without overflow
			var c uint64
			qlo, c = bits.Add64(qlo, 1, 0)
			qhi += c
		}
		return fromU128(qhi, qlo, an != bn)
	}
	ba, bb := a.BigInt(), b.BigInt()
	return decimal128.FromBigInt(bigDivRound(ba, bb))
}

// bigDivRound is a/b rounded half away from zero.
func bigDivRound(a, b *big.Int) *big.Int {
	q, r := new(big.Int).QuoRem(a, b, new(big.Int))
	r2 := new(big.Int).Abs(r)
	r2.Lsh(r2, 1)
	if r2.Cmp(new(big.Int).Abs(b)) >= 0 {
		if (a.Sign() < 0) != (b.Sign() < 0) {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return q
}

// decRescale changes the scale of n from `from` to `to`, rounding half
// away from zero when digits are dropped; false past 38 digits.
func decRescale(n num, from, to int32) (num, bool) {
	switch {
	case to == from:
		return n, true
	case to > from:
		return decScaleUp(n, to-from)
	}
	k := from - to
	if k > maxDecimalPrecision {
		return num{}, true
	}
	return decDivRound(n, pow10(k)), true
}

// decRem is a % b with the sign of a (MySQL's MOD), b non-zero.
func decRem(a, b num) num {
	ahi, alo, an := u128(a)
	bhi, blo, _ := u128(b)
	if bhi == 0 {
		r1 := ahi % blo
		_, r := bits.Div64(r1, alo, blo)
		return fromU128(0, r, an)
	}
	_, r := a.Div(b)
	return r
}

// decFloor and decCeil drop the scale s of n, rounding down or up.
func decTrunc(n num, s int32) (q num, exact bool) {
	if s == 0 {
		return n, true
	}
	if s > maxDecimalPrecision {
		return num{}, n.Sign() == 0
	}
	d := pow10(s)
	ahi, alo, an := u128(n)
	_, blo, _ := u128(d)
	if s <= 19 {
		qhi := ahi / blo
		r1 := ahi % blo
		qlo, r := bits.Div64(r1, alo, blo)
		return fromU128(qhi, qlo, an), r == 0
	}
	qq, r := n.Div(d)
	return qq, r.Sign() == 0
}

// ratToDec converts an exact rational to a decimal of scale s, rounding
// half away from zero; false past 38 digits.
func ratToDec(r *big.Rat, s int32) (num, bool) {
	x := new(big.Int).Mul(r.Num(), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(s)), nil))
	q := bigDivRound(x, r.Denom())
	if q.BitLen() > 127 {
		return num{}, false
	}
	n := decimal128.FromBigInt(q)
	return n, fits38(n)
}
