package hive

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func schemaText(tb *Table) string {
	var out []string
	for _, f := range tb.Schema.Fields() {
		out = append(out, f.Name+" "+SQLTypeName(f.Type))
	}
	return strings.Join(out, ", ")
}

func allColumns(tb *Table) []string {
	var names []string
	for _, f := range tb.Schema.Fields() {
		names = append(names, f.Name)
	}
	return names
}

func TestCSVDetection(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "people", "a.csv"), "\ufeff"+
		"id,price,ratio,born,seen,at,ok,note,zip,empty,,id\r\n"+
		"1,1.50,1e3,2024-02-29,2024-01-02 03:04:05.5,12:00:00,true,\"hello, \"\"world\"\"\",007,,x,9\r\n"+
		"-2,2,0.25,1999-12-31,2024-01-02,23:59:59.999999,FALSE,\"two\nlines\",00501,,y,8\r\n"+
		",\\N,,,,,,\"\",\\N,,,\r\n")
	cat, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	tb := mustTable(t, cat, "people")
	if tb.Format != CSV {
		t.Fatalf("format %s", tb.Format)
	}
	want := "id BIGINT, price DECIMAL(38,2), ratio DOUBLE, born DATE, seen DATETIME, at TIME, ok BOOLEAN, note VARCHAR, zip VARCHAR, empty VARCHAR, column11 VARCHAR, id_2 BIGINT"
	if got := schemaText(tb); got != want {
		t.Fatalf("schema\n%s\nwant\n%s", got, want)
	}
	rows, err := scanStrings(t, tb, allColumns(tb)...)
	if err != nil {
		t.Fatal(err)
	}
	wantRows := []string{
		`1,1.50,1000,2024-02-29,2024-01-02T03:04:05.5,12:00:00.000000,true,hello, "world",007,(null),x,9`,
		"-2,2.00,0.25,1999-12-31,2024-01-02T00:00:00,23:59:59.999999,false,two\nlines,00501,(null),y,8",
		"(null),(null),(null),(null),(null),(null),(null),,(null),(null),(null),(null)",
	}
	if strings.Join(rows, "|") != strings.Join(wantRows, "|") {
		t.Fatalf("rows\n%q\nwant\n%q", rows, wantRows)
	}
	// COUNT(*) reads no column but still counts the records.
	rows, err = scanStrings(t, tb)
	if err != nil || len(rows) != 3 {
		t.Fatalf("count: %d rows, %v", len(rows), err)
	}
}

func TestCSVErrors(t *testing.T) {
	dir := t.TempDir()
	opts := DefaultOptions()
	opts.CSV.SampleRows = 2
	// Past the sample, a value its type does not hold.
	mustWrite(t, filepath.Join(dir, "late", "a.csv"), "n,s\n1,a\n2,b\nthree,c\n")
	// A record with one field too many.
	mustWrite(t, filepath.Join(dir, "wide", "a.csv"), "n,s\n1,a\n2,b,c\n")
	// A quote never closed.
	mustWrite(t, filepath.Join(dir, "open", "a.csv"), "n,s\n1,\"a\n2,b\n")
	// Text after a closing quote.
	mustWrite(t, filepath.Join(dir, "after", "a.csv"), "n,s\n1,\"a\"b\n")
	// CSV and Parquet in one table.
	mustWrite(t, filepath.Join(dir, "mixed", "a.csv"), "n\n1\n")
	writeParquet(t, filepath.Join(dir, "mixed", "b.parquet"), qtyGroup, qtyRows(1, 0))
	cat, err := OpenWith(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		table string
		want  []string
	}{
		{"late", []string{"a.csv line 4", "column n", `"three" is not a BIGINT`, "csv.sample-rows"}},
		{"wide", []string{"a.csv line 3", "3 fields", "has 2"}},
		{"open", []string{"a.csv line 2", "not closed"}},
		{"after", []string{"a.csv line 2", "follows a closing quote"}},
	} {
		// At planning (the sample saw it) or while reading.
		tb, err := cat.Table(tc.table)
		if err == nil {
			_, err = scanStrings(t, tb, allColumns(tb)...)
		}
		if !errors.Is(err, ErrCSV) {
			t.Errorf("%s: %v, want ErrCSV", tc.table, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not mention %q", tc.table, err, w)
			}
		}
	}
	_, err = cat.Table("mixed")
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "a.csv") || !strings.Contains(err.Error(), "b.parquet") {
		t.Errorf("mixed: %v", err)
	}
}

