package policy

import (
	"fmt"
	"sort"

	"github.com/fsql-dev/fsql/shuffle/keygroup"
)

// SkewSplit describes one split key group for EXPLAIN ANALYZE.
type SkewSplit struct {
	KeyGroup int
	Side     string // "probe" or "build"
	Bytes    int64  // bytes of the split side in that key group
	Median   int64  // median non-empty key group of that side
	Parts    int
}

func (s SkewSplit) String() string {
	return fmt.Sprintf("key group %d of the %s side (%s, median %s) split into %d parts", s.KeyGroup, s.Side, FormatBytes(s.Bytes), FormatBytes(s.Median), s.Parts)
}

// FindSkew lists the skewed key groups of one join side: bytes above
// factor times the median of the side's non-empty key groups and above
// threshold. Empty key groups are left out of the median so a side with
// few distinct keys is judged by the keys it has.
func FindSkew(kgBytes []int64, factor float64, threshold int64) (skewed []int, med int64) {
	var nonEmpty []int64
	for _, b := range kgBytes {
		if b > 0 {
			nonEmpty = append(nonEmpty, b)
		}
	}
	sort.Slice(nonEmpty, func(a, b int) bool { return nonEmpty[a] < nonEmpty[b] })
	med = Median(nonEmpty)
	if factor <= 0 {
		return nil, med
	}
	for k, b := range kgBytes {
		if b > threshold && float64(b) > factor*float64(med) {
			skewed = append(skewed, k)
		}
	}
	return skewed, med
}

// JoinSide is what SkewPlan knows of one side of a shuffled join.
type JoinSide struct {
	// Bytes and Batches per key group: the side's bytes, and how many
	// stored batches hold rows of it (a key group splits by batches, so
	// into at most that many parts).
	Bytes   []int64
	Batches []int
	// Splittable says the side may be read in pieces while the other
	// side's key group is read whole by every piece.
	Splittable bool
}

// SkewPlan is what each task of a skew-split join stage reads.
type SkewPlan struct {
	// Probe and Build are the slices of each side per task.
	Probe, Build [][]keygroup.Slice
	// TaskBytes is each task's input volume (whole inputs included).
	TaskBytes []int64
	// Splits are the key groups split, by key group.
	Splits []SkewSplit
}

// skewUnit is a key group, or one piece of a skewed key group.
type skewUnit struct {
	kg, part, parts int
	bytes           int64
}

// PlanSkew is BalancedRanges for a join stage with skewed key groups:
// each skewed key group of a splittable side becomes several units, each
// reading a share of that side's batches of the key group and all of the
// other side's; units are then cut into p byte-balanced ranges. whole is
// what every task reads besides (broadcast inputs). It returns nil when
// nothing is skewed (or p is 1, or splitting is off).
func PlanSkew(probe, build JoinSide, whole int64, p int, cfg AdaptiveConfig) *SkewPlan {
	if p < 2 || cfg.SkewFactor <= 0 || (!probe.Splittable && !build.Splittable) {
		return nil
	}
	probeKG, buildKG := probe.Bytes, build.Bytes
	if len(probeKG) != len(buildKG) {
		return nil
	}
	var total int64
	for k := range probeKG {
		total += probeKG[k] + buildKG[k]
	}
	target := max(total/int64(p), 1)
	side := make([]int, len(probeKG)) // 0 none, 1 probe, 2 build
	var splits []SkewSplit
	mark := func(s JoinSide, code int, name string) {
		ks, med := FindSkew(s.Bytes, cfg.SkewFactor, cfg.SkewThreshold)
		for _, k := range ks {
			if side[k] != 0 && s.Bytes[k] <= otherBytes(side[k], k, probeKG, buildKG) {
				continue // the other side is the larger one; split that
			}
			parts := int(min((s.Bytes[k]+target-1)/target, int64(p)))
			if k < len(s.Batches) {
				parts = min(parts, s.Batches[k])
			}
			if parts < 2 {
				continue
			}
			side[k] = code
			for i := range splits {
				if splits[i].KeyGroup == k {
					splits = append(splits[:i], splits[i+1:]...)
					break
				}
			}
			splits = append(splits, SkewSplit{KeyGroup: k, Side: name, Bytes: s.Bytes[k], Median: med, Parts: parts})
		}
	}
	if probe.Splittable {
		mark(probe, 1, "probe")
	}
	if build.Splittable {
		mark(build, 2, "build")
	}
	if len(splits) == 0 {
		return nil
	}
	sort.Slice(splits, func(a, b int) bool { return splits[a].KeyGroup < splits[b].KeyGroup })
	partsOf := map[int]int{}
	for _, s := range splits {
		partsOf[s.KeyGroup] = s.Parts
	}
	var units []skewUnit
	for k := range probeKG {
		n := partsOf[k]
		if side[k] == 0 || n < 2 {
			units = append(units, skewUnit{kg: k, parts: 1, bytes: probeKG[k] + buildKG[k]})
			continue
		}
		split, other := probeKG[k], buildKG[k]
		if side[k] == 2 {
			split, other = buildKG[k], probeKG[k]
		}
		for i := 0; i < n; i++ {
			units = append(units, skewUnit{kg: k, part: i, parts: n, bytes: split/int64(n) + other})
		}
	}
	ub := make([]int64, len(units))
	for i, u := range units {
		ub[i] = u.bytes
	}
	ranges := CutRanges(ub, p)
	probeSl := make([][]keygroup.Slice, len(ranges))
	buildSl := make([][]keygroup.Slice, len(ranges))
	for t, r := range ranges {
		u1 := units[r[1]]
		// The side that is not split in a key group reads it whole, once
		// per task even when several of its pieces landed here.
		var sl [2][]keygroup.Slice // [probe, build]
		runStart := -1
		flush := func(upto int) {
			if runStart >= 0 {
				for s := 0; s < 2; s++ {
					sl[s] = appendRange(sl[s], runStart, upto)
				}
				runStart = -1
			}
		}
		for ui := r[0]; ui <= r[1]; ui++ {
			u := units[ui]
			if u.parts <= 1 {
				if runStart < 0 {
					runStart = u.kg
				}
				continue
			}
			flush(u.kg - 1)
			piece := keygroup.Slice{Start: u.kg, End: u.kg, Producer: -1, Part: u.part, Parts: u.parts}
			s, o := 0, 1
			if side[u.kg] == 2 {
				s, o = 1, 0
			}
			sl[s] = append(sl[s], piece)
			if n := len(sl[o]); n == 0 || sl[o][n-1].End < u.kg {
				sl[o] = appendRange(sl[o], u.kg, u.kg)
			}
		}
		flush(u1.kg)
		probeSl[t], buildSl[t] = sl[0], sl[1]
	}
	pl := &SkewPlan{Probe: probeSl, Build: buildSl, Splits: splits}
	pl.TaskBytes = RangeBytes(ub, ranges)
	for t := range pl.TaskBytes {
		pl.TaskBytes[t] += whole
	}
	return pl
}

// appendRange adds key groups start..end of every producer, merging with
// the previous slice when they touch.
func appendRange(sl []keygroup.Slice, start, end int) []keygroup.Slice {
	if end < start {
		return sl
	}
	if n := len(sl); n > 0 && sl[n-1].Parts <= 1 && sl[n-1].Producer < 0 && sl[n-1].End == start-1 {
		sl[n-1].End = end
		return sl
	}
	return append(sl, keygroup.Whole(start, end))
}

func otherBytes(code, k int, probeKG, buildKG []int64) int64 {
	if code == 1 {
		return probeKG[k]
	}
	return buildKG[k]
}
