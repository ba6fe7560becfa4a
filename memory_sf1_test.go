//go:build linux

package fsql_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql"
	"github.com/fsql-dev/fsql/connectors/tpcds"
	"github.com/fsql-dev/fsql/exec"
)

// TestQ78MemoryBudgetScale1 checks that the memory budget charges what a
// query really holds: TPC-DS q78 on generated scale-1 data (the data
// `fsql bench tpcds --scale 1` reads) runs under a budget of twice its
// measured peak RSS, and fails cleanly, with every buffer given back,
// under a budget far below what it needs. It takes a minute and needs the
// scale-1 data, so it runs only when asked:
//
//	FSQL_SF1_MEMORY=1 go test -run TestQ78MemoryBudgetScale1 -v .
//
// (generate the data first with `fsql gen tpcds --scale 1 --out DIR`, DIR
// the folder the skip message names). Run it
// alone: peak RSS is the test process's.
func TestQ78MemoryBudgetScale1(t *testing.T) {
	if os.Getenv("FSQL_SF1_MEMORY") == "" {
		t.Skip("set FSQL_SF1_MEMORY=1 to run q78 at scale 1 (needs <user cache>/fsql/tpcds-sf1-g<generator version>)")
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(cache, "fsql", tpcds.CacheFolder("tpcds-sf1"))
	if _, err := os.Stat(filepath.Join(dir, "store_sales")); err != nil {
		t.Skipf("no scale-1 data in %s; generate it with: fsql gen tpcds --scale 1 --out %s", dir, dir)
	}
	text, err := os.ReadFile(filepath.Join("testdata", "tpcds", "queries", "q78.sql"))
	if err != nil {
		t.Fatal(err)
	}
	q := string(text)
	run := func(budget int64, alloc memory.Allocator) (int64, int64, error) {
		cfg := fsql.DefaultConfig()
		cfg.MemoryBudget = budget
		eng, err := fsql.Open(dir, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if alloc != nil {
			eng = eng.WithAllocator(alloc)
		}
		n, err := drain(context.Background(), eng, q)
		return n, peakRSS(t), err
	}
	// Unlimited, to measure.
	n, rss, err := run(0, nil)
	if err != nil || n != 100 {
		t.Fatalf("q78 unlimited: %d rows, %v", n, err)
	}
	t.Logf("q78 peak RSS %d MiB", rss>>20)
	if n, _, err := run(2*rss, nil); err != nil || n != 100 {
		t.Fatalf("q78 under a budget of twice its peak RSS (%d MiB): %d rows, %v", 2*rss>>20, n, err)
	}
	// Far too small: a clean ErrResourcesExhausted, nothing leaked.
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	if _, _, err := run(rss/64, mem); !errors.Is(err, exec.ErrResourcesExhausted) {
		t.Fatalf("q78 under %d MiB: want resources exhausted, got %v", rss/64>>20, err)
	}
	mem.AssertSize(t, 0)
}

// peakRSS is the process's peak resident set size in bytes.
func peakRSS(t *testing.T) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return ru.Maxrss << 10 // kilobytes on Linux
}
