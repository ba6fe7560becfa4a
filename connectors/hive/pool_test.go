package hive

import (
	"context"
	"io"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/fsql-dev/fsql/internal/mempool"
)

// TestFlatTablePooled reads every column through a recycling allocator that
// poisons freed buffers, releasing each batch before reading the next: a
// decoder that relied on fresh (zeroed) memory, or left part of a buffer
// unwritten, would show the previous batch's poison.
func TestFlatTablePooled(t *testing.T) {
	dir := t.TempDir()
	const n = 2500
	writeFlat(t, dir, n)
	cat, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := cat.Table("ITEMS")
	if err != nil {
		t.Fatal(err)
	}
	pool := mempool.New()
	pool.Poison = true
	mem := memory.NewCheckedAllocator(pool)
	defer mem.AssertSize(t, 0)
	all := make([]int, tb.NumFileColumns)
	for i := range all {
		all[i] = i
	}
	for _, batch := range []int{700, 64, 1001} {
		p, f := tb.Partitions[0], tb.Partitions[0].Files[0]
		r, err := tb.OpenFile(p, f, ScanOptions{Columns: all, BatchSize: batch, Alloc: mem})
		if err != nil {
			t.Fatal(err)
		}
		row := 0
		for {
			rec, err := r.Next(context.Background())
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < int(rec.NumRows()); i++ {
				checkFlatRow(t, rec, i, row)
				row++
			}
			rec.Release()
		}
		r.Close()
		if row != n {
			t.Fatalf("batch %d: read %d rows, want %d", batch, row, n)
		}
	}
}

// packValidity matches setting one bit per present row, at every start
// offset and length around a bitmap byte.
func TestPackValidity(t *testing.T) {
	def := make([]byte, 70)
	for i := range def {
		def[i] = byte((i*7 + i/3) % 3 % 2)
	}
	for out := range 17 {
		for k := range len(def) {
			got := make([]byte, 16)
			want := make([]byte, 16)
			packValidity(got, out, def[:k])
			for i, l := range def[:k] {
				if l == 1 {
					want[(out+i)/8] |= 1 << ((out + i) % 8)
				}
			}
			if string(got) != string(want) {
				t.Fatalf("out %d k %d: got %08b, want %08b", out, k, got, want)
			}
		}
	}
}
