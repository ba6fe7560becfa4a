package exec

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec/kernels"
	"github.com/fsql-dev/fsql/pruning"
)

// Dynamic partition pruning of a fact scan: the plan holds only the
// scan's targets (pruning.Target: collector ID, column, key); when a task
// of the scan starts, after the collectors' stages finished (the
// OrderEnforce above the scan), it asks the run's coordinator
// (TaskContext.DynamicFilters) for the decision: the surviving
// partitions, a row-group test and a row filter. Every task gets the same
// decision, hence the same split list and assignment.

// pruneDynamic asks the run's coordinator for the scan's decision (timed
// as the filter wait) and derives this task's splits from it.
func (st *scanStream) pruneDynamic(ctx context.Context) error {
	coord := st.tc.DynamicFilters
	if coord == nil {
		return fmt.Errorf("%w: scan of table %s has dynamic filters but its task has no dynamic-filter coordinator", ErrInternal, st.s.Table.Name)
	}
	t0 := time.Now()
	dp, err := coord.Prune(ctx, st.s.Table, st.s.partitions(), st.s.DynamicFilters)
	st.op.Scan.FilterWaitNanos.Add(int64(time.Since(t0)))
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		return errs.Wrap(errs.Execution, "scan of table %s: %w", st.s.Table.Name, err)
	}
	st.dp = dp
	st.late = newScanRowFilter(st)
	st.splits = mySplits(st.s.splits(dp), st.p, st.task)
	return nil
}

// ledgerOf is the decision's ledger as the scan's statistics keep it.
func ledgerOf(dp *pruning.Decision) []CollectorLedger {
	out := make([]CollectorLedger, len(dp.Ledger))
	for i, l := range dp.Ledger {
		out[i] = CollectorLedger{Collector: l.Collector, Key: l.Key, Exact: l.Exact, Keys: l.Keys, Bloom: l.Bloom}
	}
	return out
}

// rowFilter drops the rows of b the dynamic row filter rejects. It
// releases b and returns nil when no row is left.
func (st *scanStream) rowFilter(b arrow.RecordBatch) (arrow.RecordBatch, error) {
	defer b.Release()
	if b.NumRows() == 0 {
		return nil, nil
	}
	alloc := allocOf(st.tc)
	mask, err := st.dp.FilterRows(b, alloc)
	if err != nil {
		return nil, fmt.Errorf("%w: scan of table %s: dynamic row filter: %w", ErrExecution, st.s.Table.Name, err)
	}
	defer mask.Release()
	if int64(mask.Len()) != b.NumRows() {
		return nil, fmt.Errorf("%w: scan of table %s: dynamic row filter returned %d values for %d rows", ErrInternal, st.s.Table.Name, mask.Len(), b.NumRows())
	}
	out, sel, err := kernels.FilterBatch(alloc, b, mask, nil)
	if err != nil {
		return nil, errs.Wrap(errs.Internal, "scan of table %s: dynamic row filter: %w", st.s.Table.Name, err)
	}
	st.op.Scan.RowsKept.Add(int64(len(sel)))
	return out, nil
}
