package hive

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/parquet-go/parquet-go"
)

// flatGroup covers every supported column type; fields sort by name.
var flatGroup = parquet.Group{
	"a_id":    parquet.Int(32),
	"b_name":  parquet.Optional(parquet.Encoded(parquet.String(), &parquet.RLEDictionary)),
	"c_price": parquet.Optional(parquet.Decimal(2, 7, parquet.Int32Type)),
	"d_day":   parquet.Optional(parquet.Date()),
	"e_big":   parquet.Int(64),
	"f_ratio": parquet.Optional(parquet.Leaf(parquet.DoubleType)),
	"g_flag":  parquet.Optional(parquet.Leaf(parquet.BooleanType)),
	"h_dec":   parquet.Decimal(2, 15, parquet.Int64Type),
	"i_wide":  parquet.Optional(parquet.Decimal(3, 20, parquet.FixedLenByteArrayType(9))),
	"j_float": parquet.Leaf(parquet.FloatType),
	"k_note":  parquet.Optional(parquet.String()),
	"l_code":  parquet.Encoded(parquet.Int(32), &parquet.RLEDictionary),
}

func beBytes(v int64, n int) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, uint64(v))
	out := make([]byte, n)
	fill := byte(0)
	if v < 0 {
		fill = 0xff
	}
	for i := range out[:n-8] {
		out[i] = fill
	}
	copy(out[n-8:], b)
	return out
}

func flatRow(i int) []any {
	r := []any{
		int32(i), name(i), int32(i*100 - 5000), int32(10000 + i), int64(i) << 33, float64(i) / 4,
		i%3 == 0, int64(i)*1000 - 7, beBytes(int64(-i*12345), 9), float32(i) / 2, strings.Repeat("x", i%5) + name(i), int32(i % 11),
	}
	if i%7 == 3 {
		r[1], r[2], r[3], r[5], r[6], r[8], r[10] = nil, nil, nil, nil, nil, nil, nil
	}
	return r
}

func writeFlat(t testing.TB, dir string, n int) {
	rows := make([][]any, n)
	for i := range rows {
		rows[i] = flatRow(i)
	}
	writeParquet(t, filepath.Join(dir, "items", "part-0.parquet"), flatGroup, rows,
		parquet.MaxRowsPerRowGroup(1000), parquet.PageBufferSize(2048))
	// Files and folders readers must skip.
	os.WriteFile(filepath.Join(dir, "items", "_SUCCESS"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "items", ".part-0.parquet.crc"), []byte("x"), 0o644)
}

func readAll(t *testing.T, tb *Table, opts ScanOptions) []arrow.RecordBatch {
	t.Helper()
	var out []arrow.RecordBatch
	for _, p := range tb.Partitions {
		for _, f := range p.Files {
			r, err := tb.OpenFile(p, f, opts)
			if err != nil {
				t.Fatal(err)
			}
			for {
				rec, err := r.Next(context.Background())
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, rec)
			}
			r.Close()
		}
	}
	return out
}

