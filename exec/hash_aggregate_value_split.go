package exec

import (
	"context"
	"io"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/spill"
)

// A keyed aggregate's spilled partition that outgrows the share again is
// split by group key (hash_aggregate_spill.go). That cannot help when
// what outgrows it is one group's (or a few groups') DISTINCT values:
// every pair of a group follows the group's key into one partition at
// every level. Such a partition, whose groups and other states take at
// most half the share, is divided by pair instead, as an
// aggregate without GROUP BY divides its one group's set
// (hash_aggregate_distinct_spill.go): its groups stay in memory with
// their other states; every (group, value) pair of a DISTINCT aggregate,
// those met so far and the rest of the file's, goes into
// aggSpillPartitions files by a seeded hash of the pair (group id and
// value), and the DISTINCT aggregates' states start again. When the file
// is read, each pair file is de-duplicated alone and folded into its
// aggregate's state: the files hold disjoint pairs, so each distinct
// pair is folded exactly once. A pair file whose set still does not fit
// is divided again with the next level's seed. GROUP_CONCAT(DISTINCT)
// keeps its values in arrival order, which a division by pair loses: its
// partitions are split by key only.

// pairPartition is one file of aggregate agg's (group id, value) pairs.
type pairPartition struct {
	agg   int
	file  *spill.File
	level int
}

// canSplitByValue reports whether the partition being merged, past its
// share, is divided by pair: it has DISTINCT aggregates, none of them a
// GROUP_CONCAT, and its groups with their other states take at most
// half the share, so what outgrows the share is pairs (and the pair
// files' sets have the other half).
func (s *hashAggStream) canSplitByValue() bool {
	found := false
	for i, f := range s.a.Aggs {
		if s.distinct[i] == nil {
			continue
		}
		if normAggFn(f.Fn) == "group_concat" {
			return false
		}
		found = true
	}
	return found && 2*s.tableNeed(false) <= s.res.Share()
}

// startValueSplit turns the partition being merged to division by pair:
// the pairs met so far go to the pair files, and the DISTINCT
// aggregates' states start again (the files fold every pair in).
func (s *hashAggStream) startValueSplit() error {
	s.byValue = true
	s.pairParts = make([]*spillParts, len(s.a.Aggs))
	for i, d := range s.distinct {
		if d == nil {
			continue
		}
		if d.n > 0 {
			pair, err := d.arrays(s.ec.Alloc)
			if err != nil {
				return err
			}
			err = s.writeByHash(&s.pairParts[i], "hash-aggregate-pairs", pair, 0)
			releaseArrays(pair)
			if err != nil {
				return err
			}
		}
		s.distinct[i] = newGroupTable([]arrow.DataType{arrow.PrimitiveTypes.Int32, s.stateTypes[i]})
		st, err := newAggStateOf(s.a.Aggs[i], s.stateTypes[i])
		if err != nil {
			return err
		}
		st.grow(s.groups.n)
		s.states[i] = st
	}
	if err := s.res.Resize(s.tableNeed(false)); err != nil {
		return errAggOver
	}
	return nil
}

// routePairs writes the pairs of DISTINCT aggregate i in a partition
// file's batch (its rows with a value; the others are group rows or
// another aggregate's pairs) to the pair files.
func (s *hashAggStream) routePairs(i int, vals arrow.Array, gids []int32) error {
	bits, off := validity(vals)
	var sel, g []int32
	for r := range gids {
		if isValid(bits, off, r) {
			sel = append(sel, int32(r))
			g = append(g, gids[r])
		}
	}
	if len(sel) == 0 {
		return nil
	}
	taken, err := takeArrays(s.ec.Alloc, []arrow.Array{vals}, sel)
	if err != nil {
		return err
	}
	ga := fixedArray(s.ec.Alloc, arrow.PrimitiveTypes.Int32, g, nil)
	err = s.writeByHash(&s.pairParts[i], "hash-aggregate-pairs", []arrow.Array{ga, taken[0]}, 0)
	ga.Release()
	releaseArrays(taken)
	return err
}

// mergeByValue folds every pair file of the partition just read into
// the DISTINCT aggregates' states and sets its groups as the output.
func (s *hashAggStream) mergeByValue(ctx context.Context) error {
	s.byValue = false
	parts := s.pairParts
	s.pairParts = nil
	for i, files := range parts {
		if err := s.queuePairs(i, files, 1); err != nil {
			for _, fs := range parts[i+1:] {
				fs.abort()
			}
			return err
		}
	}
	base := s.tableNeed(false)
	for len(s.pairPending) > 0 {
		p := s.pairPending[len(s.pairPending)-1]
		s.pairPending = s.pairPending[:len(s.pairPending)-1]
		if err := s.foldPairs(ctx, p, base); err != nil {
			return err
		}
	}
	return s.finish()
}

// queuePairs finishes aggregate i's pair files and queues them at level.
func (s *hashAggStream) queuePairs(i int, files *spillParts, level int) error {
	return files.finish(func(_ int, f *spill.File) {
		s.pairPending = append(s.pairPending, pairPartition{agg: i, file: f, level: level})
	})
}

// foldPairs de-duplicates one pair file and folds its values into the
// groups' state of aggregate p.agg, or divides the file again when its
// set does not fit beside the groups (base bytes).
func (s *hashAggStream) foldPairs(ctx context.Context, p pairPartition, base int64) error {
	if p.level > aggMaxLevels {
		p.file.Remove()
		return errs.New(errs.Resources, "hash aggregate: DISTINCT values of a group still outgrow the aggregate's share of the memory budget (%d bytes) after %d levels of spilled partitions; raise it with --set execution.memory.query-budget=<bytes>", s.res.Share(), aggMaxLevels)
	}
	s.tc.notePasses(s.level + p.level)
	in, err := s.tc.openSpill("hash aggregate", p.file, true)
	if err != nil {
		return err
	}
	defer in.Close()
	set := newGroupTable([]arrow.DataType{arrow.PrimitiveTypes.Int32, s.stateTypes[p.agg]})
	var next *spillParts
	defer func() { next.abort() }()
	var ids []int32
	for {
		b, err := in.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		cols := b.Columns()
		if set != nil {
			ids, err = set.ids(cols, int(b.NumRows()), ids)
			if err == nil && s.res.Resize(base+set.bytes()) != nil {
				// The set does not fit: it and the rest of the file go
				// into the next level's files.
				var have []arrow.Array
				if have, err = set.arrays(s.ec.Alloc); err == nil {
					err = s.writeByHash(&next, "hash-aggregate-pairs", have, p.level)
					releaseArrays(have)
				}
				set = nil
				_ = s.res.Resize(base)
			}
			b.Release()
			if err != nil {
				return err
			}
			continue
		}
		err = s.writeByHash(&next, "hash-aggregate-pairs", cols, p.level)
		b.Release()
		if err != nil {
			return err
		}
	}
	if set == nil {
		files := next
		next = nil
		return s.queuePairs(p.agg, files, p.level+1)
	}
	pair, err := set.arrays(s.ec.Alloc)
	if err != nil {
		return err
	}
	defer releaseArrays(pair)
	gids := arrow.GetValues[int32](pair[0].Data(), 1)[:set.n]
	err = s.states[p.agg].update(gids, pair[1])
	_ = s.res.Resize(base)
	return err
}

// closeValueSplit drops the pair files (error and cancellation).
func (s *hashAggStream) closeValueSplit() {
	for _, files := range s.pairParts {
		files.abort()
	}
	s.pairParts = nil
	for _, p := range s.pairPending {
		p.file.Remove()
	}
	s.pairPending = nil
}
