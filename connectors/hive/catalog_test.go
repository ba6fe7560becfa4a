package hive

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/parquet-go/parquet-go"
)

var qtyGroup = parquet.Group{"qty": parquet.Optional(parquet.Int(32))}

func qtyRows(n, base int) [][]any {
	rows := make([][]any, n)
	for i := range rows {
		rows[i] = []any{int32(base + i)}
	}
	return rows
}

func writePartitioned(t *testing.T, dir string) {
	for _, p := range []struct {
		folder string
		n      int
	}{
		{"year=2000/region=east", 10},
		{"year=2000/region=" + DefaultPartitionName, 5},
		{"year=2001/region=we%2Fst", 7},
	} {
		writeParquet(t, filepath.Join(dir, "sales", filepath.FromSlash(p.folder), "f0.parquet"), qtyGroup, qtyRows(p.n, 0))
	}
	writeParquet(t, filepath.Join(dir, "sales", "year=2001", "region=we%2Fst", "f1.parquet"), qtyGroup, qtyRows(3, 100))
	os.WriteFile(filepath.Join(dir, "sales", "_SUCCESS"), nil, 0o644)
	os.MkdirAll(filepath.Join(dir, "sales", "_temporary", "x"), 0o755)
}

func TestPartitionedTable(t *testing.T) {
	dir := t.TempDir()
	writePartitioned(t, dir)
	cat, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := cat.Table("Sales")
	if err != nil {
		t.Fatal(err)
	}
	if got := tb.Schema.String(); !strings.Contains(got, "qty: type=int32, nullable") || !strings.Contains(got, "year: type=int32, nullable") || !strings.Contains(got, "region: type=utf8, nullable") {
		t.Fatalf("schema %s", got)
	}
	if tb.NumFileColumns != 1 || strings.Join(tb.PartitionColumns, ",") != "year,region" || len(tb.Partitions) != 3 || tb.NumRows() != 25 {
		t.Fatalf("table %+v", tb)
	}
	want := [][]any{{int32(2000), nil}, {int32(2000), "east"}, {int32(2001), "we/st"}}
	for i, p := range tb.Partitions {
		if len(p.Values) != 2 || p.Values[0] != want[i][0] || p.Values[1] != want[i][1] {
			t.Errorf("partition %d (%s): values %v, want %v", i, p.Dir, p.Values, want[i])
		}
	}
	if len(tb.Partitions[2].Files) != 2 {
		t.Fatalf("want 2 files in the last partition")
	}

	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	recs := readAll(t, tb, ScanOptions{Columns: []int{2, 0, 1}, Alloc: mem, BatchSize: 4})
	counts := map[string]int{}
	for _, rec := range recs {
		region, qty, year := rec.Column(0), rec.Column(1).(*array.Int32), rec.Column(2).(*array.Int32)
		for i := 0; i < int(rec.NumRows()); i++ {
			key := "NULL"
			if !region.IsNull(i) {
				key = region.(*array.String).Value(i)
			}
			counts[key] += int(year.Value(i)) - 1999
			_ = qty.Value(i)
		}
		rec.Release()
	}
	if counts["east"] != 10 || counts["NULL"] != 5 || counts["we/st"] != 20 {
		t.Fatalf("counts %v", counts)
	}
	// Partition columns only: the files are not opened, rows still counted.
	recs = readAll(t, tb, ScanOptions{Columns: []int{1}, Alloc: mem})
	rows := 0
	for _, rec := range recs {
		rows += int(rec.NumRows())
		rec.Release()
	}
	// No columns at all: row counts only.
	recs = readAll(t, tb, ScanOptions{Alloc: mem})
	for _, rec := range recs {
		rows += int(rec.NumRows())
		rec.Release()
	}
	if rows != 50 {
		t.Fatalf("counted %d rows, want 50", rows)
	}
}

