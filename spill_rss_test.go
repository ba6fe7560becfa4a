//go:build linux

package fsql_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsql-dev/fsql"
)

// TestSpillRSSScale1 is issue 12's resident-memory proof: TPC-DS
// statements on generated scale-1 data (the flat layout `fsql gen tpcds
// --scale 1 --partitioned=false` writes) at the default budget, then at
// 1/4 and 1/16 of the peak the query reserved there. Each run is a fresh
// child process (this test binary again), so its peak RSS (the kernel's
// maxrss of the child) is the query's alone. It prints, per run, the
// time, the peak reservation, the peak RSS and RSS minus the budget, and
// the bytes spilled. It takes many minutes, so it runs only when asked:
//
//	FSQL_SPILL_RSS=1 go test -run TestSpillRSSScale1 -v -timeout 2h .
//
// FSQL_SPILL_RSS_QUERIES overrides the statements (comma-separated).
func TestSpillRSSScale1(t *testing.T) {
	if os.Getenv("FSQL_SPILL_RSS") == "" {
		t.Skip("set FSQL_SPILL_RSS=1 to measure peak RSS under spilling at scale 1")
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(cache, "fsql", "tpcds-sf1-flat")
	if _, err := os.Stat(filepath.Join(dir, "store_sales")); err != nil {
		t.Skipf("no scale-1 data in %s; generate it with: fsql gen tpcds --scale 1 --partitioned=false --out %s", dir, dir)
	}
	queries := []string{"q4", "q23a", "q64", "q67", "q78"}
	if q := os.Getenv("FSQL_SPILL_RSS_QUERIES"); q != "" {
		queries = strings.Split(q, ",")
	}
	t.Logf("%-5s %-8s %10s %10s %10s %10s %12s %10s", "query", "budget", "time", "reserved", "rss", "rss-budget", "spilled", "rows")
	for _, q := range queries {
		base := rssChild(t, dir, q, 0)
		if base.Err != "" {
			t.Errorf("%s at the default budget: %s", q, base.Err)
			continue
		}
		logRSS(t, q, "default", base, fsql.DefaultConfig().MemoryBudget)
		for _, div := range []int64{4, 16} {
			budget := base.Peak / div
			r := rssChild(t, dir, q, budget)
			if r.Err != "" {
				t.Logf("%-5s 1/%-6d failed under %d MiB after %s: %s", q, div, budget>>20, r.Time, r.Err)
				continue
			}
			if r.Rows != base.Rows {
				t.Errorf("%s under 1/%d: %d rows, %d at the default budget", q, div, r.Rows, base.Rows)
			}
			logRSS(t, q, "1/"+strconv.FormatInt(div, 10), r, budget)
		}
	}
}

// logRSS prints one run; RSS over the budget means nothing at the
// default budget, far above what any statement here holds.
func logRSS(t *testing.T, q, name string, r rssResult, budget int64) {
	over := "-"
	if name != "default" {
		over = strconv.FormatInt((r.RSS-budget)>>20, 10) + "Mi"
	}
	t.Logf("%-5s %-8s %10s %8dMi %8dMi %10s %10dMi %10d", q, name, r.Time.Round(time.Millisecond), r.Peak>>20, r.RSS>>20, over, r.Spilled>>20, r.Rows)
}

// rssResult is what one child run reports.
type rssResult struct {
	Rows    int64
	Peak    int64 // the query's peak reservation
	Spilled int64 // bytes written to spill files, all operators
	Time    time.Duration
	Err     string
	RSS     int64 `json:"-"` // the child's peak RSS, filled by the parent
}

// rssChild runs query q under budget (0: the default) in a child process
// and returns its report with the child's peak RSS.
func rssChild(t *testing.T, dir, q string, budget int64) rssResult {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestSpillRSSChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), "FSQL_RSS_CHILD=1", "FSQL_RSS_DIR="+dir, "FSQL_RSS_QUERY="+q,
		"FSQL_RSS_BUDGET="+strconv.FormatInt(budget, 10), "FSQL_RSS_TMP="+t.TempDir())
	out, err := cmd.Output()
	if err != nil && cmd.ProcessState == nil {
		t.Fatalf("%s: %v", q, err)
	}
	var r rssResult
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(line, "RSS-RESULT "); ok {
			if err := json.Unmarshal([]byte(rest), &r); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	if r.Time == 0 && r.Err == "" {
		r.Err = fmt.Sprintf("child failed: %v\n%s", err, out)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.RSS = ru.Maxrss << 10 // KiB on Linux
	}
	return r
}

// TestSpillRSSChild is the child of TestSpillRSSScale1: it runs one
// query and prints its report.
func TestSpillRSSChild(t *testing.T) {
	if os.Getenv("FSQL_RSS_CHILD") == "" {
		t.Skip("run by TestSpillRSSScale1")
	}
	q := os.Getenv("FSQL_RSS_QUERY")
	text, err := os.ReadFile(filepath.Join("testdata", "tpcds", "queries", q+".sql"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := fsql.DefaultConfig()
	if b, _ := strconv.ParseInt(os.Getenv("FSQL_RSS_BUDGET"), 10, 64); b > 0 {
		cfg.MemoryBudget = b
	}
	if err := cfg.Set("io.tmp.dirs", os.Getenv("FSQL_RSS_TMP")); err != nil {
		t.Fatal(err)
	}
	eng, err := fsql.Open(os.Getenv("FSQL_RSS_DIR"), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var r rssResult
	start := time.Now()
	rows, err := eng.Query(context.Background(), strings.TrimSpace(string(text)))
	if err == nil {
		for rows.Next() {
			r.Rows += rows.RecordBatch().NumRows()
		}
		err = rows.Err()
		r.Peak = rows.MemoryPeak()
		for _, op := range rows.SpillStats() {
			r.Spilled += op.Bytes
		}
		rows.Close()
	}
	r.Time = time.Since(start)
	if err != nil {
		r.Err = err.Error()
	}
	b, _ := json.Marshal(r)
	fmt.Printf("RSS-RESULT %s\n", b)
}
