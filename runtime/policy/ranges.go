package policy

import (
	"sort"

	"github.com/fsql-dev/fsql/shuffle/keygroup"
)

// CutRanges cuts units 0..len(bytes)-1 into tasks contiguous, non-empty
// ranges [start, end] (inclusive) whose byte sums are as even as the units
// allow: range i ends at the unit whose running total is nearest to
// (i+1)/tasks of the whole. When no unit has bytes (sizes unknown or all
// inputs empty) it falls back to Flink's count formula, keygroup.Range.
// tasks is clamped to [1, len(bytes)]; no units give no ranges.
func CutRanges(bytes []int64, tasks int) [][2]int {
	n := len(bytes)
	if n == 0 {
		return nil
	}
	tasks = min(max(tasks, 1), n)
	cum := make([]int64, n) // cum[i] = bytes of units 0..i
	var total int64
	for i, b := range bytes {
		total += max(b, 0)
		cum[i] = total
	}
	out := make([][2]int, 0, tasks)
	if total == 0 {
		for i := 0; i < tasks; i++ {
			s, e := keygroup.Range(n, tasks, i)
			out = append(out, [2]int{s, e})
		}
		return out
	}
	start := 0
	for i := 0; i < tasks; i++ {
		if i == tasks-1 {
			out = append(out, [2]int{start, n - 1})
			break
		}
		// Leave at least one unit for each task still to come.
		last := n - (tasks - i)
		goal := float64(total) * float64(i+1) / float64(tasks)
		end := start
		for end < last && float64(cum[end+1]) <= goal {
			end++
		}
		if end < last && float64(cum[end]) < goal && float64(cum[end+1])-goal < goal-float64(cum[end]) {
			end++
		}
		out = append(out, [2]int{start, end})
		start = end + 1
	}
	return out
}

// RangeBytes sums bytes over each range.
func RangeBytes(bytes []int64, ranges [][2]int) []int64 {
	out := make([]int64, len(ranges))
	for i, r := range ranges {
		for u := r[0]; u <= r[1]; u++ {
			out[i] += bytes[u]
		}
	}
	return out
}

// Spread is the min, median and max of per-task bytes.
func Spread(perTask []int64) (lo, med, hi int64) {
	if len(perTask) == 0 {
		return 0, 0, 0
	}
	s := append([]int64(nil), perTask...)
	sort.Slice(s, func(a, b int) bool { return s[a] < s[b] })
	return s[0], Median(s), s[len(s)-1]
}

// Median of sorted values (the lower middle for an even count).
func Median(sorted []int64) int64 {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[(len(sorted)-1)/2]
}

// BalancedRanges gives each of p tasks a contiguous key-group range with
// even bytes: kgBytes is what the stage's hash inputs hold per key group
// (summed over inputs and producers), whole what every task reads whole
// (broadcast inputs). It returns the ranges and each task's input bytes.
func BalancedRanges(kgBytes []int64, whole int64, p int) (ranges [][2]int, taskBytes []int64) {
	ranges = CutRanges(kgBytes, p)
	taskBytes = RangeBytes(kgBytes, ranges)
	for t := range taskBytes {
		taskBytes[t] += whole
	}
	return ranges, taskBytes
}
