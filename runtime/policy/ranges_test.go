package policy

import (
	"reflect"
	"testing"
)

func TestCutRanges(t *testing.T) {
	for _, c := range []struct {
		name  string
		bytes []int64
		tasks int
		want  [][2]int
	}{
		// Flink's worked example (design.md): sizes unknown, maxP 10, p 3.
		{"flink maxP 10 p 3", make([]int64, 10), 3, [][2]int{{0, 3}, {4, 6}, {7, 9}}},
		{"flink maxP 128 p 4", make([]int64, 128), 4, [][2]int{{0, 31}, {32, 63}, {64, 95}, {96, 127}}},
		{"uniform", []int64{1, 1, 1, 1, 1, 1}, 3, [][2]int{{0, 1}, {2, 3}, {4, 5}}},
		// Bytes, not counts: the heavy first key group gets a task alone.
		{"skewed", []int64{9, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 2, [][2]int{{0, 0}, {1, 9}}},
		{"skewed middle", []int64{1, 1, 1, 12, 1, 1, 1}, 3, [][2]int{{0, 2}, {3, 3}, {4, 6}}},
		// One key holds everything: the other tasks still get a key group each.
		{"single key", []int64{0, 0, 0, 50, 0, 0}, 3, [][2]int{{0, 2}, {3, 3}, {4, 5}}},
		{"single key last", []int64{0, 0, 0, 0, 0, 50}, 3, [][2]int{{0, 3}, {4, 4}, {5, 5}}},
		{"empty", nil, 3, nil},
		{"tasks clamped to units", []int64{5, 5}, 4, [][2]int{{0, 0}, {1, 1}}},
		{"tasks clamped to 1", []int64{5, 5}, 0, [][2]int{{0, 1}}},
	} {
		got := CutRanges(c.bytes, c.tasks)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: CutRanges(%v, %d) = %v, want %v", c.name, c.bytes, c.tasks, got, c.want)
		}
		checkCover(t, c.name, got, len(c.bytes))
	}
}

// checkCover verifies ranges are contiguous, non-empty and cover 0..n-1.
func checkCover(t *testing.T, name string, rs [][2]int, n int) {
	t.Helper()
	next := 0
	for _, r := range rs {
		if r[0] != next || r[1] < r[0] {
			t.Errorf("%s: ranges %v are not contiguous non-empty", name, rs)
			return
		}
		next = r[1] + 1
	}
	if n > 0 && next != n {
		t.Errorf("%s: ranges %v do not cover %d units", name, rs, n)
	}
}

// The byte balance of random-ish sizes: the largest task is at most the
// ideal share plus one unit.
func TestCutRangesBalance(t *testing.T) {
	bytes := make([]int64, 128)
	seed := uint32(7)
	for i := range bytes {
		seed = seed*1664525 + 1013904223
		bytes[i] = int64(seed>>20) + 1
	}
	for _, tasks := range []int{1, 2, 3, 7, 16, 64, 128} {
		rs := CutRanges(bytes, tasks)
		checkCover(t, "balance", rs, len(bytes))
		var total, biggest int64
		for _, b := range bytes {
			total += b
			biggest = max(biggest, b)
		}
		_, _, hi := Spread(RangeBytes(bytes, rs))
		if hi > total/int64(tasks)+biggest {
			t.Errorf("tasks %d: max %d > ideal %d + largest unit %d", tasks, hi, total/int64(tasks), biggest)
		}
	}
}
