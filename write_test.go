package fsql_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql"
	"github.com/fsql-dev/fsql/connectors/hive"
	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/internal/slt"
	"github.com/fsql-dev/fsql/runtime"
)

// writeEngine opens an engine over a fresh data directory holding the
// table src (ids 1..n, a few days, some NULLs).
func writeEngine(t *testing.T, n int) (*fsql.Engine, string) {
	t.Helper()
	var b strings.Builder
	b.WriteString("table src (id int, name varchar, price decimal(9,2), day date)\n")
	for i := 1; i <= n; i++ {
		name, day := "n"+strings.Repeat("x", i%7), []string{"2000-01-01", "2000-01-02", "2000-01-03", "NULL"}[i%4]
		if i%5 == 0 {
			name = "NULL"
		}
		b.WriteString(strings.Join([]string{itoa(i), name, itoa(i%1000) + ".25", day}, "\t") + "\n")
	}
	f, err := slt.Parse("src.slt", strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := slt.WriteTables(dir, f.Tables()); err != nil {
		t.Fatal(err)
	}
	cfg := fsql.DefaultConfig()
	if err := cfg.Set("parallelism.default", "3"); err != nil {
		t.Fatal(err)
	}
	// Several writing tasks even for small inputs.
	if err := cfg.Set("execution.batch.adaptive.auto-parallelism.enabled", "false"); err != nil {
		t.Fatal(err)
	}
	eng, err := fsql.Open(dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	return eng.WithAllocator(mem), dir
}

func itoa(i int) string { return strconv.Itoa(i) }

// mustExec runs a statement and fails the test on an error.
func mustExec(t *testing.T, eng *fsql.Engine, q string) {
	t.Helper()
	if _, _, err := query(eng, q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// sorted is a query's rows, sorted.
func sorted(t *testing.T, eng *fsql.Engine, q string) []string {
	t.Helper()
	_, lines, err := query(eng, q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	slices.Sort(lines)
	return lines
}

// noStaging fails when a write left staging data behind: hidden CREATE
// folders in the data directory, txn- folders in a table's _fsql.
func noStaging(t *testing.T, dir string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		n := d.Name()
		if strings.HasPrefix(n, ".fsql-") || strings.HasPrefix(n, "txn-") || strings.HasSuffix(n, ".tmp") {
			t.Errorf("staging left behind: %s", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestWriteTypesRoundTrip writes every type fsql writes and reads it
// back: values and types equal the query's (a comparison is an INT, as
// in MySQL).
func TestWriteTypesRoundTrip(t *testing.T) {
	eng, dir := writeEngine(t, 20)
	q := `select id, name, price, day, cast(id as signed) as big, cast(id * 1.5 as double) as dbl,
		cast(price as decimal(30,5)) as wide, cast(day as datetime) as dt, id > 10 as flag,
		cast('12:34:56.5' as time) as tm, cast(id as unsigned) as u from src`
	mustExec(t, eng, "create table typed as "+q)
	want := sorted(t, eng, q)
	if got := sorted(t, eng, "select * from typed"); !slices.Equal(got, want) {
		t.Fatalf("read back\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	ctx := context.Background()
	src, err := eng.Columns(ctx, "src")
	if err != nil {
		t.Fatal(err)
	}
	got, err := eng.Columns(ctx, "typed")
	if err != nil {
		t.Fatal(err)
	}
	wantTypes := []string{src[0].TypeName, src[1].TypeName, "DECIMAL(9,2)", "DATE", "BIGINT", "DOUBLE", "DECIMAL(30,5)", "DATETIME", "INT", "TIME", "BIGINT UNSIGNED"}
	for i, c := range got {
		if c.TypeName != wantTypes[i] {
			t.Errorf("column %s: type %s, want %s", c.Name, c.TypeName, wantTypes[i])
		}
	}
	// Row groups carry min/max statistics: a filter on id skips them.
	noStaging(t, dir)
}

// TestWriteLayout: a partitioned CREATE writes Hive folders with
// __HIVE_DEFAULT_PARTITION__ for NULL, the marker and one manifest.
func TestWriteLayout(t *testing.T) {
	eng, dir := writeEngine(t, 40)
	mustExec(t, eng, "create table p partition by key (day) as select * from src")
	for _, d := range []string{"day=2000-01-01", "day=2000-01-02", "day=2000-01-03", "day=__HIVE_DEFAULT_PARTITION__"} {
		files, _ := filepath.Glob(filepath.Join(dir, "p", d, "part-*.parquet"))
		if len(files) == 0 {
			t.Errorf("no data file in %s", d)
		}
	}
	for _, f := range []string{"table.json", "v00000001.json"} {
		if _, err := os.Stat(filepath.Join(dir, "p", hive.MarkerDir, f)); err != nil {
			t.Error(err)
		}
	}
	if got := sorted(t, eng, "select count(*), count(day) from p"); !slices.Equal(got, []string{"40\t30"}) {
		t.Errorf("counts %v", got)
	}
	noStaging(t, dir)
}

// TestWriteAttempts: every writing task runs as two attempts; whichever
// wins, each row is written once and the loser's files are gone.
func TestWriteAttempts(t *testing.T) {
	for _, tc := range firstAttemptFaults {
		t.Run(tc.name, func(t *testing.T) {
			eng, dir := writeEngine(t, 3000)
			eng = withFirstAttemptFault(eng, tc.fault)
			mustExec(t, eng, "create table c partition by key (day) as select * from src")
			mustExec(t, eng, "insert into c select id + 10000, name, price, day from src")
			want := []string{"6000\t6000\t39003000"}
			if got := sorted(t, eng, "select count(*), count(distinct id), sum(id) from c"); !slices.Equal(got, want) {
				t.Errorf("got %v, want %v", got, want)
			}
			noStaging(t, dir)
		})
	}
}

// TestWriteFailureLeavesTable: a statement that fails mid-way, or is
// cancelled, leaves the table's answers as they were and no staging.
func TestWriteFailureLeavesTable(t *testing.T) {
	eng, dir := writeEngine(t, 3000)
	mustExec(t, eng, "create table c as select id, price from src where id <= 10")
	before := sorted(t, eng, "select * from c")

	// A value that does not fit the column fails a task at run time.
	_, _, err := query(eng, "insert into c select cast(case when id = 2999 then 'x' else '1' end as signed), price from src")
	if err == nil {
		t.Fatal("an out-of-range value was written")
	}
	if got := sorted(t, eng, "select * from c"); !slices.Equal(got, before) {
		t.Errorf("after the failed insert: %d rows, want %d", len(got), len(before))
	}
	noStaging(t, dir)

	// A cancelled statement publishes nothing either.
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	rows, err := eng.Query(ctx, "insert into c select a.id, a.price from src a, src b where a.id < 300")
	if err == nil {
		rows.Close()
		t.Log("the statement finished before its deadline")
	} else if !errors.Is(err, errs.Cancelled) && !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("cancelled insert: %v", err)
	} else if got := sorted(t, eng, "select * from c"); !slices.Equal(got, before) {
		t.Errorf("after the cancelled insert: %d rows, want %d", len(got), len(before))
	}
	noStaging(t, dir)

	// A failed CREATE leaves no table.
	if _, _, err := query(eng, "create table d as select cast(case when id = 2999 then 'x' else '1' end as signed) as x from src"); err == nil {
		t.Fatal("CREATE of a value that does not convert succeeded")
	}
	if _, err := eng.Columns(context.Background(), "d"); !errors.Is(err, fsql.ErrNoTable) {
		t.Errorf("the failed CREATE left table d: %v", err)
	}
	noStaging(t, dir)
}

// TestWriteSnapshotReaders: a query planned before an INSERT reads the
// table as it was; the next query sees the new rows.
func TestWriteSnapshotReaders(t *testing.T) {
	eng, _ := writeEngine(t, 100)
	mustExec(t, eng, "create table c as select * from src")
	ctx := context.Background()
	rows, err := eng.Query(ctx, "select count(*) from c")
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, eng, "insert into c select * from src")
	if !rows.Next() {
		t.Fatal(rows.Err())
	}
	if n := rows.RecordBatch().Column(0).ValueStr(0); n != "100" {
		t.Errorf("the reader planned before the insert counts %s rows, want 100", n)
	}
	rows.Close()
	if got := sorted(t, eng, "select count(*) from c"); !slices.Equal(got, []string{"200"}) {
		t.Errorf("after the insert: %v", got)
	}
	// An overwrite keeps the files it removed on disk, so a query planned
	// before it reads the old version to its end.
	rows, err = eng.Query(ctx, "select sum(id) from c")
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, eng, "replace into c select * from src where id = 1")
	if !rows.Next() {
		t.Fatal(rows.Err())
	}
	if n := rows.RecordBatch().Column(0).ValueStr(0); n != "10100" {
		t.Errorf("the reader planned before the replace sums %s, want 10100", n)
	}
	rows.Close()
	if got := sorted(t, eng, "select count(*) from c"); !slices.Equal(got, []string{"1"}) {
		t.Errorf("after the replace: %v", got)
	}
}

// TestWriteSweep: staging a crashed process left behind (its lock
// released, files moved into the table but not published) is removed
// when an engine next opens the directory; the table reads as before.
func TestWriteSweep(t *testing.T) {
	eng, dir := writeEngine(t, 10)
	mustExec(t, eng, "create table c as select * from src")
	txn := filepath.Join(dir, "c", hive.MarkerDir, "txn-crashed")
	if err := os.MkdirAll(filepath.Join(txn, "t0"), 0o755); err != nil {
		t.Fatal(err)
	}
	orphan := filepath.Join(dir, "c", "part-crashed-00000-000.parquet")
	if err := os.WriteFile(orphan, []byte("not published"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(txn, "commit.json"), []byte(`["part-crashed-00000-000.parquet"]`), 0o644); err != nil {
		t.Fatal(err)
	}
	hidden := filepath.Join(dir, ".fsql-crashed-d")
	if err := os.MkdirAll(filepath.Join(hidden, hive.MarkerDir, "txn-crashed"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := sorted(t, eng, "select count(*) from c"); !slices.Equal(got, []string{"10"}) {
		t.Errorf("with leftovers: %v", got)
	}
	if _, err := fsql.Open(dir, fsql.DefaultConfig()); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{txn, orphan, hidden} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s survived the sweep (%v)", p, err)
		}
	}
	if got := sorted(t, eng, "select count(*) from c"); !slices.Equal(got, []string{"10"}) {
		t.Errorf("after the sweep: %v", got)
	}
}

// TestWriteReadOnly: a read-only table folder fails before any file is
// written.
func TestWriteReadOnly(t *testing.T) {
	if os.Getuid() == 0 {
		t.Skip("root writes into read-only folders")
	}
	eng, dir := writeEngine(t, 10)
	mustExec(t, eng, "create table c as select * from src")
	if err := os.Chmod(filepath.Join(dir, "c", hive.MarkerDir), 0o555); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(filepath.Join(dir, "c", hive.MarkerDir), 0o755)
	_, _, err := query(eng, "insert into c select * from src")
	if err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("insert into a read-only table: %v", err)
	}
}

// firstAttemptFaults are the ways the first attempt of every task goes
// wrong in the write tests: a twin racing it, both finishing, cancelled
// or failing mid-way, failing after all its work.
var firstAttemptFaults = []struct {
	name  string
	fault runtime.AttemptFault
}{
	{"twins", runtime.AttemptFault{Twin: true}},
	{"both finish", runtime.AttemptFault{Twin: true, BothFinish: true}},
	{"first cancelled mid-way", runtime.AttemptFault{Twin: true, CancelAfter: 1}},
	{"first fails after writing everything", runtime.AttemptFault{FailAtEnd: true}},
	{"first fails mid-way", runtime.AttemptFault{FailAt: 2}},
}

// withFirstAttemptFault gives the first attempt of every task fault.
func withFirstAttemptFault(eng *fsql.Engine, fault runtime.AttemptFault) *fsql.Engine {
	return eng.WithAttemptFaults(func(stage, task, attempt int) runtime.AttemptFault {
		if attempt == 0 {
			return fault
		}
		return runtime.AttemptFault{}
	})
}
