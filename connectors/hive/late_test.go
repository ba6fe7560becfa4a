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

// keepFilter keeps the rows whose first filter column (int32) is kept by
// keep; NULL keys are dropped.
type keepFilter struct {
	cols []int
	keep func(int32) bool
}

func (f *keepFilter) Columns() []int { return f.cols }

func (f *keepFilter) Select(cols []arrow.Array, n int) ([]int32, bool, error) {
	a := cols[0].(*array.Int32)
	var sel []int32
	for i := 0; i < n; i++ {
		if a.IsValid(i) && f.keep(a.Value(i)) {
			sel = append(sel, int32(i))
		}
	}
	return sel, len(sel) == n, nil
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
	keyCol := -1
	for i, f := range tb.Schema.Fields() {
		if f.Name == "key" {
			keyCol = i
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
	for _, keepBelow := range []int32{0, 3, 30, 300, 600, 1000} {
		keep := func(k int32) bool { return k < keepBelow }
		got := read(&keepFilter{cols: []int{keyCol}, keep: keep})
		var want []string
		for _, b := range all {
			key := b.Column(keyCol).(*array.Int32)
			for i := 0; i < int(b.NumRows()); i++ {
				if key.IsValid(i) && keep(key.Value(i)) {
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
			t.Fatalf("keep < %d: %d rows, want %d", keepBelow, len(have), len(want))
		}
		for i := range want {
			if have[i] != want[i] {
				t.Fatalf("keep < %d: row %d = %s, want %s", keepBelow, i, have[i], want[i])
			}
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
