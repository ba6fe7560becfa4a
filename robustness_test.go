package fsql_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/parquet-go/parquet-go"
	"go.uber.org/goleak"

	"github.com/fsql-dev/fsql"
	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/exec/expr"
)

// bigRow is a row of the robustness tables: k repeats every 1000 rows so
// joins and aggregates on it have real work; s is a short string.
type bigRow struct {
	K int64  `parquet:"k"`
	V int64  `parquet:"v"`
	S string `parquet:"s"`
}

// Sizes of the "big" table: several files (one scan split each, so several
// tasks) of several batches each.
const (
	bigFiles       = 4
	bigRowsPerFile = 40_000
)

// robustDir writes the robustness tables into a fresh folder:
//
//	big   (k bigint, v bigint, s varchar)  bigFiles × bigRowsPerFile rows
//	small (k bigint, v bigint, s varchar)  1000 rows, k = 0..999
//	two   (k bigint, v bigint, s varchar)  2 rows
func robustDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for f := 0; f < bigFiles; f++ {
		rows := make([]bigRow, bigRowsPerFile)
		for i := range rows {
			n := int64(f*bigRowsPerFile + i)
			rows[i] = bigRow{K: n % 1000, V: n, S: fmt.Sprintf("s%d", n%97)}
		}
		writeRows(t, filepath.Join(dir, "big", fmt.Sprintf("part-%d.parquet", f)), rows)
	}
	small := make([]bigRow, 1000)
	for i := range small {
		small[i] = bigRow{K: int64(i), V: int64(i * 10), S: fmt.Sprintf("x%d", i)}
	}
	writeRows(t, filepath.Join(dir, "small", "part-0.parquet"), small)
	writeRows(t, filepath.Join(dir, "two", "part-0.parquet"), []bigRow{{1, 10, "a"}, {2, 20, "b"}})
	return dir
}

func writeRows(t *testing.T, path string, rows []bigRow) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := parquet.WriteFile(path, rows, parquet.MaxRowsPerRowGroup(20_000)); err != nil {
		t.Fatal(err)
	}
}