// The files of a CSV table are united by name; a column's type holds the
// samples of every file.
func TestCSVFilesByName(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "t", "k=1", "a.csv"), "id,v\n1,10\n2,20\n")
	mustWrite(t, filepath.Join(dir, "t", "k=2", "b.csv"), "extra,ID,v\nx,3,2.5\n")
	var gz bytes.Buffer
	z := gzip.NewWriter(&gz)
	z.Write([]byte("v,id\n4,4\n"))
	z.Close()
	mustWrite(t, filepath.Join(dir, "t", "k=3", "c.csv.gz"), gz.String())
	cat, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	tb := mustTable(t, cat, "t")
	if got, want := schemaText(tb), "id BIGINT, v DECIMAL(38,1), extra VARCHAR, k INT"; got != want {
		t.Fatalf("schema %s, want %s", got, want)
	}
	rows, err := scanStrings(t, tb, "k", "id", "v", "extra")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(rows, "|"), "1,1,10.0,(null)|1,2,20.0,(null)|2,3,2.5,x|3,4,4.0,(null)"; got != want {
		t.Fatalf("rows %s, want %s", got, want)
	}
}

func TestCSVOptions(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "t", "a.csv"), "1;NA;a\\;b\n2;x\\ty;\\N\n\n")
	opts := DefaultOptions()
	opts.CSV = CSVOptions{Delimiter: ';', Quote: 0, Escape: '\\', Header: false, NullLiteral: "NA", SampleRows: 0}
	cat, err := OpenWith(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	tb := mustTable(t, cat, "t")
	if got, want := schemaText(tb), "column1 BIGINT, column2 VARCHAR, column3 VARCHAR"; got != want {
		t.Fatalf("schema %s, want %s", got, want)
	}
	rows, err := scanStrings(t, tb, "column1", "column2", "column3")
	if err != nil {
		t.Fatal(err)
	}
	// \N is not NULL here (the null literal is NA): it unescapes to N.
	if got, want := strings.Join(rows, "|"), "1,(null),a;b|2,x\ty,N"; got != want {
		t.Fatalf("rows %q, want %q", got, want)
	}
	for _, bad := range []CSVOptions{{Delimiter: '\n', Quote: '"'}, {Delimiter: ',', Quote: ','}, {Delimiter: ',', SampleRows: -1}} {
		if _, err := OpenWith(dir, Options{CSV: bad}); err == nil {
			t.Errorf("options %+v accepted", bad)
		}
	}
}

// An empty line is a NULL in a one-column file (fsql's CSV output writes
// a NULL so) and skipped in others.
func TestCSVBlankLines(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "one", "a.csv"), "v\na\n\nb\n")
	mustWrite(t, filepath.Join(dir, "two", "a.csv"), "v,w\na,1\n\nb,2\n")
	cat, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := scanStrings(t, mustTable(t, cat, "one"), "v")
	if err != nil || strings.Join(rows, "|") != "a|(null)|b" {
		t.Fatalf("one column: %q %v", rows, err)
	}
	rows, err = scanStrings(t, mustTable(t, cat, "two"), "v", "w")
	if err != nil || strings.Join(rows, "|") != "a,1|b,2" {
		t.Fatalf("two columns: %q %v", rows, err)
	}
}

