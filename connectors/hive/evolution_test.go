package hive

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/parquet-go/parquet-go"
)

// scanStrings reads the named columns of every file, rows as text.
func scanStrings(t *testing.T, tb *Table, names ...string) ([]string, error) {
	t.Helper()
	var cols []int
	for _, n := range names {
		idx := tb.Schema.FieldIndices(n)
		if len(idx) != 1 {
			t.Fatalf("table %s has no column %s: %s", tb.Name, n, tb.Schema)
		}
		cols = append(cols, idx[0])
	}
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer alloc.AssertSize(t, 0)
	var rows []string
	for _, p := range tb.Partitions {
		for _, f := range p.Files {
			r, err := tb.OpenFile(p, f, ScanOptions{Columns: cols, Alloc: alloc})
			if err != nil {
				return nil, err
			}
			for {
				rec, err := r.Next(t.Context())
				if err != nil {
					r.Close()
					if err.Error() == "EOF" {
						break
					}
					return nil, err
				}
				for i := range int(rec.NumRows()) {
					var row []string
					for c := range cols {
						col := rec.Column(c)
						if d, ok := col.(*array.Decimal128); ok && d.IsValid(i) {
							row = append(row, d.Value(i).ToString(d.DataType().(*arrow.Decimal128Type).Scale))
							continue
						}
						row = append(row, col.ValueStr(i))
					}
					rows = append(rows, strings.Join(row, ","))
				}
				rec.Release()
			}
		}
	}
	return rows, nil
}

func TestSchemaEvolution(t *testing.T) {
	dir := t.TempDir()
	// a: the first file, so its order leads (columns sort by name within a file).
	writeParquet(t, filepath.Join(dir, "sales", "a.parquet"), parquet.Group{
		"b_id":    parquet.Int(32),
		"c_price": parquet.Optional(parquet.Decimal(2, 7, parquet.Int32Type)),
		"d_ratio": parquet.Leaf(parquet.FloatType),
		"e_qty":   parquet.Int(32),
	}, [][]any{{int32(1), int32(1050), float32(0.5), int32(3)}, {int32(2), nil, float32(1.5), int32(4)}})
	// b: id widened to BIGINT, price to DECIMAL(9,3), ratio is a DOUBLE,
	// qty is a DECIMAL now, a new column in front by name; no e_qty... all present.
	writeParquet(t, filepath.Join(dir, "sales", "b.parquet"), parquet.Group{
		"a_note":  parquet.Optional(parquet.String()),
		"b_id":    parquet.Int(64),
		"c_price": parquet.Decimal(3, 10, parquet.Int64Type),
		"d_ratio": parquet.Leaf(parquet.DoubleType),
		"e_qty":   parquet.Decimal(1, 5, parquet.Int32Type),
	}, [][]any{{"new", int64(1) << 40, int64(123456), 0.25, int32(25)}})
	// c: lacks price, ratio and note; spells id in capitals.
	writeParquet(t, filepath.Join(dir, "sales", "c.parquet"), parquet.Group{
		"B_ID":  parquet.Int(32),
		"e_qty": parquet.Int(32),
	}, [][]any{{int32(7), int32(8)}})

	cat, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	tb := mustTable(t, cat, "sales")
	var got []string
	for _, f := range tb.Schema.Fields() {
		got = append(got, f.Name+" "+SQLTypeName(f.Type))
	}
	// The first file's order, then the new column; widened types.
	want := "b_id BIGINT|c_price DECIMAL(10,3)|d_ratio DOUBLE|e_qty DECIMAL(11,1)|a_note VARCHAR"
	if strings.Join(got, "|") != want {
		t.Fatalf("schema %s, want %s", strings.Join(got, "|"), want)
	}
	// NOT NULL only where every file has the column as REQUIRED: id and
	// qty; price is OPTIONAL in a, ratio missing from c, note from a and c.
	var nullable []string
	for _, f := range tb.Schema.Fields() {
		nullable = append(nullable, fmt.Sprint(f.Nullable))
	}
	if got, want := strings.Join(nullable, ","), "false,true,true,false,true"; got != want {
		t.Errorf("nullable %s, want %s", got, want)
	}
	rows, err := scanStrings(t, tb, "b_id", "c_price", "d_ratio", "e_qty", "a_note")
	if err != nil {
		t.Fatal(err)
	}
	wantRows := []string{
		"1,10.500,0.5,3.0,(null)",
		"2,(null),1.5,4.0,(null)",
		"1099511627776,123.456,0.25,2.5,new",
		"7,(null),(null),8.0,(null)",
	}
	if strings.Join(rows, "|") != strings.Join(wantRows, "|") {
		t.Fatalf("rows\n%s\nwant\n%s", strings.Join(rows, "\n"), strings.Join(wantRows, "\n"))
	}

	// Statistics follow the table: widened, and all NULL where a file
	// lacks the column (so pruning may skip it for any comparison).
	files := tb.Partitions[0].Files
	priceCol := tb.Schema.FieldIndices("c_price")[0]
	idCol := tb.Schema.FieldIndices("b_id")[0]
	if s := files[0].RowGroups[0].Columns[priceCol]; !s.HasMinMax || s.Min != decimal128.FromI64(10500) {
		t.Errorf("a.parquet price statistics %+v, want min 10.500 at scale 3", s)
	}
	if s := files[0].RowGroups[0].Columns[idCol]; !s.HasMinMax || s.Min != int64(1) || s.Max != int64(2) {
		t.Errorf("a.parquet id statistics %+v, want int64 1..2", s)
	}
	if s := files[2].RowGroups[0].Columns[priceCol]; s.NullCount != 1 || s.HasMinMax || s.Bytes != 0 {
		t.Errorf("c.parquet price statistics %+v, want all NULL, no bytes", s)
	}
	if len(files[1].RowGroups[0].Columns) != 5 {
		t.Errorf("b.parquet has %d column statistics, want the table's 5", len(files[1].RowGroups[0].Columns))
	}

	// A file changed to another schema between planning and reading is
	// caught, not read by the planned mapping.
	writeParquet(t, filepath.Join(dir, "sales", "c.parquet"), parquet.Group{"e_qty": parquet.String()}, [][]any{{"x"}})
	if _, err := scanStrings(t, tb, "e_qty"); !errors.Is(err, ErrChanged) {
		t.Fatalf("rewritten file: %v, want ErrChanged", err)
	}
}

