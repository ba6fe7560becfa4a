package exec

import (
	"context"

	"github.com/fsql-dev/fsql/pruning"
)

// TaskInputBytes implements TaskSizedSource: the bytes of the splits each
// of p tasks reads (AssignSplits), after static pruning and, once the
// scan's collectors finished, dynamic pruning, exactly as the tasks will
// compute their shares. If dynamic pruning fails the shares are static;
// the tasks report the error.
func (s *Scan) TaskInputBytes(ctx context.Context, tc *TaskContext, p int) ([]int64, error) {
	out := make([]int64, max(p, 1))
	if s.Table == nil {
		return out, nil
	}
	var dp *pruning.Decision
	if len(s.DynamicFilters) > 0 && tc != nil && tc.DynamicFilters != nil {
		if d, err := tc.DynamicFilters.Prune(ctx, s.Table, s.partitions(), s.DynamicFilters); err == nil {
			dp = d
		}
	}
	splits := s.splits(dp)
	owner := AssignSplits(splits, len(out))
	for i, sp := range splits {
		out[owner[i]] += sp.Bytes
	}
	return out, nil
}

// scanProgress turns the rows a scan decodes into input bytes for the
// runtime's progress estimate: a split's bytes spread over its rows, so
// that a split reports exactly its planned bytes once read, gradually
// (a row group is opened whole, but decoded a batch at a time).
type scanProgress struct {
	sp                    *Split
	rows, total, reported int64
}

// read notes n more rows decoded of split sp.
func (p *scanProgress) read(tc *TaskContext, sp *Split, n int64) {
	if tc == nil || tc.InputRead == nil || sp == nil {
		return
	}
	if p.sp != sp {
		p.sp, p.rows, p.reported, p.total = sp, 0, 0, 0
		for _, rg := range sp.RowGroups {
			p.total += sp.File.RowGroups[rg].NumRows
		}
	}
	p.rows += n
	if p.total <= 0 {
		return
	}
	want := sp.Bytes * min(p.rows, p.total) / p.total
	tc.ReportInput(want - p.reported)
	p.reported = want
}
