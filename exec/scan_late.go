package exec

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"

	"github.com/fsql-dev/fsql/exec/kernels"
)

// scanRowFilter is a scan's dynamic row filter handed to the Parquet
// reader (hive.RowFilter): the reader decodes the filtered key columns
// first and then only the surviving rows of the others, instead of the
// scan decoding every column of every row and dropping most of them
// (rowFilter). On the flat layout, q7's scan of store_sales keeps 1.2%
// of its rows on ss_cdemo_sk, q46's 6%.
//
// The key columns are tested one at a time, most selective first
// (filterOrder).
type scanRowFilter struct {
	readerFilter
	names     []string // the tested columns' names, for Decision.MaskColumn
	mask, tmp []byte
	sel       []int32
}

// newScanRowFilter returns the filter of st's decision, or nil when the
// scan outputs none of the columns it tests.
func newScanRowFilter(st *scanStream) *scanRowFilter {
	if st.dp == nil || !st.dp.FiltersFiles() {
		return nil
	}
	f := &scanRowFilter{readerFilter: readerFilter{st: st}}
	var cols []int
	seen := map[string]bool{}
	for _, name := range st.dp.FileColumns() {
		if seen[name] {
			continue // two collectors on one column (q4's, q59's self-joins): one copy, MaskColumn tests both
		}
		seen[name] = true
		for i, c := range st.s.Columns {
			if st.s.Table.Schema.Field(c).Name == name {
				cols = append(cols, i)
				f.names = append(f.names, name)
				break
			}
		}
	}
	if len(cols) == 0 {
		return nil
	}
	f.filterOrder = newFilterOrder(cols)
	return f
}

func (f *scanRowFilter) Select(j int, col arrow.Array) ([]int32, bool, error) {
	st := f.st
	n := col.Len()
	f.begin(j, n)
	c := f.order[j]
	nbytes := int(bitutil.BytesForBits(int64(n)))
	f.mask = growSlice(f.mask[:0], nbytes)
	f.tmp = growSlice(f.tmp[:0], nbytes)
	bitutil.SetBitsTo(f.mask, 0, int64(n), true)
	if err := st.dp.MaskColumn(f.names[c], col, f.mask, f.tmp); err != nil {
		return nil, false, fmt.Errorf("%w: scan of table %s: dynamic row filter: %w", ErrExecution, st.s.Table.Name, err)
	}
	f.sel = kernels.SelectionBits(f.mask, n, f.sel[:0])
	f.count(j, n, len(f.sel))
	if j == len(f.order)-1 || len(f.sel) == 0 {
		st.op.Scan.RowsKept.Add(int64(len(f.sel)))
	}
	return f.sel, len(f.sel) == n, nil
}
