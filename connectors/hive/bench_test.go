package hive

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/parquet-go/parquet-go"
)

// BenchmarkScan compares the Arrow scan of a ~1M-row file (INT, DECIMAL(7,2)
// and VARCHAR columns, some NULLs) with parquet-go decoding the same pages
// without building anything ("raw"). Both report the file size per
// iteration, so their MB/s compare directly, and the process CPU time per
// iteration (cpu-ms/op, GC included), which a busy machine distorts less
// than wall time.
func BenchmarkScan(b *testing.B) {
	const rows = 1 << 20
	dir := b.TempDir()
	group := parquet.Group{
		"id":    parquet.Int(32),
		"name":  parquet.Optional(parquet.String()),
		"price": parquet.Optional(parquet.Decimal(2, 7, parquet.Int32Type)),
	}
	data := make([][]any, rows)
	for i := range data {
		r := []any{int32(i), fmt.Sprintf("customer-%07d", i%50000), int32(i % 99999)}
		if i%17 == 0 {
			r[1], r[2] = nil, nil
		}
		data[i] = r
	}
	writeParquet(b, filepath.Join(dir, "t", "a.parquet"), group, data, parquet.MaxRowsPerRowGroup(128<<10))
	data = nil
	cat, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	tb, err := cat.Table("t")
	if err != nil {
		b.Fatal(err)
	}
	p, f := tb.Partitions[0], tb.Partitions[0].Files[0]
	b.ResetTimer()

	scan := func(b *testing.B, mem memory.Allocator) {
		b.SetBytes(f.Size)
		runtime.GC() // the setup's (or the previous variant's) garbage is not this variant's cost
		defer reportCPU(b)()
		for b.Loop() {
			r, err := tb.OpenFile(p, f, ScanOptions{Columns: []int{0, 1, 2}, Alloc: mem})
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			for {
				rec, err := r.Next(context.Background())
				if err == io.EOF {
					break
				}
				if err != nil {
					b.Fatal(err)
				}
				n += int(rec.NumRows())
				rec.Release()
			}
			r.Close()
			if n != rows {
				b.Fatalf("%d rows", n)
			}
		}
	}
	// arrow allocates as the engine's scans do (no allocator given: the
	// recycling scan pool); arrow-goalloc from the plain Go allocator, paying
	// for fresh zeroed memory and its collection on every batch.
	b.Run("arrow", func(b *testing.B) { scan(b, nil) })
	b.Run("arrow-goalloc", func(b *testing.B) { scan(b, goAllocator{memory.NewGoAllocator()}) })
	b.Run("raw", func(b *testing.B) {
		b.SetBytes(f.Size)
		runtime.GC() // the setup's (or the previous variant's) garbage is not this variant's cost
		defer reportCPU(b)()
		for b.Loop() {
			osf, err := os.Open(f.Path)
			if err != nil {
				b.Fatal(err)
			}
			pf, err := parquet.OpenFile(osf, f.Size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
			if err != nil {
				b.Fatal(err)
			}
			var n int64
			for _, rg := range pf.RowGroups() {
				for _, cc := range rg.ColumnChunks() {
					pages := cc.Pages()
					for {
						pg, err := pages.ReadPage()
						if err == io.EOF {
							break
						}
						if err != nil {
							b.Fatal(err)
						}
						v := pg.Data()
						n += v.Size() + int64(len(pg.DefinitionLevels()))
						parquet.Release(pg)
					}
					pages.Close()
				}
			}
			osf.Close()
			if n == 0 {
				b.Fatal("nothing decoded")
			}
		}
	})
}

// goAllocator is the Go allocator under another type, which the reader
// uses as given instead of swapping in its pool.
type goAllocator struct{ *memory.GoAllocator }

// reportCPU measures the process CPU time until the returned func runs.
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64((cpuTime()-start).Microseconds())/1000/float64(b.N), "cpu-ms/op")
		}
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSnapshot measures what freshness costs a query: a new view
// checks a partitioned table again (1,828 date folders of one file each,
// the layout of a TPC-DS fact table): every folder's modification time and
// every file's stamp ("relist"), against a cold load that reads every
// folder and footer ("cold", the caches emptied).
func BenchmarkSnapshot(b *testing.B) {
	dir := b.TempDir()
	rows := qtyRows(10, 0)
	for d := 0; d < 1828; d++ {
		writeParquet(b, filepath.Join(dir, "sales", fmt.Sprintf("ss_sold_date_sk=%d", 2450816+d), "part-0.parquet"), qtyGroup, rows)
	}
	ageFolders(b, dir) // written long before the query, as data usually is
	cat, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	load := func(b *testing.B) {
		snap, err := cat.Snapshot()
		if err != nil {
			b.Fatal(err)
		}
		if tb, err := snap.Table("sales"); err != nil || len(tb.Partitions) != 1828 {
			b.Fatalf("%v", err)
		}
	}
	b.Run("relist", func(b *testing.B) {
		load(b)
		for b.Loop() {
			load(b)
		}
	})
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			cat.footers.clear()
			load(b)
		}
	})
}

