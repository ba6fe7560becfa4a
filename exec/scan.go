package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fsql-dev/fsql/connectors/hive"
	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/pruning"
)

// Scan reads a Hive table. All tasks of the scan's stage see the same list
// of splits (one per kept row group of a file, or per byte range of a big
// CSV file; a file with one kept row group is one split); task i of p
// reads the splits the byte-balanced assignment gives it (see
// AssignSplits), so a skewed partition does not land on one task together
// with many others.
//
// A Scan is data: what it tests row groups and partitions with is held as
// expressions and filter targets, and the tests themselves are built when
// a task opens it (the row-group test from Filters, the dynamic decision
// from the run's coordinator), so the plan can be encoded and run again.
type Scan struct {
	// Table is the table as the plan saw it: its files and their footers
	// (one catalog snapshot).
	Table *hive.Table
	// Columns are the output columns, indexes into Table.Schema (partition
	// columns included). An empty list produces batches with rows but no
	// columns, which is all COUNT(*) needs.
	Columns []int
	// Partitions are the partitions left after static pruning; nil means
	// all of Table.Partitions.
	Partitions []*hive.Partition
	// Filters are the conjuncts the planner pushed into the scan, over
	// Table.Schema columns. The scan skips row groups whose min/max
	// statistics prove one of them false (pruning.RowGroupFilter), and
	// the Parquet reader drops rows that a conjunct over one column
	// rejects before decoding the others (scan_static_filter.go); the
	// Filter above the scan is what filters the rows, and may see fewer.
	// EXPLAIN shows them.
	Filters []expr.Expr
	// DynamicFilters, when set, prune partitions, row groups and rows
	// further with join keys collected at run time (see
	// dynamic_pruning.go): each task asks the run's coordinator
	// (TaskContext.DynamicFilters) once, before reading, so the stage
	// holding the scan must wait for the collectors (an OrderEnforce
	// above the scan).
	DynamicFilters []pruning.Target
}

// Split is the unit of scan work: one file and the row groups to read
// (one row group of a file that keeps several, see pieces; or, for a CSV
// file read in byte ranges, hive.File.ByteRanges, one of them).
type Split struct {
	Partition *hive.Partition
	File      *hive.File
	// RowGroups are the kept row groups, ascending; empty when the row-group
	// filter dropped them all (the split is still listed so EXPLAIN ANALYZE
	// can count what was pruned).
	RowGroups []int
	// Bytes is the compressed size of the projected file columns in the kept
	// row groups: what reading the split costs.
	Bytes int64
	// Piece is 0 for a whole file and for the first piece of a file cut
	// into pieces, which count the file in EXPLAIN ANALYZE; 1, 2, ... for
	// the other pieces.
	Piece int
}

// Schema implements Node.
func (s *Scan) Schema() *arrow.Schema {
	fields := make([]arrow.Field, len(s.Columns))
	for i, c := range s.Columns {
		if c >= 0 && c < len(s.Table.Schema.Fields()) {
			fields[i] = s.Table.Schema.Field(c)
		}
	}
	return arrow.NewSchema(fields, nil)
}

// Children implements Node: a scan is a leaf.
func (s *Scan) Children() []Node { return nil }

// String implements Node.
func (s *Scan) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Scan(%s", s.Table.Name)
	names := make([]string, len(s.Columns))
	for i, f := range s.Schema().Fields() {
		names[i] = f.Name
	}
	fmt.Fprintf(&b, " [%s]", strings.Join(names, ", "))
	if len(s.Table.PartitionColumns) > 0 {
		fmt.Fprintf(&b, " partitions=%d/%d", len(s.partitions()), len(s.Table.Partitions))
	}
	if s.rowGroupFilter() != nil {
		b.WriteString(" row-group-filter")
	}
	if len(s.Filters) > 0 {
		txt := make([]string, len(s.Filters))
		for i, f := range s.Filters {
			txt[i] = f.String()
		}
		b.WriteString(" filters: ")
		b.WriteString(strings.Join(txt, " AND "))
	}
	if len(s.DynamicFilters) > 0 {
		b.WriteString(" ")
		b.WriteString(pruning.Describe(s.DynamicFilters))
	}
	b.WriteString(")")
	return b.String()
}

