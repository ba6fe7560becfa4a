package fsql_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/fsql-dev/fsql"
	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec"
)

// writeGroup writes rows (values in the group's column order, which sorts
// by name; nil is NULL) as a Parquet file.
func writeGroup(t *testing.T, path string, group parquet.Group, rows ...[]any) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := parquet.NewWriter(f, parquet.NewSchema("t", group))
	b := parquet.NewRowBuilder(group)
	for _, r := range rows {
		b.Reset()
		for c, v := range r {
			switch v := v.(type) {
			case nil:
			case int32:
				b.Add(c, parquet.Int32Value(v))
			case int64:
				b.Add(c, parquet.Int64Value(v))
			case float64:
				b.Add(c, parquet.DoubleValue(v))
			case string:
				b.Add(c, parquet.ByteArrayValue([]byte(v)))
			default:
				t.Fatalf("no Parquet value for %T", v)
			}
		}
		if _, err := w.WriteRows([]parquet.Row{b.Row()}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func writeText(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// userData writes the data directory of the tests below.
func userData(t *testing.T) string {
	dir := t.TempDir()
	qty := parquet.Group{"id": parquet.Int(32), "qty": parquet.Optional(parquet.Int(64))}
	writeGroup(t, filepath.Join(dir, "files", "one.parquet"), qty, []any{int32(1), int64(10)}, []any{int32(2), nil}, []any{int32(3), int64(30)})
	writeGroup(t, filepath.Join(dir, "events", "year=2023", "month=12", "part-0.parquet"), qty, []any{int32(1), int64(1)})
	writeGroup(t, filepath.Join(dir, "events", "year=2024", "month=1", "part-0.parquet"), qty, []any{int32(2), int64(2)}, []any{int32(3), int64(3)})
	writeGroup(t, filepath.Join(dir, "events", "year=2024", "month=2", "part-0.parquet"), qty, []any{int32(4), int64(4)})
	writeText(t, filepath.Join(dir, "events", "year=2024", "_SUCCESS"), "")
	writeText(t, filepath.Join(dir, "exports", "users.csv"), "id,name,joined,score\n1,ann,2024-01-05,1.5\n2,bob,2024-02-01,\n3,ann,,2.25\n")
	writeText(t, filepath.Join(dir, "exports", "more.csv"), "name,id\ncy,4\n")
	// Schema evolution: BIGINT and DECIMAL(9,3) in the second file, a new
	// column, and columns matched by name in another order.
	writeGroup(t, filepath.Join(dir, "evolved", "a.parquet"), parquet.Group{
		"id": parquet.Int(32), "price": parquet.Decimal(2, 7, parquet.Int32Type),
	}, []any{int32(1), int32(150)}, []any{int32(2), int32(275)})
	writeGroup(t, filepath.Join(dir, "evolved", "b.parquet"), parquet.Group{
		"id": parquet.Int(64), "note": parquet.Optional(parquet.String()), "price": parquet.Decimal(3, 10, parquet.Int64Type),
	}, []any{int64(3), "new", int64(1001)})
	// Files that disagree on a column's type.
	writeGroup(t, filepath.Join(dir, "conflict", "a.parquet"), parquet.Group{"id": parquet.Int(32), "v": parquet.Int(32)}, []any{int32(1), int32(5)})
	writeGroup(t, filepath.Join(dir, "conflict", "b.parquet"), parquet.Group{"id": parquet.Int(32), "v": parquet.String()}, []any{int32(2), "x"})
	// A nested column beside flat ones.
	writeGroup(t, filepath.Join(dir, "nested", "a.parquet"), parquet.Group{
		"id": parquet.Int(32), "tags": parquet.Optional(parquet.List(parquet.String())), "u": parquet.Uint(32),
	}, []any{int32(1), nil, int32(-1)})
	return dir
}

func TestPathTablesSQL(t *testing.T) {
	noLeaks(t)
	dir := userData(t)
	eng, err := fsql.Open(dir, fsql.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		sql  string
		want []string
	}{
		{"select count(*), sum(qty) from `files/one.parquet`", []string{"3\t40"}},
		{"select f.id from `files/one.parquet` f where f.qty is null", []string{"2"}},
		{"select `files/one.parquet`.id from `files/one.parquet` order by 1 desc limit 1", []string{"3"}},
		// A glob: ** is recursive, key=value folders are partition columns
		// (and prune), marker files are skipped.
		{"select year, month, sum(qty) from `events/**/*.parquet` group by year, month order by year, month",
			[]string{"2023\t12\t1", "2024\t1\t5", "2024\t2\t4"}},
		{"select count(*) from `events/**/*.parquet` where year = 2024 and month > 1", []string{"1"}},
		{"select count(*) from `events/year=2024/*/*.parquet`", []string{"3"}},
		// CSV with types detected, one file or a folder of them (united by name).
		{"select name, count(*), sum(score) from `exports/users.csv` group by name order by name", []string{"ann\t2\t3.75", "bob\t1\tNULL"}},
		{"select count(*) from `exports/users.csv` where joined >= date '2024-02-01'", []string{"1"}},
		{"select name, id, joined from exports where id > 2 order by id", []string{"ann\t3\tNULL", "cy\t4\tNULL"}},
		{"select count(*) from `exports/*.csv`", []string{"4"}},
		// Schema evolution.
		{"select id, price, note from evolved order by id", []string{"1\t1.500\tNULL", "2\t2.750\tNULL", "3\t1.001\tnew"}},
		{"select sum(price), max(id) from evolved", []string{"5.251\t3"}},
		// A conflicting column fails only the queries reading it.
		{"select count(*), sum(id) from conflict", []string{"2\t3"}},
		// A nested column fails only the queries reading it; UINT_32 reads as BIGINT.
		{"select id, u + 1 from nested", []string{"1\t4294967296"}},
		// A column REQUIRED in every file is NOT NULL; one OPTIONAL or
		// missing from a file, a CSV column and a partition column are not.
		{"describe `files/one.parquet`", []string{"id\tint\tNO\t(empty)\tNULL\t(empty)", "qty\tbigint\tYES\t(empty)\tNULL\t(empty)"}},
		{"describe `events/**/*.parquet`", []string{"id\tint\tNO\t(empty)\tNULL\t(empty)", "qty\tbigint\tYES\t(empty)\tNULL\t(empty)",
			"year\tint\tYES\tPART\tNULL\t(empty)", "month\tint\tYES\tPART\tNULL\t(empty)"}},
		{"describe exports", []string{"name\tlongtext\tYES\t(empty)\tNULL\t(empty)", "id\tbigint\tYES\t(empty)\tNULL\t(empty)",
			"joined\tdate\tYES\t(empty)\tNULL\t(empty)", "score\tdecimal(38,2)\tYES\t(empty)\tNULL\t(empty)"}},
		{"show create table evolved", []string{"evolved\tCREATE TABLE `evolved` (`id` bigint NOT NULL, `price` decimal(10,3) NOT NULL, `note` longtext)"}},
		// NOT NULL columns still meet NULLs: outer joins, UNION, ROLLUP.
		{"select f.id, e.id from `files/one.parquet` f left join evolved e on e.id = f.id + 1 order by f.id", []string{"1\t2", "2\t3", "3\tNULL"}},
		{"select count(*) from `files/one.parquet` f left join evolved e on e.id = f.id + 5 where e.id is null", []string{"3"}},
		{"select id from evolved where id = 3 union all select null order by 1", []string{"NULL", "3"}},
		{"select id, count(*) from evolved group by id with rollup order by id", []string{"NULL\t3", "1\t1", "2\t1", "3\t1"}},
	} {
		_, rows, err := query(eng, tc.sql)
		if err != nil {
			t.Errorf("%s: %v", tc.sql, err)
			continue
		}
		if strings.Join(rows, "|") != strings.Join(tc.want, "|") {
			t.Errorf("%s:\n got %q\nwant %q", tc.sql, rows, tc.want)
		}
	}

	for _, tc := range []struct {
		sql  string
		is   error
		want []string
	}{
		{"select v from conflict", fsql.ErrIO, []string{"column v", "a.parquet", "b.parquet", "INT", "VARCHAR"}},
		{"select * from conflict", fsql.ErrIO, []string{"column v"}},
		{"select tags from nested", fsql.ErrUnsupported, []string{"column tags", "LIST", "leave it out of the query"}},
		{"select * from nested", fsql.ErrUnsupported, []string{"column tags"}},
		{"select * from `files/nope.parquet`", errs.ErNoSuchTable, []string{"no file or folder files/nope.parquet"}},
		{"select * from `../outside.parquet`", exec.ErrPlan, []string{"leads out of the data directory"}},
		{"select * from `" + filepath.Join(dir, "files", "one.parquet") + "`", exec.ErrPlan, []string{"absolute path", "command line allows"}},
	} {
		_, _, err := query(eng, tc.sql)
		if !errors.Is(err, tc.is) {
			t.Errorf("%s: %v, want %v", tc.sql, err, tc.is)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not mention %q", tc.sql, err, w)
			}
		}
	}
}

// Absolute paths work once the engine allows them (the command line does).
func TestPathTablesOutsideDataDir(t *testing.T) {
	noLeaks(t)
	dir := userData(t)
	cfg := fsql.DefaultConfig()
	if err := cfg.Set("path-tables.outside-data-dir", "true"); err != nil {
		t.Fatal(err)
	}
	eng, err := fsql.Open(t.TempDir(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, rows, err := query(eng, "select count(*) from `"+filepath.Join(dir, "events")+"/**/*.parquet`")
	if err != nil || strings.Join(rows, "|") != "4" {
		t.Fatalf("absolute glob: %q %v", rows, err)
	}
}

// CSV settings reach the reader; a path table sees a file added at the
// next query, like any table.
func TestCSVSettingsAndFreshness(t *testing.T) {
	noLeaks(t)
	dir := t.TempDir()
	writeText(t, filepath.Join(dir, "in", "a.csv"), "1;NA\n2;x\n")
	cfg := fsql.DefaultConfig()
	for k, v := range map[string]string{"csv.field-delimiter": ";", "csv.header": "false", "csv.null-literal": "NA"} {
		if err := cfg.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	eng, err := fsql.Open(dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, rows, err := query(eng, "select column1, column2 from `in/*.csv` order by column1")
	if err != nil || strings.Join(rows, "|") != "1\tNULL|2\tx" {
		t.Fatalf("settings: %q %v", rows, err)
	}
	writeText(t, filepath.Join(dir, "in", "b.csv"), "3;y\n")
	_, rows, err = query(eng, "select count(*) from `in/*.csv`")
	if err != nil || strings.Join(rows, "|") != "3" {
		t.Fatalf("after adding a file: %q %v", rows, err)
	}
	if err := cfg.Set("csv.field-delimiter", "ab"); err == nil {
		t.Fatal("a two-character delimiter was accepted")
	}
}

// A CSV file bigger than csv.split-size is read in byte ranges by several
// tasks, and every query gives the answer of the file read whole, also
// with line breaks inside quoted fields and a LIMIT.
func TestCSVByteRangesSQL(t *testing.T) {
	noLeaks(t)
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("id,name,note,amount\n")
	for i := range 3000 {
		note := fmt.Sprintf("\"line %d\nof \"\"note\"\", with a comma\"", i)
		if i%3 == 0 {
			note = "plain"
		}
		fmt.Fprintf(&b, "%d,n%d,%s,%d.%02d\r\n", i, i%17, note, i%100, i%7)
	}
	writeText(t, filepath.Join(dir, "big.csv"), b.String())
	open := func(split string) *fsql.Engine {
		cfg := fsql.DefaultConfig()
		for k, v := range map[string]string{"csv.split-size": split, "parallelism.default": "4", "execution.batch.adaptive.auto-parallelism.enabled": "false"} {
			if err := cfg.Set(k, v); err != nil {
				t.Fatal(err)
			}
		}
		eng, err := fsql.Open(dir, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return eng
	}
	whole, ranged := open("0"), open("4kb")
	for _, q := range []string{
		"select count(*), sum(id), sum(amount), count(distinct note) from `big.csv`",
		"select name, count(*), min(note), max(id) from `big.csv` group by name order by name",
		"select id, note from `big.csv` where note like '%999%' order by id",
		"select * from `big.csv` order by id desc limit 3",
	} {
		_, want, err := query(whole, q)
		if err != nil {
			t.Fatalf("%s: whole: %v", q, err)
		}
		_, got, err := query(ranged, q)
		if err != nil || strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("%s: in ranges\n%q, %v\nwant\n%q", q, got, err, want)
		}
	}
	// Every row of a LIMIT without ORDER BY is a record of the file.
	_, got, err := query(ranged, "select id, note from `big.csv` limit 50")
	if err != nil || len(got) != 50 {
		t.Fatalf("limit: %d rows, %v", len(got), err)
	}
	for _, r := range got {
		if !strings.HasPrefix(strings.SplitN(r, "\t", 2)[1], "line ") && !strings.HasSuffix(r, "plain") {
			t.Fatalf("limit: row %q is not a record of the file", r)
		}
	}
	// The ranges are splits of their own, read by several tasks.
	rows, err := ranged.Query(t.Context(), "select count(*) from `big.csv`")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
	}
	st := rows.ScanStats()
	rows.Close()
	if st.RowGroupsKept < 10 || st.RowGroupsKept != st.RowGroupsTotal {
		t.Fatalf("scan stats %+v, want every one of the file's ranges", st)
	}
	_, plan, err := query(ranged, "explain analyze select count(*) from `big.csv`")
	if err != nil {
		t.Fatal(err)
	}
	if txt := strings.Join(plan, "\n"); !strings.Contains(txt, "Stage 1 (parallelism 4)") || !strings.Contains(txt, "tasks=4 ") {
		t.Fatalf("the scan ran in fewer than 4 tasks:\n%s", txt)
	}
}
