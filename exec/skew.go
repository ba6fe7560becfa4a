package exec

import (
	"fmt"
	"sort"
)

// joinShape is a stage whose only hash inputs are the probe and build
// sides of one shuffled HashJoin, and whose other operators never need all
// rows of a key together (filters, projections, broadcast joins, partial
// aggregates). Such a stage may read a key group's rows in pieces on
// several tasks (skew splitting) or read its probe side unshuffled (the
// run-time broadcast switch); any other stage keeps whole key groups.
type joinShape struct {
	join         *HashJoin
	probe, build *Exchange
}

// shuffledJoin recognises a joinShape.
func shuffledJoin(st *Stage) (joinShape, bool) {
	var hashIn []*Exchange
	for _, ex := range st.Inputs {
		if ex.Kind == HashExchange {
			hashIn = append(hashIn, ex)
		}
	}
	if len(hashIn) != 2 || hashIn[0] == hashIn[1] {
		return joinShape{}, false
	}
	ok := true
	var joins []*HashJoin
	visitStage(st.Root, func(n Node) {
		switch x := n.(type) {
		case *Filter, *Project, *NestedLoopJoin, *Expand, *Exchange:
		case *HashJoin:
			joins = append(joins, x)
		case *HashAggregate:
			if x.Mode != AggPartial {
				ok = false
			}
		default:
			ok = false
		}
	})
	if !ok {
		return joinShape{}, false
	}
	for _, j := range joins {
		p, b := rowLocalExchange(j.Probe), rowLocalExchange(j.Build)
		if p != nil && b != nil && p.Kind == HashExchange && b.Kind == HashExchange && p != b && onProbePath(st.Root, j) {
			return joinShape{join: j, probe: p, build: b}, true
		}
	}
	return joinShape{}, false
}

// onProbePath reports whether target is reached from n through single-input
// operators and the probe side of joins only: a join above whose build side
// held target would see each task's share of target's rows as its whole
// build side.
func onProbePath(n, target Node) bool {
	for {
		if n == target {
			return true
		}
		switch x := n.(type) {
		case *HashJoin:
			n = x.Probe
		case *NestedLoopJoin:
			n = x.Probe
		default:
			kids := n.Children()
			if len(kids) != 1 {
				return false
			}
			n = kids[0]
		}
	}
}

// rowLocalExchange is the exchange n reads through filters and
// projections only, or nil.
func rowLocalExchange(n Node) *Exchange {
	for {
		switch x := n.(type) {
		case *Exchange:
			return x
		case *Filter:
			n = x.Child
		case *Project:
			n = x.Child
		default:
			return nil
		}
	}
}

// splittableSides says which side of a join may be read in pieces with
// the other side's matching key group read whole by every piece. Probe
// pieces are right whenever each probe row is judged against the whole
// build key group, and no build row's fate depends on all probe rows
// (inner, left, semi, anti). Build pieces are right only for an inner
// join: every pair is still made exactly once, but a semi or outer join
// would emit a probe row once per piece.
func splittableSides(t JoinType) (probe, build bool) {
	switch t {
	case InnerJoin:
		return true, true
	case LeftJoin, SemiJoin, AntiJoin:
		return true, false
	}
	return false, false
}

// skewUnit is a key group, or one piece of a skewed key group.
type skewUnit struct {
	kg, part, parts int
	bytes           int64
}

// SkewSplit describes one split key group for EXPLAIN ANALYZE.
type SkewSplit struct {
	KeyGroup int
	Side     string // "probe" or "build"
	Bytes    int64  // bytes of the split side in that key group
	Median   int64  // median non-empty key group of that side
	Parts    int
}

func (s SkewSplit) String() string {
	return fmt.Sprintf("key group %d of the %s side (%s, median %s) split into %d parts", s.KeyGroup, s.Side, fmtBytes(s.Bytes), fmtBytes(s.Median), s.Parts)
}

