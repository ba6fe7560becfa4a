package exec

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/exec/kernels"
)

// scanStaticFilter hands a scan's pushed conjuncts that read one column
// each to the Parquet reader as a row filter (hive.RowFilter), as
// scanRowFilter does with dynamic filters: the reader decodes a filtered
// column, keeps the rows its conjuncts hold for, and decodes the next
// filtered column and the others only for those. q7's
// customer_demographics keeps 1.4% of its 1.9M rows on three strings:
// the scan decoded all four columns of every row for the Filter above
// it to drop nearly all of them.
//
// It is only a pre-filter: the Filter above the scan still tests every
// conjunct on the rows that come out, so it may keep rows a conjunct
// rejects, and it does, for good, for a column whose conjuncts keep
// most rows (past stopKeeping of the first stopAfter rows they saw):
// testing them twice would cost more than decoding the column whole.
// Only conjuncts that cannot fail are tested early, since they meet
// rows the Filter's order of evaluation would not give them. Scans
// with dynamic filters keep scanRowFilter alone, so the pruning ledger
// counts the rows dynamic filters dropped, not these.
type scanStaticFilter struct {
	readerFilter
	conds   []expr.Expr     // per column: its conjuncts, over column 0 of a one-column batch
	schemas []*arrow.Schema // per column: that batch's schema
	off     []bool          // per column: no longer tested (keeps too many rows)
	ec      *expr.Context
	sel     []int32
}

const (
	stopAfter   = 64 << 10 // rows a column is tested on before it may be switched off
	stopKeeping = 0.7      // kept fraction past which it is
)

// newScanStaticFilter returns the pre-filter of st's scan, or nil when no
// conjunct qualifies.
func newScanStaticFilter(st *scanStream) *scanStaticFilter {
	s := st.s
	if len(s.DynamicFilters) > 0 || len(s.Filters) == 0 || s.Table == nil {
		return nil
	}
	byCol := map[int][]expr.Expr{} // scan position -> conjuncts over column 0
	var cols []int
	for _, c := range s.Filters {
		refs := expr.Columns(c)
		if len(refs) != 1 || expr.CanFail(c) || c.DataType().ID() != arrow.BOOL {
			continue
		}
		pos := -1
		for i, tc := range s.Columns {
			if tc == refs[0] {
				pos = i
				break
			}
		}
		if pos < 0 {
			continue
		}
		e, err := expr.Rewrite(c, func(x expr.Expr) (expr.Expr, error) {
			if col, ok := x.(*expr.Column); ok {
				return expr.NewColumn(0, col.Type, col.Name), nil
			}
			return x, nil
		})
		if err != nil {
			continue
		}
		if _, ok := byCol[pos]; !ok {
			cols = append(cols, pos)
		}
		byCol[pos] = append(byCol[pos], e)
	}
	if len(cols) == 0 {
		return nil
	}
	f := &scanStaticFilter{readerFilter: readerFilter{st: st, filterOrder: newFilterOrder(cols)}, ec: exprContext(st.tc), off: make([]bool, len(cols))}
	for _, pos := range cols {
		conds := byCol[pos]
		cond := conds[0]
		for _, c := range conds[1:] {
			and, err := expr.NewCall("and", cond, c)
			if err != nil {
				return nil
			}
			cond = and
		}
		f.conds = append(f.conds, cond)
		f.schemas = append(f.schemas, arrow.NewSchema([]arrow.Field{s.Table.Schema.Field(s.Columns[pos])}, nil))
	}
	return f
}

func (f *scanStaticFilter) Select(j int, col arrow.Array) ([]int32, bool, error) {
	st := f.st
	n := col.Len()
	f.begin(j, n)
	c := f.order[j]
	if f.off[c] {
		return nil, true, nil
	}
	b := array.NewRecordBatch(f.schemas[c], []arrow.Array{col}, int64(n))
	defer b.Release()
	m, err := f.conds[c].Eval(f.ec, b)
	if err != nil {
		return nil, false, fmt.Errorf("%w: scan of table %s: filter %s: %w", ErrExecution, st.s.Table.Name, f.conds[c], err)
	}
	defer m.Release()
	mask, ok := m.(*array.Boolean)
	if !ok || mask.Len() != n {
		return nil, false, errs.New(errs.Internal, "scan of table %s: filter %s returned %s of %d rows for %d", st.s.Table.Name, f.conds[c], m.DataType(), m.Len(), n)
	}
	f.sel = kernels.Selection(mask, f.sel[:0])
	f.count(j, n, len(f.sel))
	if f.seen[c] >= stopAfter && float64(f.kept[c]) > stopKeeping*float64(f.seen[c]) {
		f.off[c] = true
	}
	return f.sel, len(f.sel) == n, nil
}
