package exec

// The runtime's declarations of the two joins (see declarations.go). Both
// list Children as [Build, Probe].

// splittableSides says which side of a join may be read in pieces with
// the other side read whole by every piece. Probe pieces are right
// whenever each probe row is judged against the whole build side and no
// build row's fate depends on all probe rows (inner, left, semi, anti).
// Build pieces are right only for an inner join: every pair is still made
// exactly once, but a semi or outer join would emit a probe row once per
// piece.
func splittableSides(t JoinType) (probe, build bool) {
	switch t {
	case InnerJoin:
		return true, true
	case LeftJoin, SemiJoin, AntiJoin:
		return true, false
	}
	return false, false
}

// SplittableInputs implements SplitInputs.
func (j *HashJoin) SplittableInputs() []bool {
	probe, build := splittableSides(j.Type)
	return []bool{build, probe}
}

// BuildInput implements Joiner.
func (j *HashJoin) BuildInput() int { return 0 }

// JoinType implements Joiner.
func (j *HashJoin) JoinType() JoinType { return j.Type }

// SharesBuild implements BuildSharer: every join but right and full,
// whose tasks mark their own build rows matched.
func (j *HashJoin) SharesBuild() bool {
	return j.Type != RightJoin && j.Type != FullJoin && len(j.BuildKeys) > 0
}

// SplittableInputs implements SplitInputs: the nested-loop join judges
// each probe row as the hash join does.
func (j *NestedLoopJoin) SplittableInputs() []bool {
	probe, build := splittableSides(j.Type)
	return []bool{build, probe}
}

// BuildInput implements Joiner.
func (j *NestedLoopJoin) BuildInput() int { return 0 }

// JoinType implements Joiner.
func (j *NestedLoopJoin) JoinType() JoinType { return j.Type }
