package fsql_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fsql-dev/fsql"
	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/spill"
)

// spillEngine opens dir with a small budget and spill files in tmp.
func spillEngine(t *testing.T, dir, tmp, budget string) *fsql.Engine {
	t.Helper()
	return checkedEngine(t, dir, 2, func(c *fsql.Config) {
		for k, v := range map[string]string{"execution.memory.query-budget": budget, "io.tmp.dirs": tmp} {
			if err := c.Set(k, v); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// spillFolders lists the run folders (and half-made ones) left in tmp.
func spillFolders(t *testing.T, tmp string) []string {
	t.Helper()
	ents, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if strings.Contains(e.Name(), "fsql-spill-") {
			out = append(out, e.Name())
		}
	}
	return out
}

// Sorts and top-N past a tiny budget spill, give the in-memory
// answers, show what they spilled in EXPLAIN ANALYZE, and leave no file.
func TestSpillSortTopN(t *testing.T) {
	noLeaks(t)
	dir := robustDir(t)
	tmp := t.TempDir()
	mem := checkedEngine(t, dir, 2, nil)
	for _, c := range []struct{ q, op, budget string }{
		{"select v, s from big order by s, v desc", "Sort(", "3mb"},
		{"select k, v from big order by s desc, v limit 30000 offset 100", "TopN(", "3mb"},
		// The window's input is shuffled by s: the exchange's output spills
		// too, and the window computes over its spilled sort.
		{"select v, s, lag(v) over (partition by s order by v) from big order by v", "Window(", "3mb"},
	} {
		small := spillEngine(t, dir, tmp, c.budget)
		want := rowsText(t, mem, c.q)
		got := rowsText(t, small, c.q)
		if !slices.Equal(got, want) {
			t.Errorf("%s: %d rows under %s differ from the %d in memory", c.q, len(got), c.budget, len(want))
		}
		plan := strings.Join(rowsText(t, small, "explain analyze "+c.q), "\n")
		spilled := false
		for _, line := range strings.Split(plan, "\n") {
			if strings.Contains(line, c.op) && strings.Contains(line, "spilled=") && strings.Contains(line, "spill_passes=") {
				spilled = true
			}
		}
		if !spilled || !strings.Contains(plan, "; spilled ") {
			t.Errorf("%s: no spill figures on %s in\n%s", c.q, c.op, plan)
		}
		if left := spillFolders(t, tmp); len(left) != 0 {
			t.Fatalf("%s left %v in io.tmp.dirs", c.q, left)
		}
	}
}

// A spill directory that cannot be used fails the query with a
// resources error naming the directory and the setting.
func TestSpillDirectoryUnusable(t *testing.T) {
	noLeaks(t)
	dir := robustDir(t)
	file := filepath.Join(t.TempDir(), "plain-file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// Under a regular file nobody can make a directory, root included.
	bad := filepath.Join(file, "spill")
	eng := spillEngine(t, dir, bad, "3mb")
	_, err := drain(context.Background(), eng, "select v, s from big order by s, v desc")
	if !errors.Is(err, errs.Resources) || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "io.tmp.dirs") {
		t.Fatalf("want a resources error naming %s and io.tmp.dirs, got %v", bad, err)
	}
}

// Cancelling a query while it spills removes its folder; so does an
// error. Opening an engine removes the folders a crashed process left.
func TestSpillFoldersRemoved(t *testing.T) {
	noLeaks(t)
	dir := robustDir(t)
	tmp := t.TempDir()
	eng := spillEngine(t, dir, tmp, "3mb")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rows, err := eng.Query(ctx, "select v, s from big order by s, v desc")
	if err != nil {
		t.Fatal(err)
	}
	// Cancel as soon as the first spill file exists.
	deadline := time.Now().Add(30 * time.Second)
	for seen := false; !seen; {
		if time.Now().After(deadline) {
			t.Fatal("the sort never spilled")
		}
		for _, f := range spillFolders(t, tmp) {
			ents, _ := os.ReadDir(filepath.Join(tmp, f))
			seen = seen || len(ents) > 1 // the lock file and a run
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	for rows.Next() {
	}
	if err := rows.Err(); !errors.Is(err, context.Canceled) && !errors.Is(err, errs.Cancelled) {
		t.Fatalf("want cancellation, got %v", err)
	}
	rows.Close()
	if left := spillFolders(t, tmp); len(left) != 0 {
		t.Fatalf("cancelled query left %v", left)
	}

	// An error after a spill: the distinct values of v spill, while the
	// GROUP_CONCAT(DISTINCT) beside them, which cannot spill, outgrows the
	// share.
	rows, err = eng.Query(context.Background(), "select count(distinct v), group_concat(distinct s, v) from big")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
	}
	if err := rows.Err(); !errors.Is(err, errs.Resources) {
		t.Fatalf("GROUP_CONCAT(DISTINCT) of every row under 3 MiB: want a resources error, got %v", err)
	}
	rows.Close()
	if st := rows.SpillStats(); len(st) == 0 {
		t.Fatalf("the failed query spilled nothing: it no longer tests that an error removes the folder")
	}
	if left := spillFolders(t, tmp); len(left) != 0 {
		t.Fatalf("failed query left %v", left)
	}

	// A crashed process's folder: a lock file nobody holds.
	dead := filepath.Join(tmp, spill.Prefix+"999999-0123456789ab")
	if err := os.MkdirAll(dead, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dead, "owner.lock"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dead, "000001-sort-run.arrow"), []byte("junk"), 0o600); err != nil {
		t.Fatal(err)
	}
	spillEngine(t, dir, tmp, "3mb")
	if _, err := os.Stat(dead); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("opening an engine left the crashed folder %s (%v)", dead, err)
	}
}

// Hash aggregates past a tiny budget spill and give the in-memory
// answers: every mergeable function (variance to 9 digits, as merged
// float states may differ in the last one), NULL group keys, ROLLUP's
// subtotals, an empty input, DISTINCT aggregates and GROUP_CONCAT; EXPLAIN ANALYZE shows what the aggregate
// spilled; no file is left.
func TestSpillHashAggregate(t *testing.T) {
	noLeaks(t)
	dir := robustDir(t)
	tmp := t.TempDir()
	mem := checkedEngine(t, dir, 2, nil)
	small := spillEngine(t, dir, tmp, "4mb")
	for _, q := range []string{
		"select v % 40000 g, count(*), count(s), sum(k), avg(k), min(s), max(v), any_value(k % 3), bit_xor(v), " +
			"round(var_pop(k), 9), round(stddev_samp(v), 9), round(sum(v / 7), 6) from big group by g",
		"select case when v % 7 = 0 then null else v % 30000 end g, s, count(*), sum(v) from big group by g, s",
		"select k, s, count(*), sum(v) from big group by k, s with rollup",
		"select v, count(*), sum(k) from big where v < 0 group by v",
		"select v % 10000 g, count(distinct k), sum(distinct k % 10), count(distinct s), count(*), " +
			"count(distinct concat(s, 'X') collate utf8mb4_general_ci), min(s collate utf8mb4_general_ci), " +
			"group_concat(distinct s order by s), group_concat(k order by k) from big where v < 60000 group by g",
	} {
		want := rowsText(t, mem, q)
		got := rowsText(t, small, q)
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s: %d rows under 4mb differ from the %d in memory", q, len(got), len(want))
		}
		if len(want) == 0 {
			continue
		}
		plan := strings.Join(rowsText(t, small, "explain analyze "+q), "\n")
		spilled := false
		for _, line := range strings.Split(plan, "\n") {
			if strings.Contains(line, "HashAggregate(") && strings.Contains(line, "spilled=") {
				spilled = true
				t.Log(line[strings.Index(line, "  ["):])
			}
		}
		if !spilled {
			t.Errorf("%s: no spill figures on a HashAggregate in\n%s", q, plan)
		}
		if left := spillFolders(t, tmp); len(left) != 0 {
			t.Fatalf("%s left %v in io.tmp.dirs", q, left)
		}
	}
}

// A budget too small to give every operator of a task a byte (budget /
// task slots / the task's operators that hold memory rounds to 0) fails
// at once, naming the share and the setting to raise, rather than
// spilling level after level into the same refusal ("groups still
// outgrow the aggregate's share of the memory budget (0 bytes) after 8
// levels" before); a budget below the slots no longer turns division off
// ("needs 1048576 more bytes ... of its 1-byte memory budget" before).
func TestSpillNoShare(t *testing.T) {
	noLeaks(t)
	dir := robustDir(t)
	tmp := t.TempDir()
	const q = "select s, count(*) from big group by s order by s limit 3"
	for _, budget := range []string{"1", "3"} {
		eng := spillEngine(t, dir, tmp, budget)
		_, err := drain(context.Background(), eng, q)
		if !errors.Is(err, errs.Resources) || !strings.Contains(err.Error(), "a share of 0 bytes") ||
			!strings.Contains(err.Error(), "--set execution.memory.query-budget=") {
			t.Errorf("under %s bytes: want a resources error naming the share of 0 bytes and the setting, got %v", budget, err)
		}
		if left := spillFolders(t, tmp); len(left) != 0 {
			t.Fatalf("under %s bytes: left %v in io.tmp.dirs", budget, left)
		}
	}
	// A share that holds something still spills and finishes.
	mem := checkedEngine(t, dir, 2, nil)
	want := rowsText(t, mem, q)
	if got := rowsText(t, spillEngine(t, dir, tmp, "3mb"), q); !slices.Equal(got, want) {
		t.Errorf("under 3mb: %v, want %v", got, want)
	}
}