// findSkew lists the skewed key groups of one join side: bytes above
// factor times the median of the side's non-empty key groups and above
// threshold. Empty key groups are left out of the median so a side with
// few distinct keys is judged by the keys it has.
func findSkew(kgBytes []int64, factor float64, threshold int64) (skewed []int, med int64) {
	var nonEmpty []int64
	for _, b := range kgBytes {
		if b > 0 {
			nonEmpty = append(nonEmpty, b)
		}
	}
	sort.Slice(nonEmpty, func(a, b int) bool { return nonEmpty[a] < nonEmpty[b] })
	med = median(nonEmpty)
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

// skewPlan is balancedPlan for a joinShape stage with skewed key groups:
// each skewed key group of a splittable side becomes several units, each
// reading a share of that side's batches of the key group and all of the
// other side's; units are then cut into p byte-balanced ranges. It
// returns nil when nothing is skewed (or p is 1).
func skewPlan(st *Stage, sh joinShape, bufs map[*Exchange]*ExchangeBuffer, p int, cfg AdaptiveConfig) (*stagePlan, []SkewSplit) {
	if p < 2 || cfg.SkewFactor <= 0 {
		return nil, nil
	}
	canProbe, canBuild := splittableSides(sh.join.Type)
	if !canProbe && !canBuild {
		return nil, nil
	}
	pb, bb := bufs[sh.probe], bufs[sh.build]
	if pb == nil || bb == nil || pb.forward || bb.forward {
		return nil, nil
	}
	probeKG, buildKG := pb.SubpartitionBytes(), bb.SubpartitionBytes()
	if len(probeKG) != len(buildKG) {
		return nil, nil
	}
	var bcast, total int64
	for _, ex := range st.Inputs {
		if ex.Kind != HashExchange {
			bcast += bufs[ex].TotalBytes()
		}
	}
	for k := range probeKG {
		total += probeKG[k] + buildKG[k]
	}
	target := max(total/int64(p), 1)
	side := make([]int, len(probeKG)) // 0 none, 1 probe, 2 build
	var splits []SkewSplit
	mark := func(kgBytes []int64, buf *ExchangeBuffer, code int, name string) {
		ks, med := findSkew(kgBytes, cfg.SkewFactor, cfg.SkewThreshold)
		for _, k := range ks {
			if side[k] != 0 && kgBytes[k] <= otherBytes(side[k], k, probeKG, buildKG) {
				continue // the other side is the larger one; split that
			}
			parts := int(min((kgBytes[k]+target-1)/target, int64(p)))
			parts = min(parts, buf.batchesWith(k))
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
			splits = append(splits, SkewSplit{KeyGroup: k, Side: name, Bytes: kgBytes[k], Median: med, Parts: parts})
		}
	}
	if canProbe {
		mark(probeKG, pb, 1, "probe")
	}
	if canBuild {
		mark(buildKG, bb, 2, "build")
	}
	if len(splits) == 0 {
		return nil, nil
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
		split, whole := probeKG[k], buildKG[k]
		if side[k] == 2 {
			split, whole = buildKG[k], probeKG[k]
		}
		for i := 0; i < n; i++ {
			units = append(units, skewUnit{kg: k, part: i, parts: n, bytes: split/int64(n) + whole})
		}
	}
	ub := make([]int64, len(units))
	for i, u := range units {
		ub[i] = u.bytes
	}
	ranges := cutRanges(ub, p)
	probeSl := make([][]KeyGroupSlice, len(ranges))
	buildSl := make([][]KeyGroupSlice, len(ranges))
	for t, r := range ranges {
		u1 := units[r[1]]
		// The side that is not split in a key group reads it whole, once
		// per task even when several of its pieces landed here.
		var sl [2][]KeyGroupSlice // [probe, build]
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
			piece := KeyGroupSlice{Start: u.kg, End: u.kg, Producer: -1, Part: u.part, Parts: u.parts}
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
	pl := &stagePlan{slices: map[*Exchange][][]KeyGroupSlice{sh.probe: probeSl, sh.build: buildSl}}
	pl.taskBytes = rangeBytes(ub, ranges)
	for t := range pl.taskBytes {
		pl.taskBytes[t] += bcast
	}
	return pl, splits
}

// appendRange adds key groups start..end of every producer, merging with
// the previous slice when they touch.
func appendRange(sl []KeyGroupSlice, start, end int) []KeyGroupSlice {
	if end < start {
		return sl
	}
	if n := len(sl); n > 0 && sl[n-1].Parts <= 1 && sl[n-1].Producer < 0 && sl[n-1].End == start-1 {
		sl[n-1].End = end
		return sl
	}
	return append(sl, wholeRange(start, end))
}

func otherBytes(code, k int, probeKG, buildKG []int64) int64 {
	if code == 1 {
		return probeKG[k]
	}
	return buildKG[k]
}
