package keygroup

import (
	"strings"
	"testing"
)

func TestRangeWorkedChecks(t *testing.T) {
	cases := []struct {
		maxP, p int
		want    [][2]int
	}{
		{50, 10, [][2]int{{0, 4}, {5, 9}, {10, 14}, {15, 19}, {20, 24}, {25, 29}, {30, 34}, {35, 39}, {40, 44}, {45, 49}}},
		{10, 3, [][2]int{{0, 3}, {4, 6}, {7, 9}}},
		{10, 4, [][2]int{{0, 2}, {3, 4}, {5, 7}, {8, 9}}},
		{1, 1, [][2]int{{0, 0}}},
		{128, 1, [][2]int{{0, 127}}},
	}
	for _, c := range cases {
		for i, w := range c.want {
			s, e := Range(c.maxP, c.p, i)
			if s != w[0] || e != w[1] {
				t.Errorf("Range(maxP %d, p %d, task %d) = (%d,%d), want (%d,%d)", c.maxP, c.p, i, s, e, w[0], w[1])
			}
		}
	}
}

// TestOperatorIndexAgreesWithRange checks, for many shapes, that the ranges
// tile 0..maxP-1 and that OperatorIndex names the task whose range holds
// each key group: producers and consumers must never disagree.
func TestOperatorIndexAgreesWithRange(t *testing.T) {
	for _, maxP := range []int{1, 2, 3, 7, 10, 50, 128, 129, 1000, 4096, MaxMaxParallelism} {
		for p := 1; p <= maxP && p <= 300; p++ {
			next := 0
			for i := 0; i < p; i++ {
				s, e := Range(maxP, p, i)
				if s != next || e < s {
					t.Fatalf("maxP %d p %d task %d: range (%d,%d), want start %d and non-empty", maxP, p, i, s, e, next)
				}
				for kg := s; kg <= e; kg++ {
					if got := OperatorIndex(kg, p, maxP); got != i {
						t.Fatalf("maxP %d p %d: OperatorIndex(%d) = %d, but task %d's range is (%d,%d)", maxP, p, kg, got, i, s, e)
					}
				}
				next = e + 1
			}
			if next != maxP {
				t.Fatalf("maxP %d p %d: ranges end at %d", maxP, p, next-1)
			}
		}
	}
}

func TestCheck(t *testing.T) {
	cases := []struct {
		p, maxP int
		errHas  string // "" means no error
	}{
		{1, 1, ""},
		{4, 128, ""},
		{32768, 32768, ""},
		{129, 128, "parallelism 129 is above the max parallelism (number of key groups) 128"},
		{0, 128, "at least 1"},
		{1, 0, "between 1 and 32768"},
		{1, 32769, "between 1 and 32768, got 32769"},
	}
	for _, c := range cases {
		err := Check(c.p, c.maxP)
		switch {
		case c.errHas == "" && err != nil:
			t.Errorf("Check(%d, %d) = %v, want nil", c.p, c.maxP, err)
		case c.errHas != "" && (err == nil || !strings.Contains(err.Error(), c.errHas)):
			t.Errorf("Check(%d, %d) = %v, want an error containing %q", c.p, c.maxP, err, c.errHas)
		}
	}
}

func TestDefaultMaxParallelism(t *testing.T) {
	cases := map[int]int{
		1: 128, 2: 128, 4: 128, 85: 128, 86: 256, 100: 256, 171: 256, 172: 512,
		1000: 2048, 20000: 32768, 30000: 32768, 1 << 20: 32768,
	}
	for p, want := range cases {
		if got := DefaultMaxParallelism(p); got != want {
			t.Errorf("DefaultMaxParallelism(%d) = %d, want %d", p, got, want)
		}
	}
}

// TestMurmur pins values of Flink's MathUtils.murmurHash. murmurHash(x) is
// the absolute value of Guava's murmur3_32().hashInt(x), whose test pins
// hashInt(0) = 593689054, hashInt(42) = 1134849565 and
// hashInt(-42) = -189366624; the rest were computed from the algorithm.
func TestMurmur(t *testing.T) {
	cases := []struct {
		in   uint32
		want uint32
	}{
		{0, 593689054},
		{42, 1134849565},
		{uint32(0xFFFFFFD6), 189366624}, // -42
		{1, 68075478},
		{2, 1085422463},
		{0x7fffffff, 1653689534},
		{0x80000000, 1718298732},
		{0xffffffff, 1982413648},
		{123456789, 1088346449},
	}
	for _, c := range cases {
		if got := Murmur(c.in); got != c.want {
			t.Errorf("Murmur(%#x) = %d, want %d", c.in, got, c.want)
		}
	}
}

func TestForHashInRangeAndSpread(t *testing.T) {
	const maxP = 128
	counts := make([]int, maxP)
	for h := uint32(0); h < 128*1000; h++ {
		kg := ForHash(h, maxP)
		if kg < 0 || kg >= maxP {
			t.Fatalf("ForHash(%d) = %d out of range", h, kg)
		}
		counts[kg]++
	}
	// Sequential hashes must spread: every group within 20% of the mean.
	for kg, n := range counts {
		if n < 800 || n > 1200 {
			t.Fatalf("key group %d got %d of 128000 sequential hashes", kg, n)
		}
	}
}