func TestFlatTable(t *testing.T) {
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
	wantTypes := []string{"int32", "utf8", "decimal(7, 2)", "date32", "int64", "float64", "bool", "decimal(15, 2)", "decimal(20, 3)", "float64", "utf8", "int32"}
	if tb.NumFileColumns != len(wantTypes) || len(tb.Schema.Fields()) != len(wantTypes) || len(tb.Partitions) != 1 || tb.Partitions[0].Values != nil {
		t.Fatalf("schema %v, partitions %d", tb.Schema, len(tb.Partitions))
	}
	for i, f := range tb.Schema.Fields() {
		if f.Type.String() != wantTypes[i] {
			t.Errorf("column %s: type %s, want %s", f.Name, f.Type, wantTypes[i])
		}
		// A REQUIRED column is NOT NULL, an OPTIONAL one nullable.
		if f.Nullable != flatGroup[f.Name].Optional() {
			t.Errorf("column %s: nullable %v, want %v", f.Name, f.Nullable, flatGroup[f.Name].Optional())
		}
	}
	if tb.NumRows() != n || tb.NumBytes() <= 0 {
		t.Fatalf("rows %d bytes %d", tb.NumRows(), tb.NumBytes())
	}
	f := tb.Partitions[0].Files[0]
	if len(f.RowGroups) != 3 {
		t.Fatalf("%d row groups, want 3", len(f.RowGroups))
	}
	st := f.RowGroups[1].Columns[0]
	if !st.HasMinMax || st.Min != int32(1000) || st.Max != int32(1999) || st.NullCount != 0 {
		t.Errorf("a_id stats of row group 1: %+v", st)
	}
	if st := f.RowGroups[0].Columns[1]; !st.HasMinMax || st.Min != "name-000" || st.Max != "name-036" || st.NullCount != 143 {
		t.Errorf("b_name stats: %+v", st)
	}
	if st := f.RowGroups[0].Columns[2]; !st.HasMinMax || st.Min != decimal128.FromI64(-5000) {
		t.Errorf("c_price stats: %+v", st)
	}
	if st := f.RowGroups[0].Columns[3]; !st.HasMinMax || st.Min != arrow.Date32(10000) {
		t.Errorf("d_day stats: %+v", st)
	}

	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	all := make([]int, tb.NumFileColumns)
	for i := range all {
		all[i] = i
	}
	recs := readAll(t, tb, ScanOptions{Columns: all, BatchSize: 700, Alloc: mem})
	row := 0
	for _, rec := range recs {
		if rec.NumRows() > 700 {
			t.Fatalf("batch of %d rows", rec.NumRows())
		}
		for i := 0; i < int(rec.NumRows()); i++ {
			checkFlatRow(t, rec, i, row)
			row++
		}
		rec.Release()
	}
	if row != n {
		t.Fatalf("read %d rows, want %d", row, n)
	}
}

func checkFlatRow(t *testing.T, rec arrow.RecordBatch, i, row int) {
	t.Helper()
	want := flatRow(row)
	for c, w := range want {
		col := rec.Column(c)
		if w == nil {
			if !col.IsNull(i) {
				t.Fatalf("row %d col %d: want NULL", row, c)
			}
			continue
		}
		if col.IsNull(i) {
			t.Fatalf("row %d col %d: unexpected NULL", row, c)
		}
		var got any
		switch a := col.(type) {
		case *array.Int32:
			got = a.Value(i)
		case *array.Int64:
			got = a.Value(i)
		case *array.Date32:
			got = int32(a.Value(i))
		case *array.Float64:
			got = a.Value(i)
			if c == 9 {
				w = float64(w.(float32))
			}
		case *array.Boolean:
			got = a.Value(i)
		case *array.String:
			got = a.Value(i)
		case *array.Decimal128:
			v := a.Value(i)
			switch c {
			case 2:
				w = decimal128.FromI64(int64(w.(int32)))
			case 7:
				w = decimal128.FromI64(w.(int64))
			case 8:
				w = decimal128.FromI64(int64(-row * 12345))
			}
			got = v
		default:
			t.Fatalf("unexpected array %T", col)
		}
		if got != w {
			t.Fatalf("row %d col %d: got %v, want %v", row, c, got, w)
		}
	}
}

func TestProjectionAndRowGroups(t *testing.T) {
	dir := t.TempDir()
	writeFlat(t, dir, 2500)
	cat, _ := Open(dir)
	tb, err := cat.Table("items")
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	p, f := tb.Partitions[0], tb.Partitions[0].Files[0]
	r, err := tb.OpenFile(p, f, ScanOptions{Columns: []int{10, 0}, RowGroups: []int{2}, Alloc: mem})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rec, err := r.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	if rec.NumRows() != 500 || rec.NumCols() != 2 || rec.Schema().Field(0).Name != "k_note" {
		t.Fatalf("got %d rows %v", rec.NumRows(), rec.Schema())
	}
	if got := rec.Column(1).(*array.Int32).Value(0); got != 2000 {
		t.Fatalf("first id %d, want 2000", got)
	}
	want := f.RowGroups[2].Columns[10].Bytes + f.RowGroups[2].Columns[0].Bytes
	if r.BytesRead() != want {
		t.Fatalf("BytesRead %d, want %d", r.BytesRead(), want)
	}
	if _, err := r.Next(context.Background()); err != io.EOF {
		t.Fatalf("want EOF, got %v", err)
	}
}

func TestCancel(t *testing.T) {
	dir := t.TempDir()
	writeFlat(t, dir, 100)
	cat, _ := Open(dir)
	tb, _ := cat.Table("items")
	r, err := tb.OpenFile(tb.Partitions[0], tb.Partitions[0].Files[0], ScanOptions{Columns: []int{0}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
}
