package fsql_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsql-dev/fsql"
)

// Tables and Columns read the data directory as it is now: a table added
// after Open is listed, partition columns come last and are marked.
func TestTablesAndColumns(t *testing.T) {
	dir := t.TempDir()
	writeQty(t, filepath.Join(dir, "sales", "d=1", "000000_0"), 3, 0)
	eng, err := fsql.Open(dir, fsql.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	writeQty(t, filepath.Join(dir, "Items", "part-0.parquet"), 2, 0)
	names, err := eng.Tables()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(names, ","); got != "Items,sales" {
		t.Errorf("Tables() = %s, want Items,sales", got)
	}
	cols, err := eng.Columns(context.Background(), "SALES")
	if err != nil {
		t.Fatal(err)
	}
	if len(cols) != 2 || cols[0].Name != "qty" || cols[0].TypeName != "INT" || cols[0].Partition ||
		cols[1].Name != "d" || !cols[1].Partition {
		t.Errorf("Columns(sales) = %+v", cols)
	}
	_, err = eng.Columns(context.Background(), "nope")
	if !errors.Is(err, fsql.ErrNoTable) || !errors.Is(err, fsql.ErrUnknownName) || !strings.Contains(err.Error(), "sales") {
		t.Errorf("Columns(nope): %v, want ErrNoTable listing the tables", err)
	}
}

// Progress counts every stage and task once the rows are drained, and a
// complete answer has Fraction 1 (EXPLAIN ANALYZE too); an EXPLAIN result
// has no stages.
func TestRowsProgress(t *testing.T) {
	dir := robustDir(t)
	eng := checkedEngine(t, dir, 2, nil)
	rows, err := eng.Query(context.Background(), "select s, count(*) from big group by s")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	p := rows.Progress()
	if p.StagesTotal < 2 || p.StagesDone != p.StagesTotal || p.TasksTotal == 0 || p.TasksDone != p.TasksTotal ||
		p.Fraction != 1 || p.BytesRead == 0 {
		t.Errorf("progress after the end %+v", p)
	}
	// EXPLAIN ANALYZE runs its query while its rows are read, so its
	// progress is that run's.
	analyzed, err := eng.Query(context.Background(), "explain analyze select s, count(*) from big group by s")
	if err != nil {
		t.Fatal(err)
	}
	if p := analyzed.Progress(); p.Fraction == 1 {
		t.Errorf("EXPLAIN ANALYZE finished before its rows were read: %+v", p)
	}
	for analyzed.Next() {
	}
	if err := analyzed.Err(); err != nil {
		t.Fatal(err)
	}
	analyzed.Close()
	if p := analyzed.Progress(); p.StagesTotal < 2 || p.StagesDone != p.StagesTotal || p.Fraction != 1 || p.BytesRead == 0 {
		t.Errorf("EXPLAIN ANALYZE progress after the end %+v", p)
	}
	plan, err := eng.Query(context.Background(), "explain select count(*) from big")
	if err != nil {
		t.Fatal(err)
	}
	defer plan.Close()
	if p := plan.Progress(); p.StagesTotal != 0 || p.Fraction != 0 {
		t.Errorf("EXPLAIN progress %+v, want none", p)
	}
}
