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
		cols := make([]int, len(tb.Schema.Fields()))
		for i := range cols {
			cols[i] = i
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
