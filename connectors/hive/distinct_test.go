package hive

import (
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// DistinctBound: distinct folder values of a partition column, max - min
// + 1 of an integer column's statistics over every file, nothing for a
// string column.
func TestDistinctBound(t *testing.T) {
	dir := t.TempDir()
	group := parquet.Group{"qty": parquet.Optional(parquet.Int(32)), "s": parquet.Optional(parquet.String())}
	rows := func(base int) [][]any { return [][]any{{int32(base), "a"}, {int32(base + 3), "b"}} }
	writeParquet(t, filepath.Join(dir, "t", "y=1", "a"), group, rows(10))
	writeParquet(t, filepath.Join(dir, "t", "y=2", "a"), group, rows(20))
	writeParquet(t, filepath.Join(dir, "t", "y=2", "b"), group, rows(5))
	cat, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	tb := mustTable(t, cat, "t")
	for _, c := range []struct {
		col  int
		n    int64
		okay bool
	}{
		{0, 23 - 5 + 1, true}, // qty: 5..23
		{1, 0, false},         // s: a string
		{2, 2, true},          // y: two folder values
	} {
		n, ok := tb.DistinctBound(c.col)
		if n != c.n || ok != c.okay {
			t.Errorf("column %s: DistinctBound = %d, %v; want %d, %v", tb.Schema.Field(c.col).Name, n, ok, c.n, c.okay)
		}
	}
}
