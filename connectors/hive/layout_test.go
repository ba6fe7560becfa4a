package hive

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
)

// scanQty reads column 0 (qty) of every file of tb and returns the row
// count and the sum, or the first error a reader returns.
func scanQty(tb *Table) (rows, sum int64, err error) {
	for _, p := range tb.Partitions {
		for _, f := range p.Files {
			r, err := tb.OpenFile(p, f, ScanOptions{Columns: []int{0}})
			if err != nil {
				return rows, sum, err
			}
			for {
				rec, err := r.Next(context.Background())
				if err == io.EOF {
					break
				}
				if err != nil {
					r.Close()
					return rows, sum, err
				}
				col := rec.Column(0).(*array.Int32)
				for i := 0; i < col.Len(); i++ {
					sum += int64(col.Value(i))
				}
				rows += rec.NumRows()
				rec.Release()
			}
			r.Close()
		}
	}
	return rows, sum, nil
}

func mustTable(t *testing.T, c *Catalog, name string) *Table {
	t.Helper()
	tb, err := c.Table(name)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func mustWrite(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustLink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// wantErr checks that err wraps is and mentions every string of want and
// none of avoid.
func wantErr(t *testing.T, what string, err, is error, want []string, avoid ...string) {
	t.Helper()
	if err == nil || !errors.Is(err, is) {
		t.Errorf("%s: got error %v, want %v", what, err, is)
		return
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: error %q does not mention %q", what, err, w)
		}
	}
	for _, a := range avoid {
		if strings.Contains(err.Error(), a) {
			t.Errorf("%s: error %q quotes %q", what, err, a)
		}
	}
}

// Data files are known by content, not by name: Hive writes 000000_0,
// Spark part-00000-<uuid>-c000 without an extension. Only hidden and
// marker names are passed over.
func TestDataFilesByContent(t *testing.T) {
	dir := t.TempDir()
	tbl := filepath.Join(dir, "events")
	writeParquet(t, filepath.Join(tbl, "000000_0"), qtyGroup, qtyRows(3, 0))
	writeParquet(t, filepath.Join(tbl, "000001_0"), qtyGroup, qtyRows(4, 10))
	writeParquet(t, filepath.Join(tbl, "part-00000-5b8c1f2e-91d1-4cbb-a7a7-0d5b7c1e4f11-c000"), qtyGroup, qtyRows(5, 100))
	writeParquet(t, filepath.Join(tbl, "part-00001.snappy.parquet"), qtyGroup, qtyRows(6, 1000))
	// What writers leave beside the data, none of it Parquet.
	for _, junk := range []string{"_SUCCESS", "_committed_123", ".000000_0.crc", "part-00001.crc", ".DS_Store",
		"000002_0._COPYING_", "_temporary/0/_temporary/attempt_1/part-0", ".hive-staging_hive_2024/-ext-10000/000000_0"} {
		mustWrite(t, filepath.Join(tbl, filepath.FromSlash(junk)), "not parquet")
	}
	cat, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	tb := mustTable(t, cat, "events")
	var names []string
	for _, f := range tb.Partitions[0].Files {
		names = append(names, filepath.Base(f.Path))
	}
	if got, want := strings.Join(names, " "), "000000_0 000001_0 part-00000-5b8c1f2e-91d1-4cbb-a7a7-0d5b7c1e4f11-c000 part-00001.snappy.parquet"; got != want {
		t.Fatalf("files %s, want %s", got, want)
	}
	rows, sum, err := scanQty(tb)
	if err != nil || rows != 18 || sum != 3+4*10+6+5*100+10+6*1000+15 {
		t.Fatalf("read %d rows summing to %d (%v), want 18 rows", rows, sum, err)
	}
	if tb.NumRows() != 18 {
		t.Fatalf("NumRows %d", tb.NumRows())
	}
}

// A file in a table folder that is not Parquet stops the table with an
// error naming it, whatever its name; its bytes are never quoted.
func TestNonParquetFileIsAnError(t *testing.T) {
	dir := t.TempDir()
	const secret = "card,4111111111111111"
	for _, c := range []struct{ table, file, text string }{
		{"csv_named_parquet", "part-00001.parquet", secret + "\n"},
		{"notes", "README.txt", secret},
		{"empty_file", "000001_0", ""},
		{"starts_right", "000001_0", "PAR1" + secret},
	} {
		writeParquet(t, filepath.Join(dir, c.table, "000000_0"), qtyGroup, qtyRows(3, 0))
		mustWrite(t, filepath.Join(dir, c.table, c.file), c.text)
	}
	mustWrite(t, filepath.Join(dir, "encrypted", "part-0"), "PAR1"+secret+"PARE")
	cat, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ table, file string }{
		{"csv_named_parquet", "part-00001.parquet"}, {"notes", "README.txt"}, {"empty_file", "000001_0"}, {"starts_right", "000001_0"},
	} {
		_, err := cat.Table(c.table)
		wantErr(t, c.table, err, ErrNotParquet, []string{filepath.Join(dir, c.table, c.file), "not a Parquet file"}, "4111", "card")
	}
	_, err = cat.Table("encrypted")
	wantErr(t, "encrypted", err, ErrUnsupported, []string{"part-0", "encrypted"}, "4111")
}