func TestPartitionTypes(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"d=2001-02-03/big=5000000000/s=1", "d=" + DefaultPartitionName + "/big=-1/s=x"} {
		writeParquet(t, filepath.Join(dir, "t", filepath.FromSlash(f), "a.parquet"), qtyGroup, qtyRows(1, 0))
	}
	cat, _ := Open(dir)
	tb, err := cat.Table("t")
	if err != nil {
		t.Fatal(err)
	}
	types := []arrow.DataType{arrow.FixedWidthTypes.Date32, arrow.PrimitiveTypes.Int64, arrow.BinaryTypes.String}
	for i, ty := range types {
		if got := tb.Schema.Field(1 + i).Type; !arrow.TypeEqual(got, ty) {
			t.Errorf("partition column %d: %s, want %s", i, got, ty)
		}
	}
	p := tb.Partitions[0] // sorted by folder: "d=2001-..." < "d=__HIVE..."
	if p.Values[0] != arrow.Date32FromTime(mustDate("2001-02-03")) || p.Values[1] != int64(5000000000) || p.Values[2] != "1" {
		t.Fatalf("values %v", p.Values)
	}
	if tb.Partitions[1].Values[0] != nil {
		t.Fatalf("default partition should be NULL: %v", tb.Partitions[1].Values)
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, rec := range readAll(t, tb, ScanOptions{Columns: []int{1, 2, 3}, Alloc: mem}) {
		rec.Release()
	}
}

func TestCatalogErrors(t *testing.T) {
	dir := t.TempDir()
	writeParquet(t, filepath.Join(dir, "good", "a.parquet"), qtyGroup, qtyRows(3, 0))
	// Files that disagree on a column's type, or name other columns, are
	// schema evolution (evolution_test.go), not errors of the table.
	// Corrupt file.
	writeParquet(t, filepath.Join(dir, "broken", "a.parquet"), qtyGroup, qtyRows(3, 0))
	os.WriteFile(filepath.Join(dir, "broken", "b.parquet"), []byte("PAR1 this is not parquet PAR1"), 0o644)
	// Inconsistent nesting.
	writeParquet(t, filepath.Join(dir, "ragged", "y=1", "a.parquet"), qtyGroup, qtyRows(1, 0))
	writeParquet(t, filepath.Join(dir, "ragged", "y=2", "m=3", "a.parquet"), qtyGroup, qtyRows(1, 0))
	os.MkdirAll(filepath.Join(dir, "empty"), 0o755)

	cat, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(cat.TableNames(), ","); got != "broken,empty,good,ragged" {
		t.Fatalf("tables %s", got)
	}
	for _, tc := range []struct {
		table string
		is    error
		want  []string
	}{
		{"nope", ErrNoTable, []string{`"nope"`, dir, "good, ragged"}},
		{"broken", ErrCorrupt, []string{"b.parquet"}},
		{"ragged", ErrCorrupt, []string{"y=2"}},
		{"empty", ErrCorrupt, []string{"no data files"}},
	} {
		_, err := cat.Table(tc.table)
		if err == nil || !errors.Is(err, tc.is) {
			t.Errorf("table %s: got %v, want %v", tc.table, err, tc.is)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("table %s: error %q does not mention %q", tc.table, err, w)
			}
		}
	}

	// A file that disappears after loading fails when opened, naming it.
	tb, err := cat.Table("good")
	if err != nil {
		t.Fatal(err)
	}
	f := tb.Partitions[0].Files[0]
	os.Remove(f.Path)
	if _, err := tb.OpenFile(tb.Partitions[0], f, ScanOptions{Columns: []int{0}}); err == nil || !strings.Contains(err.Error(), f.Path) {
		t.Fatalf("want error naming %s, got %v", f.Path, err)
	}
}

// A file truncated in its data pages (footer intact) fails with an error
// that names it, never a panic.
func TestCorruptPages(t *testing.T) {
	dir := t.TempDir()
	writeFlat(t, dir, 2500)
	path := filepath.Join(dir, "items", "part-0.parquet")
	data, _ := os.ReadFile(path)
	for i := 4; i < len(data)/2; i += 97 {
		data[i] ^= 0x5a
	}
	os.WriteFile(path, data, 0o644)
	cat, _ := Open(dir)
	tb, err := cat.Table("items")
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r, err := tb.OpenFile(tb.Partitions[0], tb.Partitions[0].Files[0], ScanOptions{Columns: []int{0, 1, 2, 10}, Alloc: mem})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for {
		rec, err := r.Next(context.Background())
		if err == io.EOF {
			t.Fatal("scrambled file read without error")
		}
		if err != nil {
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("error %q does not name the file", err)
			}
			break
		}
		rec.Release()
	}
}

func TestConcurrentLoad(t *testing.T) {
	dir := t.TempDir()
	writePartitioned(t, dir)
	cat, _ := Open(dir)
	var wg sync.WaitGroup
	tables := make([]*Table, 8)
	for i := range tables {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tables[i], _ = cat.Table("sales")
		}()
	}
	wg.Wait()
	for _, tb := range tables {
		if tb == nil || tb != tables[0] {
			t.Fatal("concurrent loads returned different tables")
		}
	}
}
