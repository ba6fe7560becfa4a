package exec

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// A hash join's Output: the columns of the joined row its parent reads.
// Without it a join copies every probe and build column of every matched
// pair, including keys and filter columns the projection above drops (q7:
// 19 columns gathered, 5 used). Only pair-emitting joins without a
// residual take an Output; the residual reads the whole joined row.

// projectOutput narrows the joined row's schema to Output.
func (j *HashJoin) projectOutput(full *arrow.Schema) *arrow.Schema {
	if j.Output == nil {
		return full
	}
	fs := make([]arrow.Field, len(j.Output))
	for k, o := range j.Output {
		if o < 0 || o >= full.NumFields() {
			// checkOutput rejects the plan at Open; keep Schema total.
			return full
		}
		fs[k] = full.Field(o)
	}
	return arrow.NewSchema(fs, nil)
}

func (j *HashJoin) checkOutput() error {
	if j.Output == nil {
		return nil
	}
	if !j.Type.emitsPairs() || j.Residual != nil {
		return fmt.Errorf("%w: a %s hash join with a residual or without build columns cannot narrow its output", ErrInternal, j.Type)
	}
	w := j.Probe.Schema().NumFields() + j.Build.Schema().NumFields()
	for _, o := range j.Output {
		if o < 0 || o >= w {
			return fmt.Errorf("%w: hash join output column %d of %d", ErrInternal, o, w)
		}
	}
	return nil
}

func (j *HashJoin) outputString() string {
	if j.Output == nil {
		return ""
	}
	return fmt.Sprintf(", output %v", j.Output)
}

// gatherOutput builds the Output columns of joined rows: probe row pi[k]
// (NULL when -1 or no probe batch) next to build row bi[k] (NULL when -1).
func (s *hashJoinStream) gatherOutput(pb arrow.RecordBatch, pi, bi []int32) (arrow.RecordBatch, error) {
	alloc := s.ec.Alloc
	pw := s.j.Probe.Schema().NumFields()
	var probe, build []arrow.Array
	for _, o := range s.j.Output {
		switch {
		case o >= pw:
			build = append(build, s.buildCols[o-pw])
		case pb != nil:
			probe = append(probe, pb.Column(o))
		}
	}
	var pc []arrow.Array
	if pb != nil {
		var err error
		if pc, err = takeArrays(alloc, probe, pi); err != nil {
			return nil, err
		}
	}
	bc, err := takeArrays(alloc, build, bi)
	if err != nil {
		releaseArrays(pc)
		return nil, err
	}
	cols := make([]arrow.Array, len(s.j.Output))
	fields := s.j.Probe.Schema()
	for k, o := range s.j.Output {
		switch {
		case o >= pw:
			cols[k], bc = bc[0], bc[1:]
		case pb != nil:
			cols[k], pc = pc[0], pc[1:]
		default:
			cols[k] = array.MakeArrayOfNull(alloc, fields.Field(o).Type, len(bi))
		}
	}
	return newBatch(s.schema, cols, len(bi)), nil
}

// uniqueChains reports whether the chains next (hashJoinStream.next) are
// all one row long: no build row has another with its key after it.
// Rows with a NULL key are -1 too.
func uniqueChains(next []int32) bool {
	for _, n := range next {
		if n >= 0 {
			return false
		}
	}
	return true
}

// allMatched reports whether every probe row has a chain.
func allMatched(heads []int32) bool {
	for _, h := range heads {
		if h < 0 {
			return false
		}
	}
	return true
}

// emitLeftUnique joins the probe batch of a left join whose build keys
// are unique (no residual, the build side whole): every probe row is
// emitted exactly once, matched to its one build row or to NULLs, so the
// output is the probe batch itself, in its own order, next to the build
// columns gathered at the chain heads (-1, a NULL row, where none
// matched). The probe columns are passed on, not copied: q78's left
// joins of the store aggregate keep most of its rows unmatched, and
// copying them (as pairs, then as unmatched rows) was most of the join's
// output work. An inner join comes here too when every row of the probe
// batch matched (step checks): the output is then the same.
func (s *hashJoinStream) emitLeftUnique() error {
	pb := s.pb
	s.pb = nil
	defer pb.Release()
	n := int(pb.NumRows())
	heads := s.heads[:n]
	pw := s.j.Probe.Schema().NumFields()
	outs := s.j.Output
	if outs == nil {
		outs = make([]int, pw+len(s.buildCols))
		for i := range outs {
			outs[i] = i
		}
	}
	var build []arrow.Array
	for _, o := range outs {
		if o >= pw {
			build = append(build, s.buildCols[o-pw])
		}
	}
	bc, err := takeArrays(s.ec.Alloc, build, heads)
	if err != nil {
		return err
	}
	cols := make([]arrow.Array, len(outs))
	for k, o := range outs {
		if o >= pw {
			cols[k], bc = bc[0], bc[1:]
			continue
		}
		c := pb.Column(o)
		c.Retain()
		cols[k] = c
	}
	s.prow = n
	s.pending = append(s.pending, newBatch(s.schema, cols, n))
	return nil
}
