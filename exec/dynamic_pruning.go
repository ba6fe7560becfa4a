package exec

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
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
	// Ledger holds extra counters for EXPLAIN ANALYZE (noted once per scan).
	Ledger map[string]int64
}

// DynamicFilterSources is optionally implemented by a DynamicPruner (the
// pruning package's does): the IDs of the collectors it reads. BuildStages
// then refuses a plan where the scan's stage is not ordered after those
// collectors' stages, instead of failing (or not) at run time depending
// on scheduling luck.
type DynamicFilterSources interface {
	CollectorIDs() []int
}

// addOrderEdges gives every stage holding an OrderEnforce a DependsOn edge
// to each stage holding one of its collectors, so the collectors have
// finished before the stage (and its scan) starts. It runs after the plan
// is cut, so Exchange boundaries are known. Then it checks every
// dynamically pruned scan runs after the collectors it reads.
func addOrderEdges(g *JobGraph) error {
	home := map[*DynamicFilterDataCollector]*Stage{}
	byID := map[int]*Stage{}
	type enforce struct {
		oe *OrderEnforce
		st *Stage
	}
	type dynScan struct {
		s  *Scan
		st *Stage
	}
	var enforces []enforce
	var scans []dynScan
	for _, st := range g.Stages {
		walkStage(st.Root, func(n Node) {
			switch x := n.(type) {
			case *DynamicFilterDataCollector:
				home[x] = st
				byID[x.ID] = st
			case *OrderEnforce:
				enforces = append(enforces, enforce{x, st})
			case *Scan:
				if x.Dynamic != nil {
					scans = append(scans, dynScan{x, st})
				}
			}
		})
	}
	for _, e := range enforces {
		for _, c := range e.oe.After {
			if c == nil {
				return fmt.Errorf("%w: %s waits for a nil collector", ErrInternal, e.oe)
			}
			dep := home[c]
			switch {
			case dep == nil:
				return fmt.Errorf("%w: %s waits for collector %d, which is not in the plan", ErrPlan, e.oe, c.ID)
			case dep == e.st:
				return fmt.Errorf("%w: %s waits for collector %d in its own stage %d; a dynamic filter must be collected in an earlier stage (below an exchange)", ErrPlan, e.oe, c.ID, dep.ID)
			}
			if !containsStage(e.st.DependsOn, dep) {
				e.st.DependsOn = append(e.st.DependsOn, dep)
			}
		}
	}
	for _, ds := range scans {
		src, ok := ds.s.Dynamic.(DynamicFilterSources)
		if !ok {
			continue
		}
		for _, id := range src.CollectorIDs() {
			dep := byID[id]
			switch {
			case dep == nil:
				return fmt.Errorf("%w: scan of %s reads dynamic filter %d, which no collector in the plan produces", ErrPlan, ds.s.Table.Name, id)
			case !runsAfter(ds.st, dep):
				return fmt.Errorf("%w: scan of %s in stage %d reads dynamic filter %d of stage %d but does not wait for it (put an OrderEnforce above the scan)", ErrPlan, ds.s.Table.Name, ds.st.ID, id, dep.ID)
			}
		}
	}
	return nil
}

// runsAfter reports whether st starts only after dep finished: dep is a
// producer or dependency of st, directly or through others.
func runsAfter(st, dep *Stage) bool {
	seen := map[*Stage]bool{}
	var visit func(s *Stage) bool
	visit = func(s *Stage) bool {
		if seen[s] {
			return false
		}
		seen[s] = true
		for _, p := range s.Producers {
			if p == dep || visit(p) {
				return true
			}
		}
		for _, p := range s.DependsOn {
			if p == dep || visit(p) {
				return true
			}
		}
		return false
	}
	return visit(st)
}

// walkStage visits the nodes of one stage: it does not descend below an
// Exchange, whose child belongs to the producer stage.
func walkStage(n Node, visit func(Node)) {
	if n == nil {
		return
	}
	visit(n)
	if _, ok := n.(*Exchange); ok {
		return
	}
	for _, c := range n.Children() {
		walkStage(c, visit)
	}
}

func containsStage(ss []*Stage, s *Stage) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// dynamicFilterDeps reports, for EXPLAIN, which of st's DependsOn stages
// come from an OrderEnforce (they hold a collector it waits for).
func dynamicFilterDeps(st *Stage) map[*Stage]bool {
	var wanted []*DynamicFilterDataCollector
	walkStage(st.Root, func(n Node) {
		if oe, ok := n.(*OrderEnforce); ok {
			wanted = append(wanted, oe.After...)
		}
	})
	out := map[*Stage]bool{}
	if len(wanted) == 0 {
		return out
	}
	for _, d := range st.DependsOn {
		walkStage(d.Root, func(n Node) {
			for _, c := range wanted {
				if n == Node(c) {
					out[d] = true
				}
			}
		})
	}
	return out
}

// dynamicLedger renders the pruning ledger of a scan with a dynamic
// filter from its notes, and the note names it used.
func dynamicLedger(notes map[string]int64) (string, map[string]bool) {
	used := map[string]bool{}
	get := func(k string) int64 { used[k] = true; return notes[k] }
	var parts []string
	p := fmt.Sprintf("partitions %d/%d", get("partitions_kept"), get("partitions_total"))
	if static, ok := notes["partitions"]; ok && static != notes["partitions_total"] {
		p += fmt.Sprintf(" (%d after static pruning)", static)
	}
	parts = append(parts, p)
	files := get("files")
	parts = append(parts, fmt.Sprintf("files %d/%d", files, files+get("files_pruned")))
	parts = append(parts, fmt.Sprintf("row groups %d/%d", get("row_groups_kept"), get("row_groups_total")))
	parts = append(parts, fmt.Sprintf("rows %d/%d kept", get("rows_kept"), get("rows_read")))
	parts = append(parts, "bytes "+fmtBytes(get("bytes_read")))
	parts = append(parts, "filter wait "+fmtDuration(time.Duration(get("filter_wait_ns"))))
	used["partitions"] = true // the static count; partitions_kept says more
	var extra []string
	for k, v := range notes {
		if strings.HasPrefix(k, "dpp_") {
			used[k] = true
			extra = append(extra, fmt.Sprintf("%s %d", strings.ReplaceAll(strings.TrimPrefix(k, "dpp_"), "_", " "), v))
		}
	}
	sort.Strings(extra)
	parts = append(parts, extra...)
	return "ledger: " + strings.Join(parts, ", "), used
}

// pruneDynamic asks the scan's pruner for its decision (timed as the
// filter wait) and derives this task's splits from it. Every task gets
// the same decision, hence the same split list and assignment.
func (st *scanStream) pruneDynamic(ctx context.Context) error {
	t0 := time.Now()
	dp, err := st.s.Dynamic.Prune(ctx, st.s.Table, st.s.partitions())
	st.tc.Stats.For(st.s).Note("filter_wait_ns", int64(time.Since(t0)))
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
	stats := st.tc.Stats.For(st.s)
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
	stats.Note("rows_kept", int64(kept))
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