// checkedEngine opens dir with the given parallelism and a checked
// allocator that must be empty when the test ends.
func checkedEngine(t *testing.T, dir string, parallelism int, edit func(*fsql.Config)) *fsql.Engine {
	t.Helper()
	cfg := fsql.DefaultConfig()
	cfg.Parallelism = parallelism
	if edit != nil {
		edit(&cfg)
	}
	eng, err := fsql.Open(dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	return eng.WithAllocator(mem)
}

// drain reads every batch of q and returns the row count and the error
// that ended the stream (from Query or from Rows.Err).
func drain(ctx context.Context, eng *fsql.Engine, q string) (int64, error) {
	rows, err := eng.Query(ctx, q)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var n int64
	for rows.Next() {
		n += rows.RecordBatch().NumRows()
	}
	return n, rows.Err()
}

// noLeaks fails the test if a goroutine the test started outlives it.
// goleak retries for a while, so tasks that are still unwinding after
// Close returned get time to finish; a stuck one fails the test.
func noLeaks(t *testing.T) {
	t.Helper()
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
}

// The queries below stop before their input is exhausted, in each way a
// query can: afterwards no task goroutine may still run, and every Arrow
// buffer must be back with the allocator.

func TestLimitStopsEarlyWithoutLeaks(t *testing.T) {
	noLeaks(t)
	dir := robustDir(t)
	eng := checkedEngine(t, dir, 4, nil)
	for _, c := range []struct {
		q    string
		want int64
	}{
		{"select k, v from big limit 10", 10},
		{"select k, v, s from big where v % 7 = 3 limit 5000", 5000},
		{"select b.v, s.s from big b join small s on b.k = s.k limit 3", 3},
		{"select k, count(*) from big group by k limit 4", 4},
		{"select v from big order by v desc limit 2", 2},
	} {
		n, err := drain(context.Background(), eng, c.q)
		if err != nil {
			t.Fatalf("%s: %v", c.q, err)
		}
		if n != c.want {
			t.Errorf("%s: %d rows, want %d", c.q, n, c.want)
		}
	}
}

func TestCloseBeforeEndWithoutLeaks(t *testing.T) {
	noLeaks(t)
	dir := robustDir(t)
	eng := checkedEngine(t, dir, 4, nil)
	for _, q := range []string{
		"select k, v, s from big",
		// A shuffled join (both sides big): Close must stop its tasks.
		"select a.v, b.v from big a join big b on a.v = b.v",
		// A broadcast join whose output (1.6M rows) is mostly unread.
		"select b.v, s.s from big b join small s on b.k % 100 = s.k % 100",
		"select s, count(*) from big group by s",
	} {
		rows, err := eng.Query(context.Background(), q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if !rows.Next() {
			t.Fatalf("%s: no first batch: %v", q, rows.Err())
		}
		rows.Close()
		rows.Close() // idempotent
		if rows.Next() {
			t.Errorf("%s: Next after Close returned a batch", q)
		}
		if err := rows.Err(); err != nil {
			t.Errorf("%s: Err after Close = %v, want nil", q, err)
		}
	}
	// Closing without reading anything at all.
	rows, err := eng.Query(context.Background(), "select a.v from big a join big b on a.k = b.k")
	if err != nil {
		t.Fatal(err)
	}
	rows.Close()
}

func TestExecutionErrorWithoutLeaks(t *testing.T) {
	noLeaks(t)
	dir := robustDir(t)
	eng := checkedEngine(t, dir, 4, nil)
	for _, c := range []struct {
		q, want string
		is      error
	}{
		{"select b.v from big b where b.k = (select k from two)", "more than one row", exec.ErrExecution},
		{"select (select v from two), k from big", "more than one row", exec.ErrExecution},
		// Fails on every row of every task; the rest of the query must stop.
		// The error wraps both exec.ErrExecution and expr.ErrInvalidValue.
		{"select cast(s as date) from big", "cannot read", exec.ErrExecution},
		{"select cast(s as date) from big", "cannot read", expr.ErrInvalidValue},
		{"select count(*) from big b join small s on b.k = s.k where cast(b.s as date) is null", "cannot read", exec.ErrExecution},
	} {
		n, err := drain(context.Background(), eng, c.q)
		if err == nil {
			t.Errorf("%s: %d rows and no error, want %q", c.q, n, c.want)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q does not contain %q", c.q, err, c.want)
		}
		if c.is != nil && !errors.Is(err, c.is) {
			t.Errorf("%s: error %q does not wrap %v", c.q, err, c.is)
		}
	}
}

func TestCancelMidQuery(t *testing.T) {
	noLeaks(t)
	dir := robustDir(t)
	eng := checkedEngine(t, dir, 4, nil)
	for _, q := range []string{
		"select k, v, s from big",
		"select a.v, b.v from big a join big b on a.v = b.v",
		"select b.v, s.s from big b join small s on b.k % 100 = s.k % 100",
		"select a.k, count(*) from big a join big b on a.v = b.v group by a.k",
	} {
		ctx, cancel := context.WithCancel(context.Background())
		rows, err := eng.Query(ctx, q)
		if err != nil {
			cancel()
			t.Fatalf("%s: %v", q, err)
		}
		if !rows.Next() {
			cancel()
			t.Fatalf("%s: no first batch: %v", q, rows.Err())
		}
		cancel()
		start := time.Now()
		for rows.Next() {
			// Batches already produced may still arrive; the stream must
			// end soon after.
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: took %v to stop after cancellation", q, d)
		}
		if err := rows.Err(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: Err() = %v, want context.Canceled", q, err)
		}
		rows.Close()
	}
}

// TestCancelWhileWaiting cancels a query whose first batch is not ready
// yet: the join's shuffle is still running when ctx ends.
func TestCancelWhileWaiting(t *testing.T) {
	noLeaks(t)
	dir := robustDir(t)
	eng := checkedEngine(t, dir, 4, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rows, err := eng.Query(ctx, "select a.v, b.v from big a join big b on a.k = b.k order by a.v, b.v")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	time.AfterFunc(20*time.Millisecond, cancel)
	start := time.Now()
	for rows.Next() {
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v to stop after cancellation", d)
	}
	if err := rows.Err(); !errors.Is(err, context.Canceled) {
		t.Errorf("Err() = %v, want context.Canceled", err)
	}
}

func TestCorruptParquetFile(t *testing.T) {
	noLeaks(t)
	dir := robustDir(t)
	bad := filepath.Join(dir, "big", "part-9.parquet")
	if err := os.WriteFile(bad, []byte("PAR1 this is not a parquet file at all PAR1"), 0o644); err != nil {
		t.Fatal(err)
	}
	eng := checkedEngine(t, dir, 4, nil)
	_, err := drain(context.Background(), eng, "select count(*) from big")
	if err == nil {
		t.Fatal("a corrupt file in the table folder gave no error")
	}
	if !strings.Contains(err.Error(), "part-9.parquet") {
		t.Errorf("error %q does not name the corrupt file", err)
	}
	// Other tables are still readable.
	if n, err := drain(context.Background(), eng, "select * from small"); err != nil || n != 1000 {
		t.Errorf("small: %d rows, %v; want 1000 rows", n, err)
	}
}

// TestCorruptPage keeps a valid footer but overwrites page data: the error
// comes from the scan, mid-query, and must still name the file.
func TestCorruptPage(t *testing.T) {
	noLeaks(t)
	dir := robustDir(t)
	path := filepath.Join(dir, "big", "part-2.parquet")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 4; i < len(data)/2; i++ {
		data[i] = 0xA5
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	eng := checkedEngine(t, dir, 4, nil)
	_, err = drain(context.Background(), eng, "select sum(v), count(distinct s) from big")
	if err == nil {
		t.Fatal("corrupt pages gave no error")
	}
	if !strings.Contains(err.Error(), "part-2.parquet") {
		t.Errorf("error %q does not name the corrupt file", err)
	}
}

// TestFileVanishes deletes a file after a query has read the table: the
// next query lists the table again and reads it without that file. (A
// file that vanishes while a query runs fails that query; the hive
// package tests that.)
func TestFileVanishes(t *testing.T) {
	noLeaks(t)
	dir := robustDir(t)
	eng := checkedEngine(t, dir, 4, nil)
	if n, err := drain(context.Background(), eng, "select * from big"); err != nil || n != bigFiles*bigRowsPerFile {
		t.Fatalf("%d rows, %v", n, err)
	}
	if err := os.Remove(filepath.Join(dir, "big", "part-1.parquet")); err != nil {
		t.Fatal(err)
	}
	if n, err := drain(context.Background(), eng, "select * from big"); err != nil || n != (bigFiles-1)*bigRowsPerFile {
		t.Fatalf("after removing a file: %d rows, %v; want %d", n, err, (bigFiles-1)*bigRowsPerFile)
	}
}

// TestTableVanishesBeforeFirstQuery removes a table's folder after Open
// (which only lists folders) but before any query reads it.
func TestTableVanishesBeforeFirstQuery(t *testing.T) {
	noLeaks(t)
	dir := robustDir(t)
	eng := checkedEngine(t, dir, 4, nil)
	if err := os.RemoveAll(filepath.Join(dir, "small")); err != nil {
		t.Fatal(err)
	}
	_, err := drain(context.Background(), eng, "select * from small")
	if err == nil {
		t.Fatal("a vanished table gave no error")
	}
	if !strings.Contains(err.Error(), "small") {
		t.Errorf("error %q does not name the table", err)
	}
}

func TestErrorMessagesNameTheProblem(t *testing.T) {
	noLeaks(t)
	dir := robustDir(t)
	eng := checkedEngine(t, dir, 2, nil)
	for _, c := range []struct {
		q    string
		want []string
	}{
		{"select * from no_such_table", []string{"no_such_table"}},
		{"select k from small join nope_tbl on true", []string{"nope_tbl"}},
		{"select no_such_col from small", []string{"no_such_col"}},
		{"select s.zz from small s", []string{"zz"}},
		{"select k from small group by k having sum(qqq) > 1", []string{"qqq"}},
		{"select k\nfrom small\nwhere k = = 1", []string{"line 3", "column"}},
		{"select k from small where (k > 1", []string{"line 1", "column"}},
	} {
		_, err := drain(context.Background(), eng, c.q)
		if err == nil {
			t.Errorf("%s: no error", c.q)
			continue
		}
		// The query's fault, not the data's or fsql's.
		switch k := errs.KindOf(err); k {
		case errs.Syntax, errs.UnknownName, errs.Semantic:
		default:
			t.Errorf("%s: error %q is of kind %v, want one that says the statement is wrong", c.q, err, k)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not contain %q", c.q, err, w)
			}
		}
	}
}

func TestMemoryBudgetExhausted(t *testing.T) {
	noLeaks(t)
	dir := robustDir(t)
	eng := checkedEngine(t, dir, 4, func(c *fsql.Config) {
		if err := c.Set("execution.memory.query-budget", "1k"); err != nil {
			t.Fatal(err)
		}
	})
	if eng.Config().MemoryBudget != 1<<10 {
		t.Fatalf("budget %d, want 1024", eng.Config().MemoryBudget)
	}
	// What cannot spill fails cleanly: a GROUP_CONCAT without GROUP BY
	// keeps its whole string in memory.
	for _, q := range []string{
		"select group_concat(distinct s) from big",
	} {
		_, err := drain(context.Background(), eng, q)
		if !errors.Is(err, exec.ErrResourcesExhausted) {
			t.Errorf("%s: error %v, want one wrapping ErrResourcesExhausted", q, err)
		}
	}
	// Hash joins spill, and so does the count above them: the answer is
	// that of an unlimited budget. (A self-join of big under 1 KiB
	// finishes too, in a minute and a half of recursive partitioning;
	// the join spill tests of package exec cover it at less cost.)
	free := checkedEngine(t, dir, 4, nil)
	for _, q := range []string{
		"select count(*) from big b join small s on b.k = s.k",
	} {
		if got, want := strings.Join(rowsText(t, eng, q), "|"), strings.Join(rowsText(t, free, q), "|"); got != want {
			t.Errorf("a join under 1 KiB with spilling on: %s gives %s, want %s", q, got, want)
		}
	}
	// A sort and the exchange under it spill: the query finishes.
	if n, err := drain(context.Background(), eng, "select v from big order by s, v"); err != nil || n != bigFiles*bigRowsPerFile {
		t.Errorf("a sort under 1 KiB with spilling on: %d rows of %d, %v", n, bigFiles*bigRowsPerFile, err)
	}
	// So does a hash aggregate: its partitions split until a few groups
	// fit in the share.
	if n, err := drain(context.Background(), eng, "select s, count(*), sum(v) from big group by s"); err != nil || n != 97 {
		t.Errorf("an aggregate under 1 KiB with spilling on: %d groups of 97, %v", n, err)
	}
}

// TestBroadcastJoinReleasesEverything runs broadcast joins (small build
// sides, one copy retained per probing task) with more tasks than cores.
func TestBroadcastJoinReleasesEverything(t *testing.T) {
	noLeaks(t)
	dir := robustDir(t)
	eng := checkedEngine(t, dir, 3, nil)
	rows, err := eng.Query(context.Background(), "explain select count(*) from big b join small s on b.k = s.k")
	if err != nil {
		t.Fatal(err)
	}
	var plan strings.Builder
	for rows.Next() {
		b := rows.RecordBatch()
		for i := 0; i < int(b.NumRows()); i++ {
			plan.WriteString(b.Column(0).ValueStr(i) + "\n")
		}
	}
	rows.Close()
	if !strings.Contains(strings.ToLower(plan.String()), "broadcast") {
		t.Fatalf("the join is not broadcast:\n%s", plan.String())
	}
	for _, c := range []struct {
		q    string
		want int64
	}{
		{"select count(*) from big b join small s on b.k = s.k", 1},
		{"select b.v, s.s from big b join small s on b.k = s.k where s.v < 50", 5 * 160},
		{"select b.k, count(*) from big b join small s on b.k = s.k join two w on s.k = w.k group by b.k", 2},
		{"select b.v from big b left join two w on b.k = w.k where w.k is null limit 7", 7},
	} {
		n, err := drain(context.Background(), eng, c.q)
		if err != nil {
			t.Fatalf("%s: %v", c.q, err)
		}
		if n != c.want {
			t.Errorf("%s: %d rows, want %d", c.q, n, c.want)
		}
	}
}

// TestConcurrentQueries runs queries from several goroutines on one engine
// (the Engine is documented as safe for concurrent use), some read to the
// end, some closed early, some cancelled, some failing.
func TestConcurrentQueries(t *testing.T) {
	noLeaks(t)
	dir := robustDir(t)
	eng := checkedEngine(t, dir, 3, nil)
	queries := []struct {
		q    string
		want int64 // -1: an error is expected
	}{
		{"select s, count(*) from big group by s", 97},
		{"select count(*) from big b join small s on b.k = s.k", 1},
		{"select a.v from big a join big b on a.v = b.v where a.k < 10", 1600},
		{"select (select v from two) from small", -1},
		{"select v from big order by v desc limit 3", 3},
	}
	errs := make(chan error, 4*len(queries))
	done := make(chan struct{})
	for g := 0; g < 4; g++ {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range queries {
				c := queries[(i+g)%len(queries)]
				ctx, cancel := context.WithCancel(context.Background())
				if g == 3 && i%2 == 1 {
					// Stop this one early instead of reading it all.
					rows, err := eng.Query(ctx, c.q)
					if err == nil {
						rows.Next()
						cancel()
						for rows.Next() {
						}
						rows.Close()
					}
					cancel()
					continue
				}
				n, err := drain(ctx, eng, c.q)
				cancel()
				switch {
				case c.want < 0 && err == nil:
					errs <- fmt.Errorf("%s: no error", c.q)
				case c.want >= 0 && err != nil:
					errs <- fmt.Errorf("%s: %v", c.q, err)
				case c.want >= 0 && n != c.want:
					errs <- fmt.Errorf("%s: %d rows, want %d", c.q, n, c.want)
				}
			}
		}()
	}
	for g := 0; g < 4; g++ {
		<-done
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