func (s *Scan) partitions() []*hive.Partition {
	if s.Partitions == nil {
		return s.Table.Partitions
	}
	return s.Partitions
}

// rowGroupFilter is the row-group test of Filters, nil when no conjunct
// can use statistics.
func (s *Scan) rowGroupFilter() func(*hive.File, int) bool {
	if len(s.Filters) == 0 || s.Table == nil {
		return nil
	}
	return pruning.RowGroupFilter(s.Table, s.Filters)
}

// Splits lists the splits of the surviving partitions' files, in
// partition, file and row-group order, with the row groups Filters keep. A dynamic
// filter is not applied: it is only known at run time.
func (s *Scan) Splits() []Split { return s.splits(nil) }

// splits lists the splits with a dynamic pruning decision applied when dp
// is set: files of partitions it dropped stay listed with no row groups
// (so the ledger counts them), and its row-group test is intersected
// with the static one.
func (s *Scan) splits(dp *pruning.Decision) []Split {
	var kept map[*hive.Partition]bool
	var dynKeep func(*hive.File, int) bool
	if dp != nil {
		kept = make(map[*hive.Partition]bool, len(dp.Partitions))
		for _, p := range dp.Partitions {
			kept[p] = true
		}
		if dp.FiltersFiles() {
			dynKeep = dp.KeepRowGroup
		}
	}
	keep := s.rowGroupFilter()
	var out []Split
	for _, p := range s.partitions() {
		pruned := kept != nil && !kept[p]
		for _, f := range p.Files {
			sp := Split{Partition: p, File: f, RowGroups: make([]int, 0, len(f.RowGroups))}
			for rg := range f.RowGroups {
				if pruned {
					break
				}
				if keep != nil && !keep(f, rg) {
					continue
				}
				if dynKeep != nil && !dynKeep(f, rg) {
					continue
				}
				sp.RowGroups = append(sp.RowGroups, rg)
				for _, c := range s.Columns {
					if c >= 0 && c < s.Table.NumFileColumns {
						sp.Bytes += f.RowGroups[rg].Columns[c].Bytes
					}
				}
			}
			if len(sp.RowGroups) > 1 {
				out = append(out, pieces(s, sp)...)
				continue
			}
			out = append(out, sp)
		}
	}
	return out
}

// pieces cuts a split of several kept row groups (or byte ranges of a
// CSV file) into one split per row group, so that different tasks can
// read them: a file is not the unit of parallelism. In the flat layout a
// fact table is a few large files sorted by date, and after pruning the
// row groups of a month or a year often lie in one file; as whole-file
// splits they went to one task while the others idled. A task given
// consecutive pieces of one file reads them in one open (mySplits).
func pieces(s *Scan, whole Split) []Split {
	out := make([]Split, len(whole.RowGroups))
	for i, rg := range whole.RowGroups {
		sp := Split{Partition: whole.Partition, File: whole.File, RowGroups: []int{rg}, Piece: i}
		for _, c := range s.Columns {
			if c >= 0 && c < s.Table.NumFileColumns {
				sp.Bytes += whole.File.RowGroups[rg].Columns[c].Bytes
			}
		}
		out[i] = sp
	}
	return out
}

// SourceSize implements SizedSource: the bytes and the number of splits
// with rows left that the tasks will read (pieces of one file count one
// each: each can be a task's work). A dynamically pruned scan is sized by
// what survives: its collectors finished before its stage became ready
// (the OrderEnforce above it), so the run's coordinator (in tc) answers
// now as it will to the tasks. If pruning fails the scan is sized
// statically; the tasks report the error.
func (s *Scan) SourceSize(ctx context.Context, tc *TaskContext) (bytes int64, splits int, err error) {
	if s.Table == nil {
		return 0, 0, nil
	}
	var dp *pruning.Decision
	if len(s.DynamicFilters) > 0 && tc != nil && tc.DynamicFilters != nil {
		if d, e := tc.DynamicFilters.Prune(ctx, s.Table, s.partitions(), s.DynamicFilters); e == nil {
			dp = d
		}
	}
	for _, sp := range s.splits(dp) {
		if len(sp.RowGroups) > 0 {
			bytes += sp.Bytes
			splits++
		}
	}
	return bytes, splits, nil
}

