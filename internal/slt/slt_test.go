package slt

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

const sample = `# a comment
table t (a int, b bigint, c decimal(7,2), d varchar, e date, f double, g boolean)
1	10	1.50	x	2000-01-01	1.5	true
NULL	NULL	NULL	NULL	NULL	NULL	NULL
-3	-30	-0.05	(empty)	1969-12-31	-2	false
----

partitioned table p (k int, v varchar) by (k)
1	a
2	b
1	c
NULL	d

query ITR rowsort
SELECT a, d, c
FROM t
----
1	x	1.50
NULL	NULL	NULL

query I
select count(*) from t
----

statement error more than one row
select (select a from t)

statement ok
select 1
`

func TestParse(t *testing.T) {
	f, err := Parse("sample.slt", strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Records) != 6 {
		t.Fatalf("%d records, want 6", len(f.Records))
	}
	tab := f.Records[0].Table
	if tab.Name != "t" || len(tab.Columns) != 7 || len(tab.Rows) != 3 {
		t.Errorf("table t parsed as %+v", tab)
	}
	if c := tab.Columns[2]; c.Type != Decimal || c.Precision != 7 || c.Scale != 2 {
		t.Errorf("column c = %+v", c)
	}
	if p := f.Records[1].Table; p.Name != "p" || len(p.PartitionBy) != 1 || p.PartitionBy[0] != "k" || len(p.Rows) != 4 {
		t.Errorf("table p parsed as %+v", p)
	}
	q := f.Records[2]
	if q.Kind != KindQuery || q.Types != "ITR" || !q.RowSort || q.SQL != "SELECT a, d, c\nFROM t" || len(q.Expect) != 2 || q.Line != 14 {
		t.Errorf("query parsed as %+v", q)
	}
	if q := f.Records[3]; q.Kind != KindQuery || q.RowSort || len(q.Expect) != 0 {
		t.Errorf("empty query parsed as %+v", q)
	}
	if s := f.Records[4]; s.Kind != KindStatementError || s.Error != "more than one row" || s.SQL != "select (select a from t)" {
		t.Errorf("statement error parsed as %+v", s)
	}
	if s := f.Records[5]; s.Kind != KindStatementOK || s.SQL != "select 1" {
		t.Errorf("statement ok parsed as %+v", s)
	}
	if len(f.Tables()) != 2 {
		t.Errorf("Tables() = %d tables", len(f.Tables()))
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"table t (a int)\n1\t2\n", "sample.slt:1: row 1 of table t has 2 tab-separated values, want 1"},
		{"table t (a int)\nx\n", "column a: bad value \"x\": want a 32-bit integer"},
		{"table t (a decimal(3,1))\n1.25\n", "want a decimal(3,1)"},
		{"table t (a decimal(30,1))\n", "bad decimal type"},
		{"table t (a blob)\n", "unknown type blob"},
		{"partitioned table t (a int) by (a)\n", "at least one column"},
		{"partitioned table t (a int, b int) by (c)\n", "partition column c"},
		{"table t (a int)\n\ntable T (b int)\n", "declared twice"},
		{"query X\nselect 1\n----\n", "unknown column type letter"},
		{"query I\nselect 1\n", "sample.slt:1: query needs a ---- line"},
		{"query I sorted\nselect 1\n----\n", "unknown sort mode"},
		{"statement maybe\nselect 1\n", "want statement ok"},
		{"\n\nselect 1\n", "sample.slt:3: want table"},
	} {
		_, err := Parse("sample.slt", strings.NewReader(c.text))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q) error = %v, want it to contain %q", c.text, err, c.want)
		}
	}
}