// A stray file beside partition folders is named, not skipped.
func TestFileBesidePartitionFolders(t *testing.T) {
	dir := t.TempDir()
	writeParquet(t, filepath.Join(dir, "t", "y=1", "a"), qtyGroup, qtyRows(3, 0))
	mustWrite(t, filepath.Join(dir, "t", "notes.md"), "hello")
	cat, _ := Open(dir)
	_, err := cat.Table("t")
	wantErr(t, "t", err, ErrCorrupt, []string{"notes.md", "y=1"}, "hello")
}

// Symlinked table, partition and file links are followed while they stay
// inside the data directory; links out of it, broken links and cycles are
// errors naming the link, and they spoil only their own table.
func TestSymlinks(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "data")
	outside := filepath.Join(base, "elsewhere")
	writeParquet(t, filepath.Join(outside, "t", "y=9", "a.parquet"), qtyGroup, qtyRows(2, 0))

	writeParquet(t, filepath.Join(dir, "sales", "y=1", "a.parquet"), qtyGroup, qtyRows(3, 0))
	writeParquet(t, filepath.Join(dir, "sales", "y=2", "a.parquet"), qtyGroup, qtyRows(4, 0))
	// A table folder that is a link to another table.
	mustLink(t, "sales", filepath.Join(dir, "sales_alias"))
	// A table whose partitions are links into another table's folders,
	// relative and absolute, and whose files are links too.
	os.MkdirAll(filepath.Join(dir, "assembled", "y=3"), 0o755)
	mustLink(t, "../sales/y=1", filepath.Join(dir, "assembled", "y=1"))
	mustLink(t, filepath.Join(dir, "sales", "y=2"), filepath.Join(dir, "assembled", "y=2"))
	mustLink(t, "../../sales/y=1/a.parquet", filepath.Join(dir, "assembled", "y=3", "linked"))
	// Links that leave the data directory.
	mustLink(t, filepath.Join(outside, "t"), filepath.Join(dir, "out_table"))
	os.MkdirAll(filepath.Join(dir, "out_part"), 0o755)
	mustLink(t, filepath.Join(outside, "t", "y=9"), filepath.Join(dir, "out_part", "y=9"))
	writeParquet(t, filepath.Join(dir, "out_file", "a.parquet"), qtyGroup, qtyRows(1, 0))
	mustLink(t, filepath.Join(outside, "t", "y=9", "a.parquet"), filepath.Join(dir, "out_file", "b.parquet"))
	// A link back up the table: a cycle.
	writeParquet(t, filepath.Join(dir, "loop", "y=1", "z=1", "a.parquet"), qtyGroup, qtyRows(1, 0))
	mustLink(t, "..", filepath.Join(dir, "loop", "y=1", "z=2"))
	// A link to nothing.
	writeParquet(t, filepath.Join(dir, "broken", "a.parquet"), qtyGroup, qtyRows(1, 0))
	mustLink(t, "gone.parquet", filepath.Join(dir, "broken", "b.parquet"))
	mustLink(t, "no_such_folder", filepath.Join(dir, "broken_table"))

	// Through a link to the data directory itself, the same holds.
	mustLink(t, dir, filepath.Join(base, "data_link"))
	for _, d := range []string{dir, filepath.Join(base, "data_link")} {
		cat, err := Open(d)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(cat.TableNames(), ","); got != "assembled,broken,broken_table,loop,out_file,out_part,out_table,sales,sales_alias" {
			t.Fatalf("tables %s", got)
		}
		for _, c := range []struct {
			table      string
			rows, sum  int64
			partitions int
		}{{"sales", 7, 9, 2}, {"sales_alias", 7, 9, 2}, {"assembled", 10, 12, 3}} {
			tb := mustTable(t, cat, c.table)
			rows, sum, err := scanQty(tb)
			if err != nil || rows != c.rows || sum != c.sum || len(tb.Partitions) != c.partitions {
				t.Errorf("%s via %s: %d rows summing to %d in %d partitions (%v), want %d, %d, %d", c.table, d, rows, sum, len(tb.Partitions), err, c.rows, c.sum, c.partitions)
			}
			// Paths keep the names as spelled under the table folder.
			for _, p := range tb.Partitions {
				if !strings.HasPrefix(p.Dir, filepath.Join(d, c.table)) {
					t.Errorf("%s: partition folder %s is not under the table folder", c.table, p.Dir)
				}
			}
		}
		for _, c := range []struct {
			table string
			want  []string
		}{
			{"out_table", []string{"out_table", "outside the data directory"}},
			{"out_part", []string{filepath.Join("out_part", "y=9"), "outside the data directory"}},
			{"out_file", []string{filepath.Join("out_file", "b.parquet"), "outside the data directory"}},
			{"loop", []string{"z=2", "cycle"}},
			{"broken", []string{filepath.Join("broken", "b.parquet")}},
			{"broken_table", []string{"broken_table"}},
		} {
			_, err := cat.Table(c.table)
			wantErr(t, c.table+" via "+d, err, ErrCorrupt, c.want)
		}
	}
}