// ReadsCollectors implements DynamicFilterReader: the collectors its
// dynamic filters read.
func (s *Scan) ReadsCollectors() []int {
	if len(s.DynamicFilters) == 0 {
		return nil
	}
	return pruning.CollectorIDs(s.DynamicFilters)
}

// InputBytes is the compressed size of everything the scan will read.
func (s *Scan) InputBytes() int64 {
	var n int64
	for _, sp := range s.Splits() {
		n += sp.Bytes
	}
	return n
}

// AssignSplits gives each split to one of p tasks and returns the task of
// every split. Splits are taken largest first and each goes to the task
// with the fewest bytes so far (lowest task index on ties); the result only
// depends on the splits and p, so every task computes the same answer.
func AssignSplits(splits []Split, p int) []int {
	if p < 1 {
		p = 1
	}
	order := make([]int, len(splits))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return splits[order[a]].Bytes > splits[order[b]].Bytes })
	load := make([]int64, p)
	count := make([]int, p)
	task := make([]int, len(splits))
	for _, i := range order {
		best := 0
		for t := 1; t < p; t++ {
			if load[t] < load[best] || (load[t] == load[best] && count[t] < count[best]) {
				best = t
			}
		}
		task[i] = best
		load[best] += splits[i].Bytes
		count[best]++
	}
	return task
}

// Open implements Node.
func (s *Scan) Open(tc *TaskContext, inputs []Stream) (Stream, error) {
	if len(inputs) != 0 {
		return nil, fmt.Errorf("%w: Scan takes no inputs, got %d", ErrInternal, len(inputs))
	}
	if s.Table == nil {
		return nil, fmt.Errorf("%w: Scan without a table", ErrInternal)
	}
	for _, c := range s.Columns {
		if c < 0 || c >= len(s.Table.Schema.Fields()) {
			return nil, fmt.Errorf("%w: Scan of %s: column #%d out of range (%d columns)", ErrInternal, s.Table.Name, c, len(s.Table.Schema.Fields()))
		}
	}
	p, task := tc.Parallelism, tc.Task
	if p < 1 {
		p, task = 1, 0
	}
	op := tc.Op
	if op == nil {
		op = &OperatorStats{}
	}
	st := &scanStream{s: s, tc: tc, op: op, first: task == 0, p: p, task: task}
	if len(s.DynamicFilters) == 0 {
		st.splits = mySplits(s.Splits(), p, task)
		st.static = newScanStaticFilter(st)
	}
	return st, nil
}

// mySplits is task's share of all. Pieces of one file that fall to the
// task one after another (all of them, when it is the only task) become
// one split again, so the file is opened once for them.
func mySplits(all []Split, p, task int) []Split {
	owner := AssignSplits(all, p)
	var mine []Split
	for i, sp := range all {
		if owner[i] != task {
			continue
		}
		if n := len(mine); n > 0 && mine[n-1].File == sp.File && len(mine[n-1].RowGroups) > 0 && len(sp.RowGroups) > 0 {
			last := &mine[n-1]
			last.RowGroups = append(last.RowGroups[:len(last.RowGroups):len(last.RowGroups)], sp.RowGroups...)
			last.Bytes += sp.Bytes
			continue
		}
		mine = append(mine, sp)
	}
	return mine
}

type scanStream struct {
	s        *Scan
	tc       *TaskContext
	p, task  int
	splits   []Split
	dp       *pruning.Decision // set once a dynamic scan asked the coordinator
	op       *OperatorStats    // the scan's counters (a private set when not collected)
	first    bool              // task 0 notes the per-scan counters
	noted    bool
	pos      int // next split to open
	prog     scanProgress
	cur      *hive.FileReader
	curSp    *Split
	late     *scanRowFilter    // the dynamic row filter the reader applies, or nil
	static   *scanStaticFilter // the pushed conjuncts the reader tests first, or nil (scan_static_filter.go)
	filtered bool              // the last batch next returned was filtered by the reader
	closed   bool
}

