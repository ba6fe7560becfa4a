package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/parquet-go/parquet-go"

	"github.com/fsql-dev/fsql/connectors/hive"
	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec/expr"
)

// scanTestTable writes table "fact" with partitions day=1..3, two files per
// partition, 300 rows per file in row groups of 100; id is unique.
func scanTestTable(t *testing.T) *hive.Table {
	t.Helper()
	dir := t.TempDir()
	group := parquet.Group{"id": parquet.Int(64), "v": parquet.Optional(parquet.String())}
	id := int64(0)
	for day := 1; day <= 3; day++ {
		for file := 0; file < 2; file++ {
			path := filepath.Join(dir, "fact", fmt.Sprintf("day=%d", day), fmt.Sprintf("part-%d.parquet", file))
			os.MkdirAll(filepath.Dir(path), 0o755)
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			w := parquet.NewWriter(f, parquet.NewSchema("t", group), parquet.MaxRowsPerRowGroup(100))
			b := parquet.NewRowBuilder(group)
			rows := make([]parquet.Row, 0, 300)
			for i := 0; i < 300; i++ {
				b.Reset()
				b.Add(0, parquet.Int64Value(id))
				if id%5 != 0 {
					b.Add(1, parquet.ByteArrayValue([]byte(fmt.Sprint("v", id))))
				}
				rows = append(rows, b.Row())
				id++
			}
			if _, err := w.WriteRows(rows); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			f.Close()
		}
	}
	cat, err := hive.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := cat.Table("fact")
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// runScan runs every task of s and returns the ids read per task.
func runScan(t *testing.T, s *Scan, p int, stats *OperatorStats) [][]int64 {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	out := make([][]int64, p)
	for task := 0; task < p; task++ {
		st, err := s.Open(&TaskContext{Alloc: mem, Task: task, Parallelism: p, Op: stats}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for {
			b, err := st.Next(context.Background())
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if !b.Schema().Equal(s.Schema()) {
				t.Fatalf("batch schema %s, node schema %s", b.Schema(), s.Schema())
			}
			ids := b.Column(1).(*array.Int64)
			for i := 0; i < ids.Len(); i++ {
				out[task] = append(out[task], ids.Value(i))
			}
			b.Release()
		}
		st.Close()
		st.Close()
	}
	return out
}

func TestScan(t *testing.T) {
	tb := scanTestTable(t)
	s := &Scan{Table: tb, Columns: []int{2, 0, 1}}
	if got := s.String(); got != "Scan(fact [day, id, v] partitions=3/3)" {
		t.Errorf("String() = %q", got)
	}
	// One split per row group: 6 files of 3 row groups.
	if len(s.Splits()) != 18 || s.InputBytes() <= 0 {
		t.Fatalf("%d splits, %d bytes", len(s.Splits()), s.InputBytes())
	}
	stats := &OperatorStats{}
	perTask := runScan(t, s, 2, stats)
	seen := map[int64]bool{}
	for task, ids := range perTask {
		if len(ids) != 900 {
			t.Errorf("task %d read %d rows, want 900 (3 of 6 equal files)", task, len(ids))
		}
		for _, id := range ids {
			if seen[id] {
				t.Fatalf("id %d read twice", id)
			}
			seen[id] = true
		}
	}
	if len(seen) != 1800 {
		t.Fatalf("read %d distinct ids, want 1800", len(seen))
	}
	sc := &stats.Scan
	if !sc.Active() || !sc.Partitioned() || sc.Dynamic() || sc.Files.Load() != 6 || sc.RowGroupsTotal.Load() != 18 || sc.RowGroupsKept.Load() != 18 ||
		sc.PartitionsStatic.Load() != 3 || sc.PartitionsKept.Load() != 3 || sc.BytesRead.Load() != s.InputBytes() || sc.RowsRead.Load() != 1800 {
		t.Fatalf("scan stats %+v, input bytes %d", scanCounts(sc), s.InputBytes())
	}
}

// TestScanPieces: the row groups of one file are pieces that different
// tasks read (the flat layout keeps a month of a fact table in one file),
// and a task given consecutive pieces of a file opens it once.
func TestScanPieces(t *testing.T) {
	tb := scanTestTable(t)
	one := []*hive.Partition{tb.Partitions[0]}
	one[0] = &hive.Partition{Values: one[0].Values, Dir: one[0].Dir, Files: one[0].Files[:1]}
	s := &Scan{Table: tb, Columns: []int{2, 0, 1}, Partitions: one}
	all := s.Splits()
	if len(all) != 3 {
		t.Fatalf("%d splits of one file of 3 row groups, want 3", len(all))
	}
	for i, sp := range all {
		if sp.Piece != i || len(sp.RowGroups) != 1 || sp.RowGroups[0] != i || sp.Bytes <= 0 {
			t.Fatalf("split %d: piece %d, row groups %v, %d bytes", i, sp.Piece, sp.RowGroups, sp.Bytes)
		}
	}
	if b, n, err := s.SourceSize(context.Background(), nil); err != nil || n != 3 || b != s.InputBytes() {
		t.Fatalf("SourceSize = %d bytes, %d splits, %v; want %d bytes, 3 splits", b, n, err, s.InputBytes())
	}
	if mine := mySplits(all, 1, 0); len(mine) != 1 || len(mine[0].RowGroups) != 3 || mine[0].Bytes != s.InputBytes() || mine[0].Piece != 0 {
		t.Fatalf("one task: %d splits %+v, want the file once with its 3 row groups", len(mine), mine)
	}
	stats := &OperatorStats{}
	perTask := runScan(t, s, 3, stats)
	for task, ids := range perTask {
		if len(ids) != 100 {
			t.Errorf("task %d of 3 read %d rows, want a row group of 100", task, len(ids))
		}
	}
	sc := &stats.Scan
	if sc.Files.Load() != 1 || sc.RowGroupsTotal.Load() != 3 || sc.RowGroupsKept.Load() != 3 || sc.RowsRead.Load() != 300 || sc.BytesRead.Load() != s.InputBytes() {
		t.Fatalf("scan stats %+v, input bytes %d", scanCounts(sc), s.InputBytes())
	}
}

func TestScanPruned(t *testing.T) {
	tb := scanTestTable(t)
	// Files of 300 ids in row groups of 100, ids ascending: one id from
	// the middle row group of each file of days 2 and 3 keeps exactly
	// those row groups.
	id := expr.NewColumn(0, arrow.PrimitiveTypes.Int64, "id")
	keep := func(ids ...int64) expr.Expr {
		args := []expr.Expr{id}
		for _, v := range ids {
			args = append(args, expr.NewLiteral(v, arrow.PrimitiveTypes.Int64))
		}
		e, err := expr.NewCall("in", args...)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	s := &Scan{
		Table:      tb,
		Columns:    []int{2, 0},
		Partitions: tb.Partitions[1:],
		Filters:    []expr.Expr{keep(750, 1050, 1350, 1650)},
	}
	if got := s.String(); got != "Scan(fact [day, id] partitions=2/3 row-group-filter filters: (id IN (750, 1050, 1350, 1650)))" {
		t.Errorf("String() = %q", got)
	}
	stats := &OperatorStats{}
	perTask := runScan(t, s, 3, stats)
	n := 0
	for _, ids := range perTask {
		for _, id := range ids {
			if id < 600 || id%300 < 100 || id%300 >= 200 {
				t.Fatalf("id %d should have been pruned", id)
			}
		}
		n += len(ids)
	}
	// The reader decodes the 400 rows of those row groups and keeps the
	// four the IN holds for (scan_static_filter.go).
	if n != 4 {
		t.Fatalf("read %d rows, want 4", n)
	}
	sc := &stats.Scan
	if sc.Files.Load() != 4 || sc.RowGroupsTotal.Load() != 12 || sc.RowGroupsKept.Load() != 4 || sc.PartitionsStatic.Load() != 2 || sc.PartitionsTotal.Load() != 3 || sc.RowsRead.Load() != 400 {
		t.Fatalf("scan stats %+v", scanCounts(sc))
	}

	// Every row group pruned: files are listed but none is opened.
	s.Filters = []expr.Expr{keep(-1)}
	stats = &OperatorStats{}
	for _, ids := range runScan(t, s, 2, stats) {
		if len(ids) != 0 {
			t.Fatal("rows from a fully pruned scan")
		}
	}
	if sc := &stats.Scan; sc.FilesPruned.Load() != 4 || sc.BytesRead.Load() != 0 {
		t.Fatalf("scan stats %+v", scanCounts(sc))
	}
}

func TestScanErrors(t *testing.T) {
	tb := scanTestTable(t)
	path := tb.Partitions[0].Files[1].Path
	if err := os.WriteFile(path, []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &Scan{Table: tb, Columns: []int{0}}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	st, err := s.Open(&TaskContext{Alloc: mem, Parallelism: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for {
		b, err := st.Next(context.Background())
		if err == nil {
			b.Release()
			continue
		}
		// The file changed after planning: a conflict, which names the
		// file once.
		if !errors.Is(err, errs.Conflict) || strings.Count(err.Error(), path) != 1 {
			t.Fatalf("want a conflict error naming %s once, got %v", path, err)
		}
		break
	}
	if _, err := (&Scan{Table: tb, Columns: []int{7}}).Open(&TaskContext{Alloc: mem}, nil); !errors.Is(err, ErrInternal) {
		t.Fatalf("bad column: got %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	st2, _ := s.Open(&TaskContext{Alloc: mem}, nil)
	defer st2.Close()
	if _, err := st2.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: got %v", err)
	}
}

func TestAssignSplits(t *testing.T) {
	sizes := []int64{100, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 60}
	splits := make([]Split, len(sizes))
	for i, b := range sizes {
		splits[i].Bytes = b
	}
	task := AssignSplits(splits, 2)
	load := make([]int64, 2)
	for i, tk := range task {
		load[tk] += sizes[i]
	}
	if load[0] != 130 || load[1] != 130 {
		t.Fatalf("loads %v, want balanced 130/130", load)
	}
	if got := AssignSplits(splits, 0); len(got) != len(splits) || got[0] != 0 {
		t.Fatalf("p=0: %v", got)
	}
}

// scanCounts lists the counters for failure messages.
func scanCounts(sc *ScanStats) map[string]int64 {
	return map[string]int64{
		"bytes_read": sc.BytesRead.Load(), "partitions_total": sc.PartitionsTotal.Load(), "partitions_static": sc.PartitionsStatic.Load(),
		"partitions_kept": sc.PartitionsKept.Load(), "files": sc.Files.Load(), "files_pruned": sc.FilesPruned.Load(),
		"row_groups_total": sc.RowGroupsTotal.Load(), "row_groups_kept": sc.RowGroupsKept.Load(),
		"rows_read": sc.RowsRead.Load(), "rows_kept": sc.RowsKept.Load(),
	}
}
