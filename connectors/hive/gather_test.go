package hive

import (
	"math/rand"
	"testing"
)

// gather and gatherDecimals, and the word-at-a-time countOnes and
// fillLevels, against a row-at-a-time reference, over levels with long
// present runs, NULL runs and scattered NULLs, at lengths that are not
// multiples of eight.
func TestGatherWordPaths(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for trial := 0; trial < 300; trial++ {
		n := rng.Intn(200)
		nullRate := []float64{0, 0.03, 0.5, 1}[trial%4]
		def := make([]byte, n)
		present := 0
		for i := range def {
			if rng.Float64() >= nullRate {
				def[i] = 1
				present++
			}
		}
		if got := countOnes(def); got != present {
			t.Fatalf("countOnes = %d, want %d", got, present)
		}
		vpos := rng.Intn(5)
		src := make([]int32, vpos+present)
		for i := range src {
			src[i] = rng.Int31() - 1<<30
		}
		dict := make([]int32, 17)
		for i := range dict {
			dict[i] = int32(i*1000 - 8000)
		}
		idx := make([]int32, vpos+present)
		for i := range idx {
			idx[i] = int32(rng.Intn(len(dict)))
		}
		for _, dictionary := range []bool{false, true} {
			want := make([]int32, n)
			used := 0
			for i, l := range def {
				if l == 1 {
					if dictionary {
						want[i] = dict[idx[vpos+used]]
					} else {
						want[i] = src[vpos+used]
					}
					used++
				}
			}
			got := make([]int32, n)
			for i := range got {
				got[i] = -1 // NULL rows must be overwritten with zero
			}
			var u int
			dec := make([]uint64, 2*n)
			var ud int
			if dictionary {
				u = gather(got, dict, idx, vpos, def)
				ud = gatherDecimals(dec, dict, idx, vpos, def)
			} else {
				u = gather(got, src, nil, vpos, def)
				ud = gatherDecimals(dec, src, nil, vpos, def)
			}
			if u != present || ud != present {
				t.Fatalf("trial %d: consumed %d and %d values, want %d", trial, u, ud, present)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("trial %d dictionary=%v: row %d = %d, want %d", trial, dictionary, i, got[i], want[i])
				}
				x := int64(want[i])
				if dec[2*i] != uint64(x) || dec[2*i+1] != uint64(x>>63) {
					t.Fatalf("trial %d dictionary=%v: decimal row %d = %x %x, want %d", trial, dictionary, i, dec[2*i+1], dec[2*i], x)
				}
			}
		}
	}
	for _, n := range []int{0, 1, 7, 8, 9, 100} {
		for _, v := range []byte{0, 1} {
			s := make([]byte, n+1)
			s[n] = 7
			fillLevels(s[:n], v)
			for i := 0; i < n; i++ {
				if s[i] != v {
					t.Fatalf("fillLevels(%d, %d): byte %d = %d", n, v, i, s[i])
				}
			}
			if s[n] != 7 {
				t.Fatalf("fillLevels(%d, %d) wrote past its slice", n, v)
			}
		}
	}
}