func TestRewrite(t *testing.T) {
	f, err := Parse("sample.slt", strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	out := f.Rewrite(map[*Record]Result{
		f.Records[2]: {Types: "ITT", Lines: []string{"1\tx\t1.50"}},
		f.Records[3]: {Types: "I", Lines: []string{"3"}},
	})
	want := strings.Replace(sample, "query ITR rowsort", "query ITT rowsort", 1)
	want = strings.Replace(want, "1\tx\t1.50\nNULL\tNULL\tNULL\n", "1\tx\t1.50\n", 1)
	want = strings.Replace(want, "select count(*) from t\n----\n", "select count(*) from t\n----\n3\n", 1)
	if string(out) != want {
		t.Errorf("rewrite:\n%s\nwant:\n%s", out, want)
	}
	if string(f.Rewrite(nil)) != sample {
		t.Error("rewrite without results changed the file")
	}
}

// readBack reads every row of a Parquet file written by WriteTables.
func readBack(t *testing.T, path string) (*parquet.Schema, []parquet.Row) {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	st, _ := fh.Stat()
	pf, err := parquet.OpenFile(fh, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	var rows []parquet.Row
	for _, rg := range pf.RowGroups() {
		r := rg.Rows()
		buf := make([]parquet.Row, 16)
		for {
			n, err := r.ReadRows(buf)
			for _, row := range buf[:n] {
				rows = append(rows, row.Clone())
			}
			if err != nil {
				break
			}
		}
		r.Close()
	}
	return pf.Schema(), rows
}

func TestWriteTables(t *testing.T) {
	f, err := Parse("sample.slt", strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := WriteTables(dir, f.Tables()); err != nil {
		t.Fatal(err)
	}

	schema, rows := readBack(t, filepath.Join(dir, "t", "part-0.parquet"))
	var names []string
	for _, col := range schema.Columns() {
		names = append(names, col[0])
	}
	if got := strings.Join(names, ","); got != "a,b,c,d,e,f,g" {
		t.Errorf("column order %s, want declaration order", got)
	}
	if !strings.Contains(schema.String(), "DECIMAL(7,2)") {
		t.Errorf("column c is not a decimal:\n%s", schema)
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows, want 3", len(rows))
	}
	r0 := rows[0]
	if r0[0].Int32() != 1 || r0[1].Int64() != 10 || r0[2].Int32() != 150 || string(r0[3].ByteArray()) != "x" ||
		r0[4].Int32() != 10957 || r0[5].Double() != 1.5 || !r0[6].Boolean() {
		t.Errorf("row 0 = %v", r0)
	}
	for i, v := range rows[1] {
		if !v.IsNull() {
			t.Errorf("row 1 column %d = %v, want NULL", i, v)
		}
	}
	r2 := rows[2]
	if r2[2].Int32() != -5 || r2[3].IsNull() || len(r2[3].ByteArray()) != 0 || r2[4].Int32() != -1 || r2[6].Boolean() {
		t.Errorf("row 2 = %v", r2)
	}

	// The partitioned table: one folder per key, NULL in Hive's default
	// folder, and the key column left out of the files.
	for folder, want := range map[string][]string{"k=1": {"a", "c"}, "k=2": {"b"}, "k=" + NullPartition: {"d"}} {
		schema, rows := readBack(t, filepath.Join(dir, "p", folder, "part-0.parquet"))
		if len(schema.Columns()) != 1 || schema.Columns()[0][0] != "v" {
			t.Errorf("%s: columns %v, want just v", folder, schema.Columns())
		}
		var got []string
		for _, r := range rows {
			got = append(got, string(r[0].ByteArray()))
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s: rows %v, want %v", folder, got, want)
		}
	}
}

func TestParseDecimal(t *testing.T) {
	for _, c := range []struct {
		v    string
		p, s int
		want int64
		ok   bool
	}{{"1.5", 7, 2, 150, true}, {"-0.05", 7, 2, -5, true}, {"3", 3, 0, 3, true}, {".5", 2, 1, 5, true},
		{"1.234", 7, 2, 0, false}, {"1000", 4, 1, 0, false}, {"1e3", 7, 2, 0, false}, {"-", 3, 1, 0, false}} {
		got, ok := parseDecimal(c.v, c.p, c.s)
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("parseDecimal(%q, %d, %d) = %d, %v; want %d, %v", c.v, c.p, c.s, got, ok, c.want, c.ok)
		}
	}
}

// TestTestdataFiles parses the repository's .slt files and writes their
// tables, so a typo in a file fails here, with a line number, rather than
// as a puzzling engine error. It also checks that every expected row has
// one value per type letter.
func TestTestdataFiles(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "..", "testdata", "slt", "*.slt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no testdata/slt/*.slt files")
	}
	for _, path := range paths {
		f, err := ParseFile(path)
		if err != nil {
			t.Error(err)
			continue
		}
		if err := WriteTables(t.TempDir(), f.Tables()); err != nil {
			t.Errorf("%s: %v", path, err)
		}
		for _, r := range f.Records {
			if r.Kind != KindQuery {
				continue
			}
			for i, line := range r.Expect {
				if n := len(strings.Split(line, "\t")); n != len(r.Types) {
					t.Errorf("%s:%d: expected row %d has %d values, the query declares %d types (%s)", path, r.Line, i+1, n, len(r.Types), r.Types)
				}
			}
			if r.RowSort {
				for i := 1; i < len(r.Expect); i++ {
					if r.Expect[i-1] > r.Expect[i] {
						t.Errorf("%s:%d: rowsort query's expected rows are not sorted (%q before %q)", path, r.Line, r.Expect[i-1], r.Expect[i])
					}
				}
			}
		}
	}
}
