package exec

import "math"

// A final aggregate over an exchange knows, before it reads a row, how
// many rows it will read (TaskContext.InputRows). When the partial
// aggregates upstream found their keys near-unique (they passed rows
// through), nearly every one of those rows is a group of its own: q97's
// final aggregates make 534k and 286k groups of 546k and 286k rows.
// Doubling the table from 16 slots up to that re-inserts every group
// about twice and touches fresh memory at every step (page faults, as
// the benchmark frees the heap to the OS before each statement): a
// quarter of q97's CPU. So after the first batch, whose share of new
// groups says how unique the keys are, the table and the states are
// sized once for the groups the whole input would make at that rate.
//
// The estimate is a hint, never a limit: an estimate too small grows by
// doubling as before, one too large (partials of several producers that
// share their groups) leaves the table at most that many times larger
// than needed. It is reserved before anything is allocated, and a
// reservation the aggregate's share refuses leaves the table to grow as
// groups arrive.

// sizeFor judges the first batch (rows rows, all of them in the table).
func (s *hashAggStream) sizeFor(rows int) {
	if s.a.Mode != AggFinal || len(s.keyTypes) == 0 || s.inputRows <= int64(rows) {
		return
	}
	// Keys that repeat within a batch repeat across batches too: only
	// near-unique keys are worth sizing for.
	if 2*s.groups.n < rows {
		return
	}
	est := s.inputRows * int64(s.groups.n) / int64(rows)
	est = min(est, math.MaxInt32/4)
	groups := int(est)
	need := s.groups.sizedBytes(groups) + est*int64(24*len(s.states))
	if share := s.res.Share(); share >= 0 && need > share/2 {
		return // leave room to the table's own growth and to spilling
	}
	if have := s.res.Size(); need > have && s.res.Grow(need-have) != nil {
		return
	}
	s.groups.presize(groups)
	for _, st := range s.states {
		st.grow(groups)
	}
	s.sized = groups
}
