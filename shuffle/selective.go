package shuffle

import "github.com/fsql-dev/fsql/shuffle/keygroup"

// Selective release (ALL_EXCHANGES_HYBRID_SELECTIVE). In full mode an
// exchange keeps all its output until every consumer stage finished, so
// any consumer attempt can read it again. In selective mode output is
// let go as soon as no consumer attempt can need it any more: a batch
// held for producer p is released (its memory given back, its spilled
// records forgotten) once, for every consumer stage of the exchange,
// every task whose share holds rows of one of the batch's key groups of
// p has committed. A committed task is never run again (its other
// attempts are cancelled and discarded), so releasing what only
// committed tasks read keeps speculation and failover whole: a retry or
// a speculative copy of a task not committed yet still finds all of its
// input. What no committed task freed yet stays, in memory or, under a
// tight budget, spilled.
//
// A batch is stored whole, with rows of many key groups, and Arrow
// memory is freed per buffer, not per row: so a hash exchange's batch is
// released when the last consumer task reading any of its key groups
// commits, a forward edge's batches when their one consumer task does.

// taskSlices is what task of consumer stage (of parallelism tasks) reads
// (as OpenReader reads it): the slices the runtime set, else its
// count-based key-group range of a hash exchange, its producer's output
// of a forward edge, everything of a broadcast or gather.
func (b *Buffer) taskSlices(stage, task, parallelism int) []keygroup.Slice {
	if sl := b.Slices(stage, task); sl != nil {
		return sl
	}
	switch b.Kind() {
	case Hash:
		return []keygroup.Slice{keygroup.Whole(keygroup.Range(b.Subpartitions, parallelism, task))}
	case Forward:
		return []keygroup.Slice{{Start: 0, End: 0, Producer: task, Parts: 1}}
	}
	return []keygroup.Slice{keygroup.Whole(0, 0)}
}

// TaskKeyGroups is the key-group range start..end that task of consumer
// stage (of parallelism tasks) reads of a hash exchange, when it reads
// whole key groups of every producer and they are one contiguous range;
// ok is false for any other share (a forward, broadcast or gather edge,
// a piece of a key group split for skew, one producer's output, none).
func (b *Buffer) TaskKeyGroups(stage, task, parallelism int) (start, end int, ok bool) {
	if !b.Hashed() {
		return 0, 0, false
	}
	sl := b.taskSlices(stage, task, parallelism)
	if len(sl) == 0 {
		return 0, 0, false
	}
	start, end = sl[0].Start, sl[0].Start-1
	for _, s := range sl {
		if s.Producer >= 0 || s.Parts > 1 || s.Start != end+1 || s.End < s.Start {
			return 0, 0, false
		}
		end = s.End
	}
	return start, end, true
}

// Selective makes the buffer release output once the tasks reading it
// committed (see above); consumers is the number of stages reading it.
// Call it before any consumer stage starts.
func (b *Buffer) Selective(consumers int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.selective = consumers
	b.need = map[int][][]int32{}
}

// PlanConsumer records which tasks of consumer stage (of parallelism
// tasks, their slices fixed) read which key groups of which producer.
// Call it when the stage starts, before its first task commits.
func (b *Buffer) PlanConsumer(stage, parallelism int) {
	b.mu.Lock()
	sel := b.selective > 0 && b.need[stage] == nil
	b.mu.Unlock()
	if !sel {
		return
	}
	need := make([][]int32, b.Producers)
	for p := range need {
		need[p] = make([]int32, b.Subpartitions)
	}
	for task := 0; task < parallelism; task++ {
		b.eachRead(b.taskSlices(stage, task, parallelism), func(p, sub int) { need[p][sub]++ })
	}
	b.mu.Lock()
	b.need[stage] = need
	b.mu.Unlock()
}

// eachRead calls f with every (producer, subpartition) the slices read.
func (b *Buffer) eachRead(slices []keygroup.Slice, f func(p, sub int)) {
	for _, s := range slices {
		for p := 0; p < b.Producers; p++ {
			if s.Producer >= 0 && p != s.Producer {
				continue
			}
			for sub := max(s.Start, 0); sub <= s.End && sub < b.Subpartitions; sub++ {
				f(p, sub)
			}
		}
	}
}

// Consumed says task of consumer stage (of parallelism tasks) committed:
// in selective mode, output no consumer task still needs is released.
func (b *Buffer) Consumed(stage, task, parallelism int) {
	b.mu.Lock()
	need := b.need[stage]
	b.mu.Unlock()
	if need == nil {
		return
	}
	slices := b.taskSlices(stage, task, parallelism)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.released {
		return
	}
	b.eachRead(slices, func(p, sub int) {
		if need[p][sub] > 0 {
			need[p][sub]--
		}
	})
	if len(b.need) < b.selective {
		return // a consumer stage that has not started reads everything
	}
	free := make([][]bool, b.Producers)
	for p := range free {
		free[p] = make([]bool, b.Subpartitions)
		for sub := range free[p] {
			free[p][sub] = true
			for _, n := range b.need {
				if n[p][sub] > 0 {
					free[p][sub] = false
					break
				}
			}
		}
	}
	b.store.dropConsumed(free)
}

// dropConsumed releases every committed batch all of whose subpartitions
// are free for its producer.
func (s *memStore) dropConsumed(free [][]bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.released {
		return
	}
	for p, bs := range s.batches {
		for _, sb := range bs {
			if sb.dropped {
				continue
			}
			all := true
			for _, sub := range sb.subs {
				if int(sub) >= len(free[p]) || !free[p][sub] {
					all = false
					break
				}
			}
			if !all {
				continue
			}
			s.droppedBytes += sb.held
			s.releaseBatch(sb)
			sb.file, sb.recs, sb.dropped = nil, nil, true
		}
	}
}

// ReleasedEarly is the memory selective mode gave back before the
// exchange was released.
func (b *Buffer) ReleasedEarly() int64 {
	b.store.mu.Lock()
	defer b.store.mu.Unlock()
	return b.store.droppedBytes
}

// TaskRows is the number of committed rows task of consumer stage (of
// parallelism tasks) reads of buf (as OpenReader reads it): a hint an
// operator may size its tables by. A slice that is one part of a key
// group split for skew counts its share of the rows.
func (b *Buffer) TaskRows(stage, task, parallelism int) int64 {
	sl := b.taskSlices(stage, task, parallelism)
	b.mu.Lock()
	defer b.mu.Unlock()
	var n int64
	for _, s := range sl {
		for p, subs := range b.rows {
			if s.Producer >= 0 && p != s.Producer {
				continue
			}
			var r int64
			for sub := s.Start; sub <= s.End && sub < len(subs); sub++ {
				r += subs[sub]
			}
			if s.Parts > 1 {
				r /= int64(s.Parts)
			}
			n += r
		}
	}
	return n
}
