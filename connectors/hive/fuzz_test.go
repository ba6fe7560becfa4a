package hive

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/parquet-go/parquet-go"
)

// FuzzParquetReader feeds arbitrary bytes to the catalog and reader: they
// may fail, never panic or leak. `go test` runs the seeds; run
// `go test -fuzz FuzzParquetReader ./connectors/hive` to search further.
func FuzzParquetReader(f *testing.F) {
	seedDir := f.TempDir()
	// Small seeds: the fuzzer minimises every interesting input, one run
	// per byte removed, so big seeds stall it.
	rows := make([][]any, 60)
	for i := range rows {
		rows[i] = flatRow(i)
	}
	seed := filepath.Join(seedDir, "seed.parquet")
	writeParquet(f, seed, flatGroup, rows, parquet.MaxRowsPerRowGroup(25), parquet.PageBufferSize(256))
	data, err := os.ReadFile(seed)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add(data[:len(data)/2])
	f.Add(append([]byte("PAR1"), data[len(data)/2:]...))
	flipped := bytes.Clone(data)
	for i := 8; i < len(flipped)-8; i += 31 {
		flipped[i] ^= 0xff
	}
	f.Add(flipped)
	f.Add([]byte("PAR1PAR1"))
	// Every logical type, nested columns among them.
	types := filepath.Join(seedDir, "types.parquet")
	writeTypes(f, types, 1700000000123456000)
	if data, err = os.ReadFile(types); err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "t"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "t", "a.parquet"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		cat, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		tb, err := cat.Table("t")
		if err != nil {
			return
		}
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		var cols []int // the readable ones: reading a nested column fails at once
		for i := range tb.Schema.Fields() {
			if tb.ColumnError(i) == nil {
				cols = append(cols, i)
			}
		}
		for _, p := range tb.Partitions {
			for _, file := range p.Files {
				r, err := tb.OpenFile(p, file, ScanOptions{Columns: cols, Alloc: mem, BatchSize: 64})
				if err != nil {
					continue
				}
				for {
					rec, err := r.Next(context.Background())
					if err != nil {
						break
					}
					rec.Release()
				}
				r.Close()
			}
		}
	})
}

// FuzzCSVReader feeds arbitrary text to CSV detection and reading, with
// and without an escape character: it may fail, never panic or leak.
// `go test -fuzz FuzzCSVReader ./connectors/hive` searches further.
func FuzzCSVReader(f *testing.F) {
	f.Add([]byte("a,b\n1,x\n2,\"y,\"\"z\"\"\"\n"), false)
	f.Add([]byte("n\n1\n\n\\N\n2.5\n"), true)
	f.Add([]byte("d,t\n2024-01-01,12:00:00\n2024-01-02 01:02:03.5,\"\n\"\n"), false)
	f.Add([]byte("\ufeffx\r\n\"open\r\n"), true)
	f.Fuzz(func(t *testing.T, data []byte, escape bool) {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "t"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "t", "a.csv"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		opts := DefaultOptions()
		opts.CSV.SampleRows = 3
		if escape {
			opts.CSV.Escape = '\\'
		}
		cat, err := OpenWith(dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		tb, err := cat.Table("t")
		if err != nil {
			return
		}
		cols := make([]int, len(tb.Schema.Fields()))
		for i := range cols {
			cols[i] = i
		}
		alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer alloc.AssertSize(t, 0)
		p := tb.Partitions[0]
		r, err := tb.OpenFile(p, p.Files[0], ScanOptions{Columns: cols, Alloc: alloc, BatchSize: 2})
		if err != nil {
			return
		}
		defer r.Close()
		for {
			rec, err := r.Next(context.Background())
			if err != nil {
				return
			}
			rec.Release()
		}
	})
}
