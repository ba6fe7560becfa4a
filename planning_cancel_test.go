package fsql_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fsql-dev/fsql"
)

// slowToPlan is an EXPLAIN whose planning takes seconds while its text
// parses in a small fraction of that: a CTE whose WHERE is a long OR of
// ANDs, referenced refs times (each reference binds and plans the body
// anew).
func slowToPlan(terms, refs int) string {
	var sb strings.Builder
	sb.WriteString("explain with c as (select k, v from small where ")
	for i := 0; i < terms; i++ {
		if i > 0 {
			sb.WriteString(" or ")
		}
		fmt.Fprintf(&sb, "(k = %d and v > %d)", i, i)
	}
	sb.WriteString(") select count(*) from c c0")
	for i := 1; i < refs; i++ {
		fmt.Fprintf(&sb, " join c c%d on c%d.k = c0.k", i, i)
	}
	return sb.String()
}

func cancelEngine(t *testing.T) *fsql.Engine {
	t.Helper()
	dir := t.TempDir()
	rows := make([]bigRow, 100)
	for i := range rows {
		rows[i] = bigRow{K: int64(i), V: int64(i), S: "x"}
	}
	writeRows(t, filepath.Join(dir, "small", "part-0.parquet"), rows)
	eng, err := fsql.Open(dir, fsql.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fsql.WaitBackgroundParses)
	return eng
}

// TestPlanningDeadline: a deadline that passes while a query is being
// planned ends the query with context.DeadlineExceeded at once, not when
// planning would have finished. The bound has a margin for a loaded
// machine; the property is that planning checks its context.
func TestPlanningDeadline(t *testing.T) {
	if testing.Short() {
		t.Skip("plans for a second")
	}
	eng := cancelEngine(t)
	q := slowToPlan(20000, 12)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	rows, err := eng.Query(ctx, q)
	took := time.Since(start)
	if err == nil {
		rows.Close()
		t.Fatalf("planning finished within the deadline (%v): the query is not slow enough to test it", took)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want context.DeadlineExceeded", err)
	}
	t.Logf("returned %v after the start, deadline 1s", took)
	if took > 1500*time.Millisecond {
		t.Errorf("returned %v after the start with a 1 s deadline: planning does not check its context often enough", took)
	}
}

// TestPlanningCancel: cancelling the context while the statement is being
// planned stops planning.
func TestPlanningCancel(t *testing.T) {
	if testing.Short() {
		t.Skip("plans for a while")
	}
	eng := cancelEngine(t)
	q := slowToPlan(20000, 12)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	_, err := eng.Query(ctx, q)
	took := time.Since(start)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v after %v, want context.Canceled", err, took)
	}
	if took > 800*time.Millisecond {
		t.Errorf("returned %v after the start, cancelled at 300ms", took)
	}
}

// TestPlanningFinishes: the same shape, small, plans and explains.
func TestPlanningFinishes(t *testing.T) {
	eng := cancelEngine(t)
	rows, err := eng.Query(context.Background(), slowToPlan(50, 3))
	if err != nil {
		t.Fatal(err)
	}
	rows.Close()
}
