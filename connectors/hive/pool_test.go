package hive

import (
	"context"
	"io"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/fsql-dev/fsql/internal/mempool"
)

// TestFlatTablePooled reads every column through a recycling allocator that
// poisons freed buffers, releasing each batch before reading the next: a
// decoder that relied on fresh (zeroed) memory, or left part of a buffer
// unwritten, would show the previous batch's poison. Given the pool itself
// (not wrapped), the reader skips clearing the buffers it overwrites.
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
	for _, run := range []struct {
		batch int
		mem   memory.Allocator
	}{{700, mem}, {64, mem}, {1001, mem}, {700, pool}, {333, pool}} {
		batch := run.batch
		p, f := tb.Partitions[0], tb.Partitions[0].Files[0]
		r, err := tb.OpenFile(p, f, ScanOptions{Columns: all, BatchSize: batch, Alloc: run.mem})
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
				checkNullSlotsZero(t, rec, i, row)
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

// checkNullSlotsZero: fixed-width values of NULL rows are zero, as from a
// zeroed buffer, even when the buffer was recycled without clearing.
func checkNullSlotsZero(t *testing.T, rec arrow.RecordBatch, i, row int) {
	t.Helper()
	for c, col := range rec.Columns() {
		if !col.IsNull(i) {
			continue
		}
		zero := true
		switch a := col.(type) {
		case *array.Int32:
			zero = a.Value(i) == 0
		case *array.Int64:
			zero = a.Value(i) == 0
		case *array.Float64:
			zero = a.Value(i) == 0
		case *array.Date32:
			zero = a.Value(i) == 0
		case *array.Decimal128:
			zero = a.Value(i) == decimal128.Num{}
		case *array.String:
			zero = a.ValueLen(i) == 0
		}
		if !zero {
			t.Fatalf("row %d col %d: NULL slot holds a value", row, c)
		}
	}
}
