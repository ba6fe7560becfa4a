package hive

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestIsPathName(t *testing.T) {
	for name, want := range map[string]bool{
		"store_sales": false, "t1": false, "a.b": false,
		"x.parquet": true, "X.PARQUET": true, "x.csv": true, "x.csv.gz": true,
		"dir/x": true, "/abs/x": true, "*.parquet": true, "d/**/*.csv": true, "part-?": true, "p[12]": true,
	} {
		if got := IsPathName(name); got != want {
			t.Errorf("IsPathName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestPathTables(t *testing.T) {
	data := t.TempDir()
	writeParquet(t, filepath.Join(data, "files", "one.parquet"), qtyGroup, qtyRows(3, 0))
	writeParquet(t, filepath.Join(data, "events", "year=2023", "month=1", "a.parquet"), qtyGroup, qtyRows(2, 0))
	writeParquet(t, filepath.Join(data, "events", "year=2024", "month=2", "b.parquet"), qtyGroup, qtyRows(4, 10))
	writeParquet(t, filepath.Join(data, "events", "year=2024", "month=2", "_SUCCESS.parquet"), qtyGroup, qtyRows(9, 0)) // hidden: skipped
	mustWrite(t, filepath.Join(data, "events", "year=2024", "README.md"), "not data")                                   // does not match
	mustWrite(t, filepath.Join(data, "exports", "users.csv"), "id,name\n1,ann\n2,bob\n")
	cat, err := Open(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		schema string
		rows   int
	}{
		{"files/one.parquet", "qty INT", 3},
		{"files", "qty INT", 3},
		{"events/**/*.parquet", "qty INT, year INT, month INT", 6},
		{"events/year=2024/*/*.parquet", "qty INT, month INT", 4},
		{"events/*/*/?.parquet", "qty INT, year INT, month INT", 6},
		{"exports/users.csv", "id BIGINT, name VARCHAR", 2},
		{"exports/*.csv", "id BIGINT, name VARCHAR", 2},
		{"./files/../files/one.parquet", "qty INT", 3},
	} {
		tb, err := cat.PathTable(tc.name)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if got := schemaText(tb); got != tc.schema {
			t.Errorf("%s: schema %s, want %s", tc.name, got, tc.schema)
		}
		rows, err := scanStrings(t, tb, allColumns(tb)...)
		if err != nil || len(rows) != tc.rows {
			t.Errorf("%s: %d rows %v, want %d", tc.name, len(rows), err, tc.rows)
		}
		if again, _ := cat.PathTable(tc.name); again != tb {
			t.Errorf("%s: a second lookup in one view returned another table", tc.name)
		}
	}

	// Lookup takes path names to PathTable, others to Table.
	if a, _ := cat.Lookup("files/one.parquet"); a == nil || a.Name != "files/one.parquet" {
		t.Errorf("Lookup of a path: %v", a)
	}
	if a, err := cat.Lookup("files"); err != nil || a.Dir != filepath.Join(data, "files") {
		t.Errorf("Lookup of a table: %v %v", a, err)
	}

	// Partition values of a glob are typed like a table folder's.
	tb, err := cat.PathTable("events/**/*.parquet")
	if err != nil {
		t.Fatal(err)
	}
	rows, _ := scanStrings(t, tb, "year", "month")
	if got := strings.Join(rows, "|"); got != "2023,1|2023,1|2024,2|2024,2|2024,2|2024,2" {
		t.Errorf("partition values %s", got)
	}

	for _, tc := range []struct {
		name string
		is   error
		want string
	}{
		{"files/nope.parquet", ErrNoTable, "no file or folder"},
		{"events/**/*.orc", ErrNoTable, "no data file matches"},
		{"events/a**/*.parquet", ErrNoTable, "whole path segment"},
		{"../x.parquet", ErrOutside, "leads out of the data directory"},
		{"files/../../x.parquet", ErrOutside, "leads out"},
		{filepath.Join(data, "files", "one.parquet"), ErrOutside, "absolute path"},
	} {
		_, err := cat.PathTable(tc.name)
		if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %v mentioning %q", tc.name, err, tc.is, tc.want)
		}
	}
}

// Outside the data directory only when the catalog allows it, and then
// symlinks may lead anywhere too.
func TestPathTablesOutside(t *testing.T) {
	data, other := t.TempDir(), t.TempDir()
	writeParquet(t, filepath.Join(other, "x.parquet"), qtyGroup, qtyRows(2, 0))
	mustLink(t, filepath.Join(other, "x.parquet"), filepath.Join(data, "link.parquet"))
	abs := filepath.Join(other, "x.parquet")
	rel, err := filepath.Rel(data, abs)
	if err != nil {
		t.Fatal(err)
	}

	closed, err := Open(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{abs, rel} {
		if _, err := closed.PathTable(name); !errors.Is(err, ErrOutside) {
			t.Errorf("%s: %v, want ErrOutside", name, err)
		}
	}
	if _, err := closed.PathTable("link.parquet"); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "outside the data directory") {
		t.Errorf("link out: %v, want the symlink refused", err)
	}

	opts := DefaultOptions()
	opts.OutsideDataDir = true
	open, err := OpenWith(data, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{abs, rel, "link.parquet", filepath.Join(other, "*.parquet")} {
		tb, err := open.PathTable(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if rows, err := scanStrings(t, tb, "qty"); err != nil || len(rows) != 2 {
			t.Errorf("%s: %v %v", name, rows, err)
		}
	}
}

// Path tables follow the freshness rule: the next snapshot lists the glob
// again.
func TestPathTableFreshness(t *testing.T) {
	data := t.TempDir()
	writeParquet(t, filepath.Join(data, "d", "a.parquet"), qtyGroup, qtyRows(2, 0))
	cat, err := Open(data)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := cat.PathTable("d/*.parquet")
	if err != nil {
		t.Fatal(err)
	}
	writeParquet(t, filepath.Join(data, "d", "b.parquet"), qtyGroup, qtyRows(3, 0))
	if again, _ := cat.PathTable("d/*.parquet"); again != tb || tb.NumRows() != 2 {
		t.Fatalf("one view must keep its table (%d rows)", tb.NumRows())
	}
	snap, err := cat.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	tb, err = snap.PathTable("d/*.parquet")
	if err != nil || tb.NumRows() != 5 {
		t.Fatalf("new snapshot: %v rows %d, want 5", err, tb.NumRows())
	}
	os.Remove(filepath.Join(data, "d", "a.parquet"))
	snap, _ = cat.Snapshot()
	if tb, err = snap.PathTable("d/*.parquet"); err != nil || tb.NumRows() != 3 {
		t.Fatalf("after removal: %v", err)
	}
}

// Glob characters in the data directory's own path are not glob syntax.
func TestPathTablesDataDirWithGlobCharacters(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data[1]*")
	writeParquet(t, filepath.Join(data, "x.parquet"), qtyGroup, qtyRows(2, 0))
	writeParquet(t, filepath.Join(data, "d", "y.parquet"), qtyGroup, qtyRows(3, 0))
	cat, err := Open(data)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int64{"x.parquet": 2, "*.parquet": 2, "**/*.parquet": 5, "d/y.parquet": 3} {
		tb, err := cat.PathTable(name)
		if err != nil || tb.NumRows() != want {
			t.Errorf("%s: %v, want %d rows", name, err, want)
		}
	}
}
