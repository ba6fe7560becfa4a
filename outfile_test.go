package fsql_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsql-dev/fsql"
	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/runtime"
)

// outfileEngine is writeEngine with a table t of awkward values: tabs,
// newlines, quotes, backslashes, NULLs, an empty string.
func outfileEngine(t *testing.T) (*fsql.Engine, string) {
	t.Helper()
	eng, dir := writeEngine(t, 3000)
	mustExec(t, eng, "create table t (a int, b varchar(20), c double, d date)")
	mustExec(t, eng, `insert into t values (1, 'plain', 1.5, '2024-01-02'), (2, 'tab\there', NULL, NULL), (3, 'q"uo\\te,x', 0.1, '2000-01-01'), (NULL, 'new\nline', 2, NULL), (5, '', -0.5, NULL)`)
	return eng, dir
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestOutfileCSV: MySQL's rules for INTO OUTFILE text: tab-separated
// lines by default, \N for NULL, the escape character before itself,
// the separators and NUL; FIELDS and LINES options; no escape character
// writes NULL as the word NULL. The three expected texts are byte for
// byte what MariaDB 10.11 writes for the same table and statements.
func TestOutfileCSV(t *testing.T) {
	eng, dir := outfileEngine(t)
	for _, tc := range []struct{ opts, want string }{
		{"", "\\N\tnew\\\nline\t2\t\\N\n1\tplain\t1.5\t2024-01-02\n2\ttab\\\there\t\\N\t\\N\n3\tq\"uo\\\\te,x\t0.1\t2000-01-01\n5\t\t-0.5\t\\N\n"},
		{"fields terminated by ',' optionally enclosed by '\"' lines terminated by '\\r\\n'",
			"\\N,\"new\nline\",2,\\N\r\n1,\"plain\",1.5,\"2024-01-02\"\r\n2,\"tab\there\",\\N,\\N\r\n3,\"q\\\"uo\\\\te,x\",0.1,\"2000-01-01\"\r\n5,\"\",-0.5,\\N\r\n"},
		{"fields terminated by ',' enclosed by '\"' escaped by '' lines starting by '> '",
			"> NULL,\"new\nline\",\"2\",NULL\n> \"1\",\"plain\",\"1.5\",\"2024-01-02\"\n> \"2\",\"tab\there\",NULL,NULL\n> \"3\",\"q\"uo\\te,x\",\"0.1\",\"2000-01-01\"\n> \"5\",\"\",\"-0.5\",NULL\n"},
	} {
		name := "out" + itoa(len(tc.opts)) + ".txt"
		mustExec(t, eng, "select * from t order by a into outfile '"+name+"' "+tc.opts)
		if got := readFile(t, filepath.Join(dir, name)); got != tc.want {
			t.Errorf("%s:\ngot  %q\nwant %q", tc.opts, got, tc.want)
		}
	}
	// An existing file is an error, and stays as it was.
	_, _, err := query(eng, "select 1 into outfile 'out0.txt'")
	if !errors.Is(err, errs.ErFileExistsError) || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("writing over a file: %v, want ER_FILE_EXISTS_ERROR", err)
	}
	if got := readFile(t, filepath.Join(dir, "out0.txt")); !strings.HasPrefix(got, "\\N\tnew") {
		t.Errorf("the existing file changed: %q", got)
	}
	// The plan runs from its wire form (the export's target and options
	// travel with the write spec).
	wired := eng.WithPlanHook(wireRoundTrip)
	mustExec(t, wired, "select * from t order by a into outfile 'wired.txt' fields terminated by ',' optionally enclosed by '\"' lines terminated by '\r\n'")
	want := "\\N,\"new\nline\",2,\\N\r\n1,\"plain\",1.5,\"2024-01-02\"\r\n2,\"tab\there\",\\N,\\N\r\n3,\"q\\\"uo\\\\te,x\",0.1,\"2000-01-01\"\r\n5,\"\",-0.5,\\N\r\n"
	if got := readFile(t, filepath.Join(dir, "wired.txt")); got != want {
		t.Errorf("from the wire form:\ngot  %q\nwant %q", got, want)
	}
	// Many tasks each write a part; the file is their concatenation.
	mustExec(t, eng, "select id, name from src into outfile 'src.tsv'")
	lines := strings.Split(strings.TrimSuffix(readFile(t, filepath.Join(dir, "src.tsv")), "\n"), "\n")
	if len(lines) != 3000 || !slices.Contains(lines, "5\t\\N") || !slices.Contains(lines, "1\tnx") {
		t.Errorf("src.tsv: %d lines (want 3000), e.g. %q", len(lines), lines[:3])
	}
	noStaging(t, dir)
}

