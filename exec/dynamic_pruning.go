package exec

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/connectors/hive"
)

// DynamicPruner prunes a fact scan with join keys collected at run time
// from the dimension side (dynamic partition pruning). The planner sets it
// on Scan.Dynamic; pruning.Coordinator implements it.
type DynamicPruner interface {
	// Prune runs when a scan task starts (after the collectors it depends
	// on finished, which an OrderEnforce above the scan guarantees), with
	// the partitions that survived static pruning. It must return the same
	// answer to every task of the scan, since every task derives the same
	// split list from it. An incomplete collector is an error, never a
	// silent fall-back to unfiltered data.
	Prune(ctx context.Context, t *hive.Table, parts []*hive.Partition) (*DynamicPruning, error)
	// String describes the filter for EXPLAIN, e.g. "dynamic filter on
	// ss_sold_date_sk from collector 1".
	String() string
}

// DynamicPruning is what a DynamicPruner decided for one scan.
type DynamicPruning struct {
	// Partitions are the partitions that survive, a subset of the ones
	// Prune was given, in the same order.
	Partitions []*hive.Partition
	// KeepRowGroup drops row groups whose statistics rule out every
	// collected key; nil keeps all. The scan intersects it with its static
	// Scan.KeepRowGroup.
	KeepRowGroup func(f *hive.File, rg int) bool
	// RowFilter, if non-nil, returns a mask (true = keep) for a batch of
	// the scan's output columns (Scan.Columns order); the scan drops the
	// other rows before handing the batch on. The caller releases the mask.
	RowFilter func(batch arrow.RecordBatch, alloc memory.Allocator) (*array.Boolean, error)
	// Ledger is what each filter held, for EXPLAIN ANALYZE (recorded once
	// per scan).
	Ledger []CollectorLedger
}

// DynamicFilterSources is optionally implemented by a DynamicPruner (the
// pruning package's does): the IDs of the collectors it reads. The scan
// passes them on as a DynamicFilterReader, so the job graph refuses a plan
// where the scan's stage is not ordered after those collectors' stages,
// instead of failing (or not) at run time depending on scheduling luck.
type DynamicFilterSources interface {
	CollectorIDs() []int
}

// pruneDynamic asks the scan's pruner for its decision (timed as the
// filter wait) and derives this task's splits from it. Every task gets
// the same decision, hence the same split list and assignment.
func (st *scanStream) pruneDynamic(ctx context.Context) error {
	t0 := time.Now()
	dp, err := st.s.Dynamic.Prune(ctx, st.s.Table, st.s.partitions())
	st.op.Scan.FilterWaitNanos.Add(int64(time.Since(t0)))
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		for _, sentinel := range []error{ErrPlan, ErrNotImplemented, ErrExecution, ErrInternal, ErrResourcesExhausted} {
			if errors.Is(err, sentinel) {
				return fmt.Errorf("scan of table %s: %w", st.s.Table.Name, err)
			}
		}
		return fmt.Errorf("%w: scan of table %s: dynamic pruning: %w", ErrExecution, st.s.Table.Name, err)
	}
	if dp == nil {
		return fmt.Errorf("%w: scan of table %s: %s returned no decision", ErrInternal, st.s.Table.Name, st.s.Dynamic)
	}
	st.dp = dp
	st.splits = mySplits(st.s.splits(dp), st.p, st.task)
	return nil
}

// rowFilter drops the rows of b the dynamic row filter rejects. It
// releases b and returns nil when no row is left.
func (st *scanStream) rowFilter(b arrow.RecordBatch) (arrow.RecordBatch, error) {
	defer b.Release()
	if b.NumRows() == 0 {
		return nil, nil
	}
	alloc := allocOf(st.tc)
	mask, err := st.dp.RowFilter(b, alloc)
	if err != nil {
		return nil, fmt.Errorf("%w: scan of table %s: dynamic row filter: %w", ErrExecution, st.s.Table.Name, err)
	}
	defer mask.Release()
	if int64(mask.Len()) != b.NumRows() {
		return nil, fmt.Errorf("%w: scan of table %s: dynamic row filter returned %d values for %d rows", ErrInternal, st.s.Table.Name, mask.Len(), b.NumRows())
	}
	kept := countTrue(mask)
	st.op.Scan.RowsKept.Add(int64(kept))
	switch kept {
	case 0:
		return nil, nil
	case mask.Len():
		b.Retain()
		return b, nil
	}
	out, err := compute.FilterRecordBatch(compute.WithAllocator(context.Background(), alloc), b, mask, compute.DefaultFilterOptions())
	if err != nil {
		return nil, fmt.Errorf("%w: dynamic row filter: %v", ErrInternal, err)
	}
	return out, nil
}
