package exec

import "github.com/fsql-dev/fsql/spill"

// A shared build (shared_build.go) whose side outgrows its builder's
// share spills as any build does (hash_join_spill.go) and is shared
// spilled: the tasks of a broadcast join read the whole build side, so
// partitioning it, writing its partitions and reading them back is the
// same work in every task. The builder does it once: the partitions it
// kept in memory become the shared table, and the partitions it wrote to
// disk a spilledSide, whose files every task reads and none removes
// (they go when the shared build is freed, after the stage run ended and
// the last attempt using them closed). Every task then probes as a
// spilled join of its own would: a probe row of a partition in memory is
// joined at once against the shared table, one of a partition on disk is
// written to the task's own probe file, and the partitions on disk are
// joined one by one (repartitioned or read in chunks as their sizes ask)
// from the shared build file and the task's probe file.
//
// Only a build partitioned by the seeded hash of level 0 is shared so,
// since a row's partition then depends on its key alone, not on the
// task; one partitioned by key group follows its own task's range and is
// not shared (never for a broadcast input, which has no key groups).

// spilledSide is the part of a shared build side on disk.
type spilledSide struct {
	// files are the partitions on disk, nil for those in the table or
	// without rows; rows their build rows, total the rows partitioned.
	files [joinFanOut]*spill.File
	rows  [joinFanOut]int64
	total int64
	// null says a build key is NULL anywhere in the build side (the
	// table's own flag covers only its partitions).
	null bool
}

// spilledSide describes the partitions s spilled, nil when it did not.
func (s *hashJoinStream) spilledSide() *spilledSide {
	sp := s.sp
	if sp == nil {
		return nil
	}
	out := &spilledSide{total: sp.rows, null: s.facts.null}
	for id := range sp.parts {
		if p := &sp.parts[id]; p.onDisk {
			out.files[id], out.rows[id] = p.bf, p.rows
		}
	}
	return out
}

// borrowSpilled takes a shared build's spilled partitions as if s had
// partitioned and written them itself: its probe rows of them go to its
// own probe files, and they are joined after its probe side ended.
func (s *hashJoinStream) borrowSpilled(side *spilledSide) {
	sp := &joinSpill{seed: joinSeed(0), shared: true, rows: side.total}
	for id := range sp.parts {
		p := &sp.parts[id]
		p.id = id
		if f := side.files[id]; f != nil {
			p.onDisk, p.bf, p.rows = true, f, side.rows[id]
		}
	}
	s.sp = sp
	s.facts.null = side.null
	if op := s.tc.Op; op != nil {
		op.Spill.HashTasks.Add(1)
	}
}

// remove deletes the files (the shared build is freed). Nil-safe.
func (side *spilledSide) remove() {
	if side == nil {
		return
	}
	for id, f := range side.files {
		f.Remove()
		side.files[id] = nil
	}
}

// dropBorrowed lets go of the borrowed table once the probe side ended;
// the reference stays until the stream closes, since the shared
// partition files are still to be read.
func (s *hashJoinStream) dropBorrowed() {
	s.buildCols, s.nb, s.next, s.ihead, s.table = nil, 0, nil, nil, nil
	s.buildNullKey = false
}