func TestSchemaConflict(t *testing.T) {
	dir := t.TempDir()
	g := parquet.Group{"id": parquet.Int(32), "v": parquet.Int(64)}
	writeParquet(t, filepath.Join(dir, "t", "a.parquet"), g, [][]any{{int32(1), int64(10)}})
	writeParquet(t, filepath.Join(dir, "t", "b.parquet"), parquet.Group{"id": parquet.Int(32), "v": parquet.String()}, [][]any{{int32(2), "x"}})
	writeParquet(t, filepath.Join(dir, "t", "c.parquet"), parquet.Group{"id": parquet.Int(32), "v": parquet.Optional(parquet.List(parquet.Int(32)))}, [][]any{{int32(3)}})
	// Other incompatible pairs, each in a table of its own.
	for name, pair := range map[string][2]parquet.Node{
		"datetime_timestamp": {parquet.TimestampAdjusted(parquet.Microsecond, false), parquet.Timestamp(parquet.Microsecond)},
		"bigint_unsigned":    {parquet.Int(64), parquet.Uint(64)},
		"wide_decimal":       {parquet.Decimal(0, 38, parquet.FixedLenByteArrayType(16)), parquet.Decimal(5, 10, parquet.Int64Type)},
		"double_bigint":      {parquet.Leaf(parquet.DoubleType), parquet.Int(64)},
	} {
		writeParquet(t, filepath.Join(dir, name, "a.parquet"), parquet.Group{"v": pair[0]}, nil)
		writeParquet(t, filepath.Join(dir, name, "b.parquet"), parquet.Group{"v": pair[1]}, nil)
	}
	cat, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	tb := mustTable(t, cat, "t")
	// A query not reading v runs.
	rows, err := scanStrings(t, tb, "id")
	if err != nil || strings.Join(rows, ",") != "1,2,3" {
		t.Fatalf("id: %v %v", rows, err)
	}
	// Reading v fails naming the column, both files and both types.
	_, err = scanStrings(t, tb, "id", "v")
	for _, w := range []string{"column v", "BIGINT", "VARCHAR", "a.parquet", "b.parquet"} {
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), w) {
			t.Fatalf("reading v: %v, want ErrCorrupt mentioning %q", err, w)
		}
	}
	if tb.ColumnError(0) != nil || tb.ColumnError(1) == nil {
		t.Fatalf("ColumnError: id %v, v %v", tb.ColumnError(0), tb.ColumnError(1))
	}
	for _, name := range []string{"datetime_timestamp", "bigint_unsigned", "wide_decimal", "double_bigint"} {
		tb := mustTable(t, cat, name)
		if err := tb.ColumnError(0); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "column v") {
			t.Errorf("%s: %v, want a conflict on v", name, err)
		}
	}
}

func TestWiden(t *testing.T) {
	dec := func(p, s int32) arrow.DataType { return &arrow.Decimal128Type{Precision: p, Scale: s} }
	i32, i64, str := arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64, arrow.BinaryTypes.String
	for _, tc := range []struct {
		a, b, want arrow.DataType
	}{
		{i32, i32, i32},
		{i32, i64, i64},
		{i64, i32, i64},
		{dec(7, 2), dec(9, 3), dec(9, 3)},
		{dec(9, 3), dec(7, 2), dec(9, 3)},
		{i32, dec(5, 2), dec(12, 2)},
		{dec(20, 2), i64, dec(21, 2)},
		{dec(38, 0), dec(10, 2), nil},
		{i64, str, nil},
		{i32, arrow.PrimitiveTypes.Float64, nil},
		{DatetimeType, TimestampType, nil},
	} {
		got, ok := widen(tc.a, tc.b)
		if tc.want == nil {
			if ok {
				t.Errorf("widen(%s, %s) = %s, want a conflict", tc.a, tc.b, got)
			}
			continue
		}
		if !ok || !arrow.TypeEqual(got, tc.want) {
			t.Errorf("widen(%s, %s) = %v %v, want %s", tc.a, tc.b, got, ok, tc.want)
		}
	}
}
