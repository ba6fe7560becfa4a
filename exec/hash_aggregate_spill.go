package exec

import (
	"context"
	"errors"
	"io"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec/expr"
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
//
// A DISTINCT aggregate's state is not mergeable (the same value may have
// been counted on both sides), so it spills its (group, value) pairs
// instead: a file row holds the group keys, then per aggregate either
// its state columns or, for a DISTINCT one, a value column. A group row
// has every value column NULL; a pair row has one value and every state
// column NULL. NULL states merge as nothing and NULL values are no
// DISTINCT value, so merging every row of a file the same way folds the
// groups' states and rebuilds each group's distinct values from scratch.
// Pairs go to the partition of their group's keys, so a partition holds
// whole groups. GROUP_CONCAT's state is its entries, in arrival order,
// which merge by appending: file order keeps the arrival order.

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

// resetTable starts an empty table, fresh states and DISTINCT pairs,
// giving back what the old ones were charged.
func (s *hashAggStream) resetTable() {
	s.groups = newGroupTable(s.keyTypes)
	s.sized = 0
	s.states = s.states[:0]
	s.distinct = s.newDistinct()
	for i, f := range s.a.Aggs {
		st, _ := newAggStateOf(f, s.stateTypes[i]) // made once in Open
		st.grow(s.groups.n)
		s.states = append(s.states, st)
	}
	s.res.Resize(0)
}

// spillTable writes the table's groups as partial states into the
// current level's partitions (one file, spill.PartWriter) and empties
// the table.
func (s *hashAggStream) spillTable() error {
	s.spilled = true
	if len(s.keyTypes) == 0 {
		return s.spillGlobalDistinct()
	}
	if s.groups.n == 0 {
		return nil
	}
	alloc := s.ec.Alloc
	n := s.groups.n
	keys, err := s.groups.arrays(alloc)
	if err != nil {
		return err
	}
	defer func() { releaseArrays(keys) }()
	// One column set per aggregate: its states, or NULL values.
	aggCols := make([][]arrow.Array, len(s.states))
	defer func() {
		for _, c := range aggCols {
			releaseArrays(c)
		}
	}()
	for i, st := range s.states {
		if s.distinct[i] != nil {
			aggCols[i] = []arrow.Array{nullArray(alloc, s.stateTypes[i], n)}
			continue
		}
		if aggCols[i], err = st.partial(alloc, n); err != nil {
			return err
		}
	}
	if s.partSchema == nil {
		s.partSchema = aggSpillSchema(keys, aggCols)
	}
	if err := s.spillRows(keys, aggCols, n); err != nil {
		return err
	}
	// Then each DISTINCT aggregate's pairs, under their group's keys.
	for i, d := range s.distinct {
		if d == nil || d.n == 0 {
			continue
		}
		if err := s.spillPairs(i, keys); err != nil {
			return err
		}
	}
	s.resetTable()
	return nil
}

// spillPairs writes DISTINCT aggregate i's (group, value) pairs as rows
// of the group's keys and the value, every state column NULL.
func (s *hashAggStream) spillPairs(i int, groupKeys []arrow.Array) error {
	alloc := s.ec.Alloc
	d := s.distinct[i]
	pair, err := d.arrays(alloc)
	if err != nil {
		return err
	}
	defer releaseArrays(pair)
	gids := arrow.GetValues[int32](pair[0].Data(), 1)[:d.n]
	keys, err := takeArrays(alloc, groupKeys, gids)
	if err != nil {
		return err
	}
	defer releaseArrays(keys)
	aggCols := make([][]arrow.Array, len(s.states))
	defer func() {
		for j, c := range aggCols {
			if j != i {
				releaseArrays(c)
			}
		}
	}()
	f := len(groupKeys)
	for j := range s.states {
		if j == i {
			aggCols[j] = pair[1:2]
			f++
			continue
		}
		k := 1
		if s.distinct[j] == nil {
			k = numStateCols(s.a.Aggs[j].Fn)
		}
		for c := 0; c < k; c++ {
			aggCols[j] = append(aggCols[j], nullArray(alloc, s.partSchema.Field(f).Type, d.n))
			f++
		}
	}
	return s.spillRows(keys, aggCols, d.n)
}

// aggSpillSchema is the layout of a partition file: the group keys, then
// each aggregate's columns.
func aggSpillSchema(keys []arrow.Array, aggCols [][]arrow.Array) *arrow.Schema {
	var fs []arrow.Field
	add := func(c arrow.Array) {
		fs = append(fs, arrow.Field{Name: "c" + itoa(len(fs)), Type: c.DataType(), Nullable: true})
	}
	for _, c := range keys {
		add(c)
	}
	for _, cs := range aggCols {
		for _, c := range cs {
			add(c)
		}
	}
	return arrow.NewSchema(fs, nil)
}

// nullArray is n NULLs of type dt (a collated string's storage is a
// plain string).
func nullArray(alloc memory.Allocator, dt arrow.DataType, n int) arrow.Array {
	if expr.CollationOf(dt) != nil {
		return expr.Collated(dt, array.MakeArrayOfNull(alloc, arrow.BinaryTypes.String, n))
	}
	return array.MakeArrayOfNull(alloc, dt, n)
}

// spillRows writes n rows, the keys and every aggregate's columns, into
// the current level's partition files by the seeded hash of the keys.
func (s *hashAggStream) spillRows(keys []arrow.Array, aggCols [][]arrow.Array, n int) error {
	alloc := s.ec.Alloc
	cols := slices.Clone(keys)
	for _, cs := range aggCols {
		cols = append(cols, cs...)
	}
	h := make([]uint32, n)
	HashColumns(keys, h)
	part := spillPartitionOf(h, s.level, aggSpillPartitions, nil)
	idx := make([][]int32, aggSpillPartitions)
	for r, p := range part {
		idx[p] = append(idx[p], int32(r))
	}
	for p, rows := range idx {
		if len(rows) == 0 {
			continue
		}
		if s.parts == nil {
			w, err := s.tc.createSpillParts("hash aggregate", "hash-aggregate-partitions", s.partSchema, aggSpillPartitions, s.res)
			if err != nil {
				return err
			}
			s.parts = w
		}
		taken, err := takeArrays(alloc, cols, rows)
		if err != nil {
			return err
		}
		err = s.parts.writeCols(p, s.partSchema, taken, len(rows))
		releaseArrays(taken)
		if err != nil {
			return err
		}
	}
	return nil
}

// finishParts closes the current level's partition files and queues
// them for merging (next level's seed).
func (s *hashAggStream) finishParts() error {
	parts := s.parts
	s.parts = nil
	return parts.finish(func(_ int, f *spill.File) {
		s.pending = append(s.pending, aggPartition{file: f, level: s.level + 1})
	})
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
		if err == errAggOver && !split && !s.byValue && s.canSplitByValue() {
			// Its groups fit: what does not is DISTINCT pairs, which a
			// split by key would keep together.
			err = s.startValueSplit()
		}
		if err == errAggOver && s.byValue {
			err = errs.New(errs.Resources, "hash aggregate: the groups of a spilled partition divided by DISTINCT value outgrow the aggregate's share of the memory budget (%d bytes) on their own; raise it with --set execution.memory.query-budget=<bytes>", s.res.Share())
		}
		if err == errAggOver {
			split = true
			err = s.spillTable()
		}
		if err != nil {
			return err
		}
	}
	if s.byValue {
		return s.mergeByValue(ctx)
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
		if s.distinct[i] != nil && s.byValue {
			// A value column, divided by pair into files.
			if err := s.routePairs(i, cols[col], s.gids); err != nil {
				return err
			}
			col++
			continue
		}
		if s.distinct[i] != nil {
			// A value column: rebuild the group's distinct values.
			vals, gids, err := s.firstSeen(i, cols[col], s.gids)
			if err != nil {
				return err
			}
			err = st.update(gids, vals)
			vals.Release()
			if err != nil {
				return err
			}
			col++
			continue
		}
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