// A CSV table follows the freshness rule: a rewritten file is detected
// again by the next snapshot, and one rewritten under a running query
// fails it.
func TestCSVFreshness(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t", "a.csv")
	mustWrite(t, path, "v\n1\n2\n")
	cat, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	tb := mustTable(t, cat, "t")
	mustWrite(t, path, "v\nx\ny\nz\n")
	os.Chtimes(path, time.Now(), time.Now().Add(time.Second))
	if _, err := scanStrings(t, tb, "v"); !errors.Is(err, ErrChanged) {
		t.Fatalf("old snapshot: %v, want ErrChanged", err)
	}
	snap, err := cat.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	tb = mustTable(t, snap, "t")
	rows, err := scanStrings(t, tb, "v")
	if err != nil || strings.Join(rows, ",") != "x,y,z" || schemaText(tb) != "v VARCHAR" {
		t.Fatalf("new snapshot: %s %q %v", schemaText(tb), rows, err)
	}
}

// The tokenizer on its own: fields, quoting and NULLs.
func TestCSVTokenizer(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string // one record per entry, fields joined by |; NULL is <nil>
	}{
		{"a,b,c\n", []string{"a|b|c"}},
		{"a,,\"\"\n", []string{"a|<nil>|"}},
		{"\"a,b\",\"c\"\"d\"\r\nx,y", []string{"a,b|c\"d", "x|y"}},
		{"\"multi\nline\",2\n3,4\n", []string{"multi\nline|2", "3|4"}},
		{"\\N,\"\\N\"\n", []string{"<nil>|\\N"}},
		{"a\"b,c\n", []string{"a\"b|c"}},
		{"a,\n", []string{"a|<nil>"}},
	} {
		dir := t.TempDir()
		path := filepath.Join(dir, "x.csv")
		mustWrite(t, path, tc.in)
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		opts := DefaultCSVOptions()
		tok, err := newCSVTokenizer(f, path, &opts, 1)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for {
			ok, err := tok.next()
			if err != nil {
				t.Fatalf("%q: %v", tc.in, err)
			}
			if !ok {
				break
			}
			var fields []string
			for i := range tok.numFields() {
				if tok.isNull(i) {
					fields = append(fields, "<nil>")
				} else {
					fields = append(fields, string(tok.field(i)))
				}
			}
			got = append(got, strings.Join(fields, "|"))
		}
		f.Close()
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("%q: got %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestCSVValues(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want string // the detected type of a column holding only v
	}{
		{"0", "BIGINT"}, {"-12", "BIGINT"}, {"+7", "BIGINT"}, {"9223372036854775807", "BIGINT"},
		{"9223372036854775808", "DECIMAL(38,0)"}, {"1.5", "DECIMAL(38,1)"}, {".5", "DECIMAL(38,1)"}, {"-0.125", "DECIMAL(38,3)"},
		{"1e5", "DOUBLE"}, {"1.5E-3", "DOUBLE"}, {strings.Repeat("9", 40), "DOUBLE"},
		{"007", "VARCHAR"}, {"00.5", "VARCHAR"}, {"1_000", "VARCHAR"}, {"inf", "VARCHAR"}, {"NaN", "VARCHAR"}, {"0x10", "VARCHAR"},
		{"True", "BOOLEAN"}, {"2024-02-29", "DATE"}, {"2023-02-29", "VARCHAR"}, {"2024-13-01", "VARCHAR"},
		{"2024-01-02T03:04:05", "DATETIME"}, {"2024-01-02 03:04:05.123456", "DATETIME"}, {"2024-01-02 03:04:05.1234567", "VARCHAR"},
		{"23:59:59", "TIME"}, {"24:00:00", "VARCHAR"}, {" 1", "VARCHAR"},
	} {
		s := csvState{cand: allCandidates}
		s.observe([]byte(tc.v))
		if got := SQLTypeName(s.typ()); got != tc.want {
			t.Errorf("%q: %s, want %s", tc.v, got, tc.want)
		}
	}
	if d, ok := parseDateBytes([]byte("1970-01-01")); !ok || d != 0 {
		t.Errorf("epoch: %d %v", d, ok)
	}
	if d, _ := parseDateBytes([]byte("2000-03-01")); d != 11017 {
		t.Errorf("2000-03-01: %d, want 11017", d)
	}
	if d, _ := parseDateBytes([]byte("1900-01-01")); d != -25567 {
		t.Errorf("1900-01-01: %d, want -25567", d)
	}
}
