package exec

import (
	"context"
	"errors"
	"io"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/spill"
)

// This file is how a hash aggregate outgrows its share of the budget.
//
// A partial aggregate hands its groups out early (consume) and starts an
// empty table: the final aggregate merges groups however the rows were
// divided. A single or final aggregate writes its table, as partial
// states (the columns AggPartial emits: group keys, then each
// aggregate's state columns), into aggSpillPartitions files by a hash of
// the group keys, and starts an empty table; when the input ends, what
// is left joins the files, and each file is merged alone into a fresh
// table (aggState.merge) and handed out. A partition that still does not
// fit is split again with the next level's seed, so no level repeats the
// division of the one before, nor the key-group division of the
// exchange that fed the task. Every group's rows meet in one partition
// at every level, so each group is merged completely exactly once.

// aggSpillPartitions is the fan-out of one level of spilled partitions.
const aggSpillPartitions = 16

// aggMaxLevels bounds the repartitioning: a partition still too big
// after this many levels holds groups whose states alone outgrow the
// share.
const aggMaxLevels = 8

// errAggOver tells the aggregate its table passed its share.
var errAggOver = errors.New("hash aggregate over its share")

// aggPartition is one spilled partition waiting to be merged.
type aggPartition struct {
	file  *spill.File
	level int // the level whose seed made it
}

// spillPartitionOf maps row hashes to partitions with the seed of level:
// a mix of the key hash, so rows that share a shuffle key group spread.
func spillPartitionOf(h []uint32, level int, n int, out []int32) []int32 {
	out = growSlice(out[:0], len(h))
	seed := uint32(0x9e3779b9) * uint32(level+1)
	for i, v := range h {
		x := v ^ seed
		x ^= x >> 16
		x *= 0x85ebca6b
		x ^= x >> 13
		x *= 0xc2b2ae35
		x ^= x >> 16
		out[i] = int32(x % uint32(n))
	}
	return out
}

// resetTable starts an empty table and fresh states, giving back what
// the old ones were charged.
func (s *hashAggStream) resetTable() {
	s.groups = newGroupTable(s.keyTypes)
	s.states = s.states[:0]
	// A spillable aggregate has no DISTINCT sets; finish dropped the
	// slice of them.
	s.distinct = make([]map[string]struct{}, len(s.a.Aggs))
	for i, f := range s.a.Aggs {
		st, _ := newAggStateOf(f, s.stateTypes[i]) // made once in Open
		st.grow(s.groups.n)
		s.states = append(s.states, st)
	}
	s.res.Resize(0)
}

// spillTable writes the table's groups as partial states into the
// current level's partition files and empties the table.
func (s *hashAggStream) spillTable() error {
	s.spilled = true
	if len(s.keyTypes) == 0 || s.groups.n == 0 {
		return nil // one group never outgrows a share: nothing to split
	}
	alloc := s.ec.Alloc
	n := s.groups.n
	cols, err := s.groups.arrays(alloc)
	if err != nil {
		return err
	}
	defer func() { releaseArrays(cols) }()
	for _, st := range s.states {
		sc, err := st.partial(alloc, n)
		if err != nil {
			return err
		}
		cols = append(cols, sc...)
	}
	if s.partSchema == nil {
		fs := make([]arrow.Field, len(cols))
		for i, c := range cols {
			fs[i] = arrow.Field{Name: "c" + itoa(i), Type: c.DataType(), Nullable: true}
		}
		s.partSchema = arrow.NewSchema(fs, nil)
	}
	if s.parts == nil {
		s.parts = make([]*spillFile, aggSpillPartitions)
	}
	h := make([]uint32, n)
	HashColumns(cols[:len(s.keyTypes)], h)
	part := spillPartitionOf(h, s.level, aggSpillPartitions, nil)
	idx := make([][]int32, aggSpillPartitions)
	for r, p := range part {
		idx[p] = append(idx[p], int32(r))
	}
	for p, rows := range idx {
		if len(rows) == 0 {
			continue
		}
		if s.parts[p] == nil {
			w, err := s.tc.createSpill("hash aggregate", "hash-aggregate-partition", s.partSchema)
			if err != nil {
				return err
			}
			s.parts[p] = w
		}
		taken, err := takeArrays(alloc, cols, rows)
		if err != nil {
			return err
		}
		err = s.parts[p].writeCols(s.partSchema, taken, len(rows))
		releaseArrays(taken)
		if err != nil {
			return err
		}
	}
	s.resetTable()
	return nil
}

// finishParts closes the current level's partition files and queues
// them for merging (next level's seed).
func (s *hashAggStream) finishParts() error {
	parts := s.parts
	s.parts = nil
	var first error
	for _, w := range parts {
		if w == nil {
			continue
		}
		if first != nil {
			w.abort()
			continue
		}
		f, err := w.finish()
		if err != nil {
			first = err
			continue
		}
		s.pending = append(s.pending, aggPartition{file: f, level: s.level + 1})
	}
	return first
}

// mergePartition merges the next spilled partition into a fresh table
// and sets its groups as the output; a partition that does not fit is
// split again at the next level.
func (s *hashAggStream) mergePartition(ctx context.Context) error {
	p := s.pending[len(s.pending)-1]
	s.pending = s.pending[:len(s.pending)-1]
	if p.level > aggMaxLevels {
		p.file.Remove()
		return errs.New(errs.Resources, "hash aggregate: groups still outgrow the aggregate's share of the memory budget (%d bytes) after %d levels of spilled partitions; raise it with --set execution.memory.query-budget=<bytes>", s.res.Share(), aggMaxLevels)
	}
	s.level = p.level
	s.tc.notePasses(p.level)
	s.resetTable()
	in, err := s.tc.openSpill("hash aggregate", p.file, true)
	if err != nil {
		return err
	}
	defer in.Close()
	split := false
	for {
		b, err := in.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		err = s.mergeBatch(b)
		b.Release()
		if err == errAggOver {
			split = true
			err = s.spillTable()
		}
		if err != nil {
			return err
		}
	}
	if split {
		if err := s.spillTable(); err != nil {
			return err
		}
		return s.finishParts()
	}
	return s.finish()
}

// mergeBatch folds spilled partial states in.
func (s *hashAggStream) mergeBatch(b arrow.RecordBatch) error {
	n := int(b.NumRows())
	if n == 0 {
		return nil
	}
	g := len(s.keyTypes)
	cols := b.Columns()
	var err error
	s.gids, err = s.groups.ids(cols[:g], n, s.gids)
	if err != nil {
		return err
	}
	col := g
	for _, st := range s.states {
		st.grow(s.groups.n)
	}
	for i, st := range s.states {
		k := numStateCols(s.a.Aggs[i].Fn)
		if err := st.merge(s.gids, cols[col:col+k]); err != nil {
			return err
		}
		col += k
	}
	return s.reserve()
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}