func (st *scanStream) note() {
	stats := &st.op.Scan
	if st.first {
		stats.Start(len(st.s.Table.PartitionColumns) > 0, len(st.s.DynamicFilters) > 0)
		static := int64(len(st.s.partitions()))
		stats.PartitionsStatic.Add(static)
		stats.PartitionsTotal.Add(int64(len(st.s.Table.Partitions)))
		if st.dp != nil {
			stats.PartitionsKept.Add(int64(len(st.dp.Partitions)))
			stats.SetLedger(ledgerOf(st.dp))
		} else {
			stats.PartitionsKept.Add(static)
		}
	}
	for _, sp := range st.splits {
		stats.RowGroupsKept.Add(int64(len(sp.RowGroups)))
		if sp.Piece > 0 {
			continue // the file is counted with its first range
		}
		stats.RowGroupsTotal.Add(int64(len(sp.File.RowGroups)))
		if len(sp.RowGroups) > 0 {
			stats.Files.Add(1)
		} else {
			stats.FilesPruned.Add(1)
		}
	}
}

func (st *scanStream) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if !st.noted {
		if len(st.s.DynamicFilters) > 0 && !st.closed {
			if err := st.pruneDynamic(ctx); err != nil {
				return nil, err
			}
		}
		st.noted = true
		st.note()
	}
	if st.dp == nil {
		return st.next(ctx)
	}
	if !st.dp.FiltersFiles() {
		b, err := st.next(ctx)
		if b != nil {
			st.op.Scan.RowsKept.Add(b.NumRows())
		}
		return b, err
	}
	for {
		b, err := st.next(ctx)
		if err != nil {
			return nil, err
		}
		if st.filtered {
			return b, nil // the reader applied the row filter (scan_late.go)
		}
		out, err := st.rowFilter(b)
		if err != nil || out != nil {
			return out, err
		}
	}
}

func (st *scanStream) next(ctx context.Context) (arrow.RecordBatch, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if st.closed {
			return nil, io.EOF
		}
		if st.cur == nil {
			for st.pos < len(st.splits) && len(st.splits[st.pos].RowGroups) == 0 {
				st.pos++
			}
			if st.pos == len(st.splits) {
				return nil, io.EOF
			}
			sp := &st.splits[st.pos]
			st.pos++
			opts := hive.ScanOptions{
				Columns: st.s.Columns, RowGroups: sp.RowGroups, BatchSize: BatchSize, Alloc: st.tc.Alloc,
			}
			if st.late != nil {
				opts.Filter = st.late
			} else if st.static != nil {
				opts.Filter = st.static
			}
			r, err := st.s.Table.OpenFile(sp.Partition, sp.File, opts)
			if err != nil {
				return nil, st.wrap(sp, err)
			}
			st.cur, st.curSp = r, sp
		}
		b, err := st.cur.Next(ctx)
		if err == nil {
			st.filtered = st.cur.Filtered()
			if !st.filtered { // else counted by scanRowFilter.Select
				st.op.Scan.RowsRead.Add(b.NumRows())
				st.prog.read(st.tc, st.curSp, b.NumRows())
			}
			return b, nil
		}
		sp := st.curSp
		st.finishFile()
		if err != io.EOF {
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				return nil, err
			}
			return nil, st.wrap(sp, err)
		}
	}
}

// wrap says which table and file a reader error is about. A
// *hive.FileError of the split's file names the file already. The error
// keeps the reader's kind (I/O, conflict, unsupported); one without is an
// execution error. A transient I/O failure stays marked retryable
// (errs.TransientIO).
func (st *scanStream) wrap(sp *Split, err error) error {
	err = errs.TransientIO(err)
	if fe := (*hive.FileError)(nil); errors.As(err, &fe) && fe.Path == sp.File.Path {
		return errs.Wrap(errs.Execution, "scan of table %s: %w", st.s.Table.Name, err)
	}
	return errs.Wrap(errs.Execution, "scan of table %s, file %s: %w", st.s.Table.Name, sp.File.Path, err)
}

func (st *scanStream) finishFile() {
	if st.cur == nil {
		return
	}
	st.op.Scan.BytesRead.Add(st.cur.BytesRead())
	st.cur.Close()
	st.cur, st.curSp = nil, nil
}

func (st *scanStream) Close() {
	if st.closed {
		return
	}
	st.finishFile()
	st.closed = true
}
