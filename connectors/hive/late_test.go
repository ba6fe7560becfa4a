package hive

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/fsql-dev/fsql/exec/kernels"
	"github.com/parquet-go/parquet-go"
)

// keepFilter keeps the rows whose filter columns (int32) are each kept by
// that column's keep function; NULL keys are dropped.
type keepFilter struct {
	cols []int
	keep []func(int32) bool
	sel  []int32
}

func (f *keepFilter) Columns() []int { return f.cols }

func (f *keepFilter) Select(j int, col arrow.Array) ([]int32, bool, error) {
	a := col.(*array.Int32)
	f.sel = f.sel[:0]
	for i := 0; i < a.Len(); i++ {
		if a.IsValid(i) && f.keep[j](a.Value(i)) {
			f.sel = append(f.sel, int32(i))
		}
	}
	return f.sel, len(f.sel) == a.Len(), nil
}

func (f *keepFilter) Take(a arrow.Array, sel []int32) (arrow.Array, error) {
	return kernels.Take(memory.DefaultAllocator, a, sel)
}

// A filtered read (late materialisation: the key column first, then only
// the kept rows of the others, by selective gathers or decode-and-take)
// returns exactly the unfiltered read's kept rows, at every selectivity,
// across page and row-group boundaries, with NULLs and dictionary pages.
func TestFilteredReadMatchesTake(t *testing.T) {
	const rows = 50000
	dir := t.TempDir()
	group := parquet.Group{
		"key":   parquet.Optional(parquet.Int(32)),
		"small": parquet.Optional(parquet.Int(32)), // dictionary-encoded
		"big":   parquet.Optional(parquet.Int(64)),
		"price": parquet.Optional(parquet.Decimal(2, 7, parquet.Int32Type)),
		"cost":  parquet.Optional(parquet.Decimal(2, 15, parquet.Int64Type)),
		"ratio": parquet.Optional(parquet.Leaf(parquet.DoubleType)),
		"name":  parquet.Optional(parquet.String()),
		"flag":  parquet.Optional(parquet.Leaf(parquet.BooleanType)),
	}
	data := make([][]any, rows)
	for i := range data {
		// In the group's order: big, cost, flag, key, name, price, ratio, small.
		r := []any{int64(i) * 1_000_003, int64(i) * -31, i%3 == 0, int32(i * 7919 % 1000),
			fmt.Sprintf("n-%d", i%777), int32(i%99999 - 5000), float64(i) / 3, int32(i % 13)}
		for c := range r {
			if (i+c)%(11+c) == 0 {
				r[c] = nil
			}
		}
		data[i] = r
	}
	// parquet.Group orders fields by name.
	writeParquet(t, filepath.Join(dir, "t", "a.parquet"), group, data,
		parquet.MaxRowsPerRowGroup(12000), parquet.PageBufferSize(4096))
	cat, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := cat.Table("t")
	if err != nil {
		t.Fatal(err)
	}
	keyCol, smallCol := -1, -1
	for i, f := range tb.Schema.Fields() {
		switch f.Name {
		case "key":
			keyCol = i
		case "small":
			smallCol = i
		}
	}
	cols := make([]int, len(tb.Schema.Fields()))
	for i := range cols {
		cols[i] = i
	}
	p, f := tb.Partitions[0], tb.Partitions[0].Files[0]
	read := func(filter RowFilter) []arrow.RecordBatch {
		r, err := tb.OpenFile(p, f, ScanOptions{Columns: cols, Filter: filter, BatchSize: 3000})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var out []arrow.RecordBatch
		for {
			rec, err := r.Next(context.Background())
			if err == io.EOF {
				return out
			}
			if err != nil {
				t.Fatal(err)
			}
			// Pooled buffers are reused after release: keep a copy.
			out = append(out, copyBatch(t, rec))
			rec.Release()
		}
	}
	all := read(nil)
	check := func(name string, filter *keepFilter) {
		t.Helper()
		got := read(filter)
		var want []string
		for _, b := range all {
			for i := 0; i < int(b.NumRows()); i++ {
				kept := true
				for j, c := range filter.cols {
					key := b.Column(c).(*array.Int32)
					kept = kept && key.IsValid(i) && filter.keep[j](key.Value(i))
				}
				if kept {
					want = append(want, rowString(b, i))
				}
			}
		}
		var have []string
		for _, b := range got {
			for i := 0; i < int(b.NumRows()); i++ {
				have = append(have, rowString(b, i))
			}
		}
		if len(have) != len(want) {
			t.Fatalf("%s: %d rows, want %d", name, len(have), len(want))
		}
		for i := range want {
			if have[i] != want[i] {
				t.Fatalf("%s: row %d = %s, want %s", name, i, have[i], want[i])
			}
		}
	}
	for _, keepBelow := range []int32{0, 3, 30, 300, 600, 1000} {
		keep := func(k int32) bool { return k < keepBelow }
		check(fmt.Sprintf("key < %d", keepBelow), &keepFilter{cols: []int{keyCol}, keep: []func(int32) bool{keep}})
		// Two key columns, tested one after the other in either order:
		// the second sees only the rows the first kept, and either may
		// keep none of a batch.
		for _, smallBelow := range []int32{0, 1, 7, 13} {
			small := func(k int32) bool { return k < smallBelow }
			check(fmt.Sprintf("key < %d, then small < %d", keepBelow, smallBelow),
				&keepFilter{cols: []int{keyCol, smallCol}, keep: []func(int32) bool{keep, small}})
			check(fmt.Sprintf("small < %d, then key < %d", smallBelow, keepBelow),
				&keepFilter{cols: []int{smallCol, keyCol}, keep: []func(int32) bool{small, keep}})
		}
	}
}

func copyBatch(t *testing.T, b arrow.RecordBatch) arrow.RecordBatch {
	sel := make([]int32, b.NumRows())
	for i := range sel {
		sel[i] = int32(i)
	}
	out, err := kernels.TakeBatch(memory.DefaultAllocator, b, sel)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func rowString(b arrow.RecordBatch, i int) string {
	s := ""
	for _, c := range b.Columns() {
		if c.IsNull(i) {
			s += "NULL|"
		} else {
			s += c.ValueStr(i) + "|"
		}
	}
	return s
}
