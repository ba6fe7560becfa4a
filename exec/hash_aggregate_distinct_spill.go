package exec

import (
	"context"
	"io"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/spill"
)

// Without GROUP BY an aggregate has one group, so its groups cannot be
// divided; what outgrows the share there is a DISTINCT aggregate's set of
// values (count(DISTINCT x) over a fact table). That set is divided by
// value instead: past the share, each DISTINCT aggregate's values seen so
// far go into aggSpillPartitions files by a seeded hash of the value, and
// the set starts empty. When the input ends, the aggregate's state starts
// again and each file is de-duplicated alone and folded in: a value
// always hashes to the same file, so the files' sets are disjoint and
// together the whole set. A file whose set still does not fit is divided
// again with the next level's seed. The other aggregates' states (one
// group each) stay in memory throughout.

// valuePartition is one file of a DISTINCT aggregate's values.
type valuePartition struct {
	agg   int
	file  *spill.File
	level int
}

// globalDistinctSpills reports whether an aggregate without GROUP BY can
// spill: a single (not partial or final) aggregate with DISTINCT
// aggregates and no GROUP_CONCAT, whose entries cannot be divided.
func (s *hashAggStream) globalDistinctSpills() bool {
	if s.a.Mode != AggSingle || s.tc.Spill == nil {
		return false
	}
	found := false
	for i, f := range s.a.Aggs {
		if normAggFn(f.Fn) == "group_concat" {
			return false
		}
		if s.distinct[i] != nil {
			found = true
		}
	}
	return found
}

// valueTable is an empty set of aggregate i's values.
func (s *hashAggStream) valueTable(i int) *groupTable {
	return newGroupTable([]arrow.DataType{s.stateTypes[i]})
}

// spillGlobalDistinct writes every DISTINCT aggregate's values seen so
// far into its level-0 files and empties the sets.
func (s *hashAggStream) spillGlobalDistinct() error {
	if s.valueParts == nil {
		s.valueParts = make([]*spillParts, len(s.a.Aggs))
	}
	for i, d := range s.distinct {
		if d == nil || d.n == 0 {
			continue
		}
		pair, err := d.arrays(s.ec.Alloc)
		if err != nil {
			return err
		}
		err = s.writeValues(&s.valueParts[i], pair[1], 0)
		releaseArrays(pair)
		if err != nil {
			return err
		}
		s.distinct[i] = newGroupTable([]arrow.DataType{arrow.PrimitiveTypes.Int32, s.stateTypes[i]})
	}
	return s.res.Resize(0)
}

// writeValues writes vals into files by the seeded hash of level.
func (s *hashAggStream) writeValues(files **spillParts, vals arrow.Array, level int) error {
	return s.writeByHash(files, "hash-aggregate-distinct", []arrow.Array{vals}, level)
}

// writeByHash writes the rows of cols into aggSpillPartitions
// partitions of one file by the seeded hash of level over every column,
// creating the file when rows first come.
func (s *hashAggStream) writeByHash(files **spillParts, purpose string, cols []arrow.Array, level int) error {
	n := cols[0].Len()
	if n == 0 {
		return nil
	}
	h := make([]uint32, n)
	HashColumns(cols, h)
	part := spillPartitionOf(h, level, aggSpillPartitions, nil)
	idx := make([][]int32, aggSpillPartitions)
	for r, p := range part {
		idx[p] = append(idx[p], int32(r))
	}
	fs := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fs[i] = arrow.Field{Name: "c" + itoa(i), Type: c.DataType(), Nullable: true}
	}
	schema := arrow.NewSchema(fs, nil)
	for p, rows := range idx {
		if len(rows) == 0 {
			continue
		}
		if *files == nil {
			w, err := s.tc.createSpillParts("hash aggregate", purpose, schema, aggSpillPartitions, s.res)
			if err != nil {
				return err
			}
			*files = w
		}
		taken, err := takeArrays(s.ec.Alloc, cols, rows)
		if err != nil {
			return err
		}
		err = (*files).writeCols(p, schema, taken, len(rows))
		releaseArrays(taken)
		if err != nil {
			return err
		}
	}
	return nil
}

// queueValues finishes files and queues them for aggregate i at level.
func (s *hashAggStream) queueValues(i int, files *spillParts, level int) error {
	return files.finish(func(_ int, f *spill.File) {
		s.valuePending = append(s.valuePending, valuePartition{agg: i, file: f, level: level})
	})
}

// mergeGlobalDistinct folds every DISTINCT aggregate's value files into
// its (fresh) state, then sets the one group as the output.
func (s *hashAggStream) mergeGlobalDistinct(ctx context.Context) error {
	for i := range s.valueParts {
		files := s.valueParts[i]
		s.valueParts[i] = nil
		if s.distinct[i] == nil {
			continue
		}
		// The state saw values more than once across spills: it starts
		// again from the files.
		st, err := newAggStateOf(s.a.Aggs[i], s.stateTypes[i])
		if err != nil {
			return err
		}
		st.grow(1)
		s.states[i] = st
		if err := s.queueValues(i, files, 1); err != nil {
			return err
		}
	}
	for len(s.valuePending) > 0 {
		p := s.valuePending[len(s.valuePending)-1]
		s.valuePending = s.valuePending[:len(s.valuePending)-1]
		if err := s.mergeValues(ctx, p); err != nil {
			return err
		}
	}
	return s.finish()
}

// mergeValues de-duplicates one file of aggregate p.agg's values and
// folds them into its state, or divides the file again when its set
// does not fit.
func (s *hashAggStream) mergeValues(ctx context.Context, p valuePartition) error {
	if p.level > aggMaxLevels {
		p.file.Remove()
		return errs.New(errs.Resources, "hash aggregate without GROUP BY: DISTINCT values still outgrow the aggregate's share of the memory budget (%d bytes) after %d levels of spilled partitions; raise it with --set execution.memory.query-budget=<bytes>", s.res.Share(), aggMaxLevels)
	}
	s.tc.notePasses(p.level)
	in, err := s.tc.openSpill("hash aggregate", p.file, true)
	if err != nil {
		return err
	}
	defer in.Close()
	set := s.valueTable(p.agg)
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
		vals := b.Column(0)
		if set != nil {
			ids, err = set.ids([]arrow.Array{vals}, vals.Len(), ids)
			if err == nil {
				if s.res.Resize(set.bytes()) != nil {
					// The set does not fit: it and the rest of the file
					// go into the next level's files.
					var have []arrow.Array
					if have, err = set.arrays(s.ec.Alloc); err == nil {
						err = s.writeValues(&next, have[0], p.level)
						releaseArrays(have)
					}
					set = nil
					s.res.Resize(0)
				}
			}
			b.Release()
			if err != nil {
				return err
			}
			continue
		}
		err = s.writeValues(&next, vals, p.level)
		b.Release()
		if err != nil {
			return err
		}
	}
	if set == nil {
		files := next
		next = nil
		return s.queueValues(p.agg, files, p.level+1)
	}
	vals, err := set.arrays(s.ec.Alloc)
	if err != nil {
		return err
	}
	defer releaseArrays(vals)
	gids := make([]int32, set.n) // the one group; NULL folds as nothing
	err = s.states[p.agg].update(gids, vals[0])
	s.res.Resize(0)
	return err
}

// closeGlobalDistinct drops the value files (error and cancellation).
func (s *hashAggStream) closeGlobalDistinct() {
	for _, files := range s.valueParts {
		files.abort()
	}
	s.valueParts = nil
	for _, p := range s.valuePending {
		p.file.Remove()
	}
	s.valuePending = nil
}
