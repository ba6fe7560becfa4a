package exec

import (
	"cmp"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec/kernels"
)

// readerFilter is what a scan's two row filters (scanRowFilter,
// scanStaticFilter) share as hive.RowFilters: the scan they count rows
// for, the order of their columns, and the gather of kept rows.
type readerFilter struct {
	st *scanStream
	filterOrder
}

// Columns implements hive.RowFilter.
func (f *readerFilter) Columns() []int { return f.next() }

// begin counts a batch of n rows as read when the filter's first column
// arrives (j = 0): the reader decodes every row of that one.
func (f *readerFilter) begin(j, n int) {
	if j == 0 {
		f.st.op.Scan.RowsRead.Add(int64(n))
		f.st.prog.read(f.st.tc, f.st.curSp, int64(n))
	}
}

// Take implements hive.RowFilter.
func (f *readerFilter) Take(a arrow.Array, sel []int32) (arrow.Array, error) {
	out, err := kernels.Take(allocOf(f.st.tc), a, sel)
	if err != nil {
		return nil, errs.Wrap(errs.Internal, "scan of table %s: row filter: %w", f.st.s.Table.Name, err)
	}
	return out, nil
}

// filterOrder is the order a scan's row filter (hive.RowFilter) tests its
// columns in: by the fraction of rows each kept so far in the task,
// lowest first (an adaptive order, as DuckDB orders a table filter's
// conjuncts), so the reader decodes and tests a later column only for
// the few rows the earlier ones kept. A column not tested yet keeps its
// place.
type filterOrder struct {
	cols       []int // scan positions of the tested columns, in the filter's own order
	order      []int // indexes into cols, in this batch's order
	ordered    []int // cols in order
	seen, kept []int64
}

func newFilterOrder(cols []int) filterOrder {
	o := filterOrder{cols: cols, ordered: make([]int, len(cols)), seen: make([]int64, len(cols)), kept: make([]int64, len(cols))}
	for i := range cols {
		o.order = append(o.order, i)
	}
	return o
}

// next orders the columns for the next batch and returns their scan
// positions in that order (hive.RowFilter.Columns).
func (o *filterOrder) next() []int {
	rate := func(c int) float64 {
		if o.seen[c] == 0 {
			return 0
		}
		return float64(o.kept[c]) / float64(o.seen[c])
	}
	slices.SortStableFunc(o.order, func(a, b int) int { return cmp.Compare(rate(a), rate(b)) })
	for j, c := range o.order {
		o.ordered[j] = o.cols[c]
	}
	return o.ordered
}

// count records that the j-th column of this batch's order kept kept of
// seen rows, and returns its index in cols.
func (o *filterOrder) count(j, seen, kept int) int {
	c := o.order[j]
	o.seen[c] += int64(seen)
	o.kept[c] += int64(kept)
	return c
}