// BenchmarkCSVScan reads a ~1M-row CSV file (BIGINT, VARCHAR, DECIMAL and
// DATE columns, some NULLs and quoted fields) into Arrow batches; it
// reports the file size per iteration (MB/s) and CPU per iteration.
func BenchmarkCSVScan(b *testing.B) {
	const rows = 1 << 20
	dir := b.TempDir()
	writeBenchCSV(b, dir, rows)
	cat, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	tb, err := cat.PathTable("t.csv")
	if err != nil {
		b.Fatal(err)
	}
	if got := schemaText(tb); got != "id BIGINT, name VARCHAR, price DECIMAL(38,2), day DATE" {
		b.Fatalf("schema %s", got)
	}
	p, file := tb.Partitions[0], tb.Partitions[0].Files[0]
	b.SetBytes(file.Size)
	cpu := reportCPU(b)
	b.ResetTimer()
	for range b.N {
		r, err := tb.OpenFile(p, file, ScanOptions{Columns: []int{0, 1, 2, 3}})
		if err != nil {
			b.Fatal(err)
		}
		n := int64(0)
		for {
			rec, err := r.Next(context.Background())
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n += rec.NumRows()
			rec.Release()
		}
		r.Close()
		if n != rows {
			b.Fatalf("%d rows, want %d", n, rows)
		}
	}
	cpu()
}

// BenchmarkCSVSplitPass is the pass that finds where the byte ranges of
// BenchmarkCSVScan's file start (csv_split.go), every 1 MiB: compare its
// MB/s with BenchmarkCSVScan's, the parsing it lets tasks share.
func BenchmarkCSVSplitPass(b *testing.B) {
	const rows = 1 << 20
	dir := b.TempDir()
	path := writeBenchCSV(b, dir, rows)
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	opts := DefaultCSVOptions()
	cpu := reportCPU(b)
	b.ResetTimer()
	for range b.N {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		ranges, counts, exact, err := splitCSV(f, &opts, 1<<20, 4)
		f.Close()
		if err != nil || !exact || len(ranges) < 10 {
			b.Fatalf("%d ranges, exact %v, %v", len(ranges), exact, err)
		}
		n := int64(0)
		for _, c := range counts {
			n += c
		}
		if n != rows {
			b.Fatalf("%d rows, want %d", n, rows)
		}
	}
	cpu()
}

// writeBenchCSV writes the benchmarks' file, dir/t.csv: rows records of
// BIGINT, VARCHAR, DECIMAL and DATE columns, some NULLs and quoted fields.
func writeBenchCSV(b *testing.B, dir string, rows int) string {
	path := filepath.Join(dir, "t.csv")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	w.WriteString("id,name,price,day\n")
	for i := range rows {
		switch {
		case i%17 == 0:
			fmt.Fprintf(w, "%d,,,\n", i)
		case i%5 == 0:
			fmt.Fprintf(w, "%d,\"customer, %07d\",%d.%02d,2024-%02d-%02d\n", i, i%50000, i%9999, i%100, 1+i%12, 1+i%28)
		default:
			fmt.Fprintf(w, "%d,customer-%07d,%d.%02d,2024-%02d-%02d\n", i, i%50000, i%9999, i%100, 1+i%12, 1+i%28)
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}
