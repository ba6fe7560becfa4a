package exec

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec/kernels"
)

// scanRowFilter is a scan's dynamic row filter handed to the Parquet
// reader (hive.RowFilter): the reader decodes the filtered key columns
// first and then only the surviving rows of the others, instead of the
// scan decoding every column of every row and dropping most of them
// (rowFilter). On the flat layout, q7's scan of store_sales keeps 1.2%
// of its rows on ss_cdemo_sk, q46's 6%.
type scanRowFilter struct {
	st     *scanStream
	cols   []int         // positions in the scan's columns of the tested columns
	schema *arrow.Schema // their fields, for Decision.FilterRows
	sel    []int32
}

// newScanRowFilter returns the filter of st's decision, or nil when the
// scan outputs none of the columns it tests.
func newScanRowFilter(st *scanStream) *scanRowFilter {
	if st.dp == nil || !st.dp.FiltersFiles() {
		return nil
	}
	f := &scanRowFilter{st: st}
	var fields []arrow.Field
	seen := map[string]bool{}
	for _, name := range st.dp.FileColumns() {
		if seen[name] {
			continue // two collectors on one column (q4's, q59's self-joins): one copy, FilterRows tests both
		}
		seen[name] = true
		for i, c := range st.s.Columns {
			fd := st.s.Table.Schema.Field(c)
			if fd.Name == name {
				f.cols = append(f.cols, i)
				fields = append(fields, fd)
				break
			}
		}
	}
	if len(f.cols) == 0 {
		return nil
	}
	f.schema = arrow.NewSchema(fields, nil)
	return f
}

func (f *scanRowFilter) Columns() []int { return f.cols }

func (f *scanRowFilter) Select(cols []arrow.Array, n int) ([]int32, bool, error) {
	st := f.st
	st.op.Scan.RowsRead.Add(int64(n))
	st.prog.read(st.tc, st.curSp, int64(n))
	b := array.NewRecordBatch(f.schema, cols, int64(n))
	defer b.Release()
	mask, err := st.dp.FilterRows(b, allocOf(st.tc))
	if err != nil {
		return nil, false, fmt.Errorf("%w: scan of table %s: dynamic row filter: %w", ErrExecution, st.s.Table.Name, err)
	}
	defer mask.Release()
	if mask.Len() != n {
		return nil, false, fmt.Errorf("%w: scan of table %s: dynamic row filter returned %d values for %d rows", ErrInternal, st.s.Table.Name, mask.Len(), n)
	}
	f.sel = kernels.Selection(mask, f.sel[:0])
	st.op.Scan.RowsKept.Add(int64(len(f.sel)))
	return f.sel, len(f.sel) == n, nil
}

func (f *scanRowFilter) Take(a arrow.Array, sel []int32) (arrow.Array, error) {
	out, err := kernels.Take(allocOf(f.st.tc), a, sel)
	if err != nil {
		return nil, errs.Wrap(errs.Internal, "scan of table %s: dynamic row filter: %w", f.st.s.Table.Name, err)
	}
	return out, nil
}
