package pruning

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/parquet-go/parquet-go"

	"github.com/fsql-dev/fsql/connectors/hive"
)

// Columns of the test table, in t.Schema order (parquet.Group sorts by name).
const (
	colD     = 0 // DATE, 10000 + i
	colID    = 1 // BIGINT, i
	colName  = 2 // VARCHAR, "n%03d"
	colPrice = 3 // DECIMAL(7,2), i.00; NULL in row group 1 and where i < 100 and i%10 == 0
	colQty   = 4 // INT, i
	colDay   = 5 // partition INT: 1, 2, 3, NULL
)

// testTable writes one file per partition day=1,2,3,NULL with rows
// i = 0..299 in row groups of 100.
func testTable(t *testing.T) *hive.Table {
	t.Helper()
	dir := t.TempDir()
	group := parquet.Group{
		"d":     parquet.Optional(parquet.Date()),
		"id":    parquet.Int(64),
		"name":  parquet.Optional(parquet.String()),
		"price": parquet.Optional(parquet.Decimal(2, 7, parquet.Int32Type)),
		"qty":   parquet.Int(32),
	}
	for _, day := range []string{"1", "2", "3", hive.DefaultPartitionName} {
		path := filepath.Join(dir, "fact", "day="+day, "part-0.parquet")
		os.MkdirAll(filepath.Dir(path), 0o755)
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		w := parquet.NewWriter(f, parquet.NewSchema("t", group), parquet.MaxRowsPerRowGroup(100))
		b := parquet.NewRowBuilder(group)
		var rows []parquet.Row
		for i := 0; i < 300; i++ {
			b.Reset()
			b.Add(colD, parquet.Int32Value(int32(10000+i)))
			b.Add(colID, parquet.Int64Value(int64(i)))
			b.Add(colName, parquet.ByteArrayValue(fmt.Appendf(nil, "n%03d", i)))
			if i/100 != 1 && !(i < 100 && i%10 == 0) {
				b.Add(colPrice, parquet.Int32Value(int32(i*100)))
			}
			b.Add(colQty, parquet.Int32Value(int32(i)))
			rows = append(rows, b.Row())
		}
		if _, err := w.WriteRows(rows); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	cat, err := hive.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := cat.Table("fact")
	if err != nil {
		t.Fatal(err)
	}
	if tb.NumFileColumns != 5 || !arrow.TypeEqual(tb.Schema.Field(colDay).Type, arrow.PrimitiveTypes.Int32) {
		t.Fatalf("unexpected schema %s", tb.Schema)
	}
	return tb
}