// TestOutfileParquet: a .parquet path is one Parquet file, a folder
// path a folder of part files; both read back as the rows written.
func TestOutfileParquet(t *testing.T) {
	eng, dir := outfileEngine(t)
	want := sorted(t, eng, "select * from src")
	mustExec(t, eng, "select * from src into outfile 'one.parquet'")
	mustExec(t, eng, "select * from src into outfile 'many/'")
	// An existing empty folder is a folder target too, without a slash.
	if err := os.Mkdir(filepath.Join(dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustExec(t, eng, "select * from src into outfile 'empty'")
	for _, p := range []string{"`one.parquet`", "`many/`", "`empty/`"} {
		if got := sorted(t, eng, "select * from "+p); !slices.Equal(got, want) {
			t.Errorf("%s read back: %d rows, want %d", p, len(got), len(want))
		}
	}
	if got := sorted(t, eng, "select * from `one.parquet` where id = 3"); !slices.Equal(got, []string{"3\tnxxx\t3.25\tNULL"}) {
		t.Errorf("types after the round trip: %v", got)
	}
	// An empty result is an empty file of the query's columns.
	mustExec(t, eng, "select id, name from src where id < 0 into outfile 'none.parquet'")
	if got := sorted(t, eng, "select count(*) from `none.parquet`"); !slices.Equal(got, []string{"0"}) {
		t.Errorf("empty export: %v", got)
	}
	for q, msg := range map[string]string{
		"select 1 into outfile 'x.parquet' fields terminated by ','": "FIELDS options",
		"select * from src into outfile 'many/'":                     "already exists",
		"select 1 into outfile 'no/such/folder/x.csv'":               "does not exist",
	} {
		if _, _, err := query(eng, q); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want %q", q, err, msg)
		}
	}
	noStaging(t, dir)
}

// TestOutfileAttempts: speculative twins, cancelled and failed attempts
// leave each row in the file once; a statement failing mid-way leaves no
// file at all.
func TestOutfileAttempts(t *testing.T) {
	for _, fault := range []runtime.AttemptFault{
		{Twin: true}, {Twin: true, BothFinish: true}, {Twin: true, CancelAfter: 1}, {FailAtEnd: true}, {FailAt: 2},
	} {
		eng, dir := writeEngine(t, 3000)
		eng = eng.WithAttemptFaults(func(stage, task, attempt int) runtime.AttemptFault {
			if attempt == 0 {
				return fault
			}
			return runtime.AttemptFault{}
		})
		mustExec(t, eng, "select id from src into outfile 'ids.txt'")
		mustExec(t, eng, "select id from src into outfile 'ids.parquet'")
		lines := strings.Fields(readFile(t, filepath.Join(dir, "ids.txt")))
		slices.Sort(lines)
		if len(slices.Compact(lines)) != 3000 {
			t.Errorf("%+v: %d distinct ids in the CSV file, want 3000", fault, len(lines))
		}
		if got := sorted(t, eng, "select count(*), count(distinct id) from `ids.parquet`"); !slices.Equal(got, []string{"3000\t3000"}) {
			t.Errorf("%+v: Parquet file holds %v", fault, got)
		}
		noStaging(t, dir)
	}
	eng, dir := writeEngine(t, 3000)
	_, _, err := query(eng, "select cast(case when id = 2999 then 'x' else '1' end as signed) from src into outfile 'bad.txt'")
	if err == nil {
		t.Fatal("a value that does not convert was exported")
	}
	if _, err := os.Stat(filepath.Join(dir, "bad.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the failed statement left its file: %v", err)
	}
	noStaging(t, dir)
}

// TestOutfileKilled: an export whose process is killed mid-way (a real
// child process, SIGKILL) leaves its hidden staging folder beside the
// target, outside the data directory that engines sweep at start, and no
// target. The next export into that folder removes it, but not the
// staging folder of an export still running in another process.
func TestOutfileKilled(t *testing.T) {
	if os.Getenv("FSQL_OUTFILE_CHILD") != "" {
		outfileChild(t)
		return
	}
	eng, dir := writeEngine(t, 3000)
	out := t.TempDir()
	target := filepath.Join(out, "x.tsv")
	// start runs an export in a child process and returns once it has
	// written into its staging folder, and the folder.
	start := func() (*exec.Cmd, string) {
		t.Helper()
		cmd := exec.Command(os.Args[0], "-test.run=^TestOutfileKilled$", "-test.count=1")
		cmd.Env = append(os.Environ(), "FSQL_OUTFILE_CHILD=1", "FSQL_OUTFILE_DATA="+dir, "FSQL_OUTFILE_TARGET="+target)
		var log strings.Builder
		cmd.Stdout, cmd.Stderr = &log, &log
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(2 * time.Minute); ; {
			if now := stagingIn(t, out); len(now) == 1 && partFiles(now[0]) > 0 {
				return cmd, now[0]
			}
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("the child's export wrote no staging file in 2 minutes:\n%s", log.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	kill := func(cmd *exec.Cmd) {
		t.Helper()
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
			t.Fatal(err)
		}
		cmd.Wait()
	}
	dead, crashed := start()
	kill(dead)
	if _, err := os.Stat(crashed); err != nil {
		t.Fatalf("the killed export's staging: %v", err)
	}
	if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the killed export left its target: %v", err)
	}
	mustExec(t, eng, "select id from src into outfile '"+target+"'")
	if n := strings.Count(readFile(t, target), "\n"); n != 3000 {
		t.Errorf("the export after the crash wrote %d lines, want 3000", n)
	}
	noStaging(t, out)
	if err := os.Remove(target); err != nil {
		t.Fatal(err)
	}

	running, live := start()
	defer kill(running)
	mustExec(t, eng, "select id from src into outfile '"+filepath.Join(out, "y.tsv")+"'")
	if _, err := os.Stat(live); err != nil {
		t.Errorf("the running export's staging was removed: %v", err)
	}
	kill(running)
	mustExec(t, eng, "select id from src into outfile '"+filepath.Join(out, "z.tsv")+"'")
	noStaging(t, out)
}

// outfileChild is TestOutfileKilled's child process: an export that runs
// until it is killed (a cross join of 3000^3 rows).
func outfileChild(t *testing.T) {
	eng, err := fsql.Open(os.Getenv("FSQL_OUTFILE_DATA"), fsql.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rows, err := eng.Query(ctx, "select a.id, b.id, c.name from src a, src b, src c into outfile '"+os.Getenv("FSQL_OUTFILE_TARGET")+"'")
	if err == nil {
		for rows.Next() {
		}
		err = rows.Err()
		rows.Close()
	}
	t.Fatalf("the export ended before it was killed: %v", err)
}

// stagingIn lists the hidden staging folders in dir, oldest first (the
// names begin with the statement's time-ordered ID).
func stagingIn(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".fsql-") {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out
}

// partFiles counts the files under dir.
func partFiles(dir string) int {
	n := 0
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasPrefix(d.Name(), "part-") {
			n++
		}
		return nil
	})
	return n
}
