package fsql_test

import (
	"context"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/fsql-dev/fsql"
	"github.com/fsql-dev/fsql/exec"
)

// TestKeyGroupsDefault: with pipeline.max-parallelism unset (the default),
// the key-group count is Flink's computeDefaultMaxParallelism of the
// parallelism in force, so any parallelism.default works with adaptive
// scheduling off; an explicit count below the parallelism still fails.
func TestKeyGroupsDefault(t *testing.T) {
	dir := robustDir(t)
	for _, c := range []struct {
		parallelism, keyGroups int
	}{
		{1, 128}, {100, 256}, {200, 512}, {5000, 8192},
	} {
		cfg := fsql.DefaultConfig()
		if cfg.MaxParallelism != 0 {
			t.Fatalf("pipeline.max-parallelism defaults to %d, want 0 (unset)", cfg.MaxParallelism)
		}
		for _, kv := range [][2]string{
			{"execution.batch.adaptive.auto-parallelism.enabled", "false"},
			{"parallelism.default", strconv.Itoa(c.parallelism)},
			{"taskmanager.numberOfTaskSlots", "4"},
		} {
			if err := cfg.Set(kv[0], kv[1]); err != nil {
				t.Fatal(err)
			}
		}
		if got := cfg.KeyGroups(); got != c.keyGroups {
			t.Errorf("parallelism %d: %d key groups, want %d", c.parallelism, got, c.keyGroups)
		}
		eng, err := fsql.Open(dir, cfg)
		if err != nil {
			t.Fatalf("parallelism %d: %v", c.parallelism, err)
		}
		n, err := drain(context.Background(), eng, "select k, count(*) from small group by k")
		if err != nil || n != 1000 {
			t.Fatalf("parallelism %d: %d rows, %v", c.parallelism, n, err)
		}
	}
	// Explicit values: auto and 0 unset it; one below the parallelism fails.
	cfg := fsql.DefaultConfig()
	for _, v := range []string{"64", "auto", "0"} {
		if err := cfg.Set("pipeline.max-parallelism", v); err != nil {
			t.Fatalf("%s: %v", v, err)
		}
	}
	if cfg.MaxParallelism != 0 {
		t.Fatalf("max parallelism %d after auto/0", cfg.MaxParallelism)
	}
	if err := cfg.Set("pipeline.max-parallelism", "-3"); err == nil {
		t.Fatal("-3 accepted")
	}
	for _, kv := range [][2]string{
		{"execution.batch.adaptive.auto-parallelism.enabled", "false"},
		{"parallelism.default", "200"},
		{"pipeline.max-parallelism", "128"},
	} {
		if err := cfg.Set(kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := fsql.Open(dir, cfg); !errors.Is(err, exec.ErrPlan) || !strings.Contains(err.Error(), "parallelism 200 is above the max parallelism (number of key groups) 128") {
		t.Fatalf("explicit key groups below the parallelism: %v", err)
	}
}

// TestTaskManagers: minicluster.number-of-taskmanagers runs that many
// in-process workers, and EXPLAIN ANALYZE says on which each stage's
// attempts ran.
func TestTaskManagers(t *testing.T) {
	dir := robustDir(t)
	cfg := fsql.DefaultConfig()
	if cfg.TaskManagers != 1 {
		t.Fatalf("default task managers %d, want 1", cfg.TaskManagers)
	}
	for _, kv := range [][2]string{
		{"minicluster.number-of-taskmanagers", "2"},
		{"taskmanager.numberOfTaskSlots", "1"},
		{"execution.batch.adaptive.auto-parallelism.enabled", "false"},
		{"parallelism.default", "4"},
		// A copy of an attempt a loaded machine delays would change the
		// counts below.
		{"execution.batch.speculative.enabled", "false"},
	} {
		if err := cfg.Set(kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	eng, err := fsql.Open(dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := eng.Query(context.Background(), "explain analyze select k, count(*) from big group by k")
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for rows.Next() {
		b := rows.RecordBatch()
		for i := 0; i < int(b.NumRows()); i++ {
			text.WriteString(b.Column(0).ValueStr(i) + "\n")
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	// Both workers' single slots take attempts; how many each gets
	// depends on which finishes first.
	if !regexp.MustCompile(`attempts on workers: tm-0 \([1-3]\), tm-1 \([1-3]\)`).MatchString(text.String()) {
		t.Fatalf("EXPLAIN ANALYZE does not show the attempts spread over both workers:\n%s", text.String())
	}
}
