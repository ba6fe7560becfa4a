package exec

import (
	"fmt"
	"sort"

	"github.com/fsql-dev/fsql/exec/keygroup"
)

// KeyGroupSlice is one piece of an exchange that a consumer task reads:
// the key groups Start..End (inclusive) of one producer or all of them,
// and, when Parts > 1, only batch Part, Part+Parts, ... of the batches
// holding rows of those key groups (how a skewed key group is split
// among tasks).
type KeyGroupSlice struct {
	Start, End int
	// Producer is the only producer task read, or -1 for all of them.
	Producer int
	// Part of Parts; Parts <= 1 reads every batch.
	Part, Parts int
}

func (s KeyGroupSlice) String() string {
	out := fmt.Sprintf("%d-%d", s.Start, s.End)
	if s.Start == s.End {
		out = fmt.Sprint(s.Start)
	}
	if s.Producer >= 0 {
		out += fmt.Sprintf(" of producer %d", s.Producer)
	}
	if s.Parts > 1 {
		out += fmt.Sprintf(" part %d/%d", s.Part+1, s.Parts)
	}
	return out
}

// wholeRange is the slice of key groups start..end of every producer.
func wholeRange(start, end int) KeyGroupSlice {
	return KeyGroupSlice{Start: start, End: end, Producer: -1, Parts: 1}
}

// cutRanges cuts units 0..len(bytes)-1 into tasks contiguous, non-empty
// ranges [start, end] (inclusive) whose byte sums are as even as the units
// allow: range i ends at the unit whose running total is nearest to
// (i+1)/tasks of the whole. When no unit has bytes (sizes unknown or all
// inputs empty) it falls back to Flink's count formula, keygroup.Range.
// tasks is clamped to [1, len(bytes)]; no units give no ranges.
func cutRanges(bytes []int64, tasks int) [][2]int {
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

// rangeBytes sums bytes over each range.
func rangeBytes(bytes []int64, ranges [][2]int) []int64 {
	out := make([]int64, len(ranges))
	for i, r := range ranges {
		for u := r[0]; u <= r[1]; u++ {
			out[i] += bytes[u]
		}
	}
	return out
}

// spread is the min, median and max of per-task bytes.
func spread(perTask []int64) (lo, med, hi int64) {
	if len(perTask) == 0 {
		return 0, 0, 0
	}
	s := append([]int64(nil), perTask...)
	sort.Slice(s, func(a, b int) bool { return s[a] < s[b] })
	return s[0], median(s), s[len(s)-1]
}

// median of sorted values (the lower middle for an even count).
func median(sorted []int64) int64 {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[(len(sorted)-1)/2]
}

// stagePlan is how a stage's tasks read their inputs: for every input
// exchange, the slices of each task (nil: the task reads the whole
// exchange, as for broadcast and gather inputs).
type stagePlan struct {
	slices map[*Exchange][][]KeyGroupSlice
	// TaskBytes is each task's input volume (broadcast inputs included).
	taskBytes []int64
}

// balancedPlan gives each of p tasks a contiguous key-group range of the
// stage's hash inputs with even bytes (summed over every hash input and
// producer); broadcast bytes count toward every task.
func balancedPlan(st *Stage, bufs []*ExchangeBuffer, p int) *stagePlan {
	var kgBytes []int64
	var bcast int64
	for i, ex := range st.Inputs {
		b := bufs[i]
		switch ex.Kind {
		case HashExchange:
			sb := b.SubpartitionBytes()
			if kgBytes == nil {
				kgBytes = make([]int64, len(sb))
			}
			for k, n := range sb {
				kgBytes[k] += n
			}
		default:
			bcast += b.TotalBytes()
		}
	}
	if kgBytes == nil {
		return nil
	}
	ranges := cutRanges(kgBytes, p)
	pl := &stagePlan{slices: map[*Exchange][][]KeyGroupSlice{}}
	for i, ex := range st.Inputs {
		if ex.Kind != HashExchange {
			continue
		}
		per := make([][]KeyGroupSlice, len(ranges))
		for t, r := range ranges {
			per[t] = []KeyGroupSlice{wholeRange(r[0], r[1])}
		}
		pl.slices[st.Inputs[i]] = per
	}
	pl.taskBytes = rangeBytes(kgBytes, ranges)
	for t := range pl.taskBytes {
		pl.taskBytes[t] += bcast
	}
	return pl
}
