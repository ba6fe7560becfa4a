package fsql_test

import (
	"context"
	"errors"
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
