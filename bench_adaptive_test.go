package fsql_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fsql-dev/fsql"
	"github.com/fsql-dev/fsql/connectors/tpcds"
)

// benchTPCDSDir is the TPC-DS data the adaptive benchmark reads: the
// golden scale by default, or FSQL_BENCH_SCALE (generated once into the
// user's cache folder, which takes minutes at scale 1).
func benchTPCDSDir(b *testing.B) (string, float64) {
	b.Helper()
	s := os.Getenv("FSQL_BENCH_SCALE")
	if s == "" {
		return tpcdsData(b), goldenScale
	}
	scale, err := strconv.ParseFloat(s, 64)
	if err != nil || scale < 0.01 {
		b.Fatalf("FSQL_BENCH_SCALE=%q: want a scale factor of at least 0.01", s)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "fsql", fmt.Sprintf("tpcds-sf%g-seed%d-flat", scale, goldenSeed))
	if _, err := os.Stat(filepath.Join(dir, "store_sales")); err != nil {
		if err := tpcds.Generate(context.Background(), tpcds.Options{
			Scale: scale, Out: dir, Partitioned: false, RowGroupRows: 122880, Seed: goldenSeed,
		}); err != nil {
			b.Fatalf("generating TPC-DS data: %v", err)
		}
	}
	return dir, scale
}

// drainQuery runs q on eng to its last row, failing b on any error, and
// returns the closed rows: their statistics stay readable.
func drainQuery(b *testing.B, eng *fsql.Engine, q string) *fsql.Rows {
	b.Helper()
	rows, err := eng.Query(context.Background(), q)
	if err != nil {
		b.Fatal(err)
	}
	for rows.Next() {
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	rows.Close()
	return rows
}

// runAll runs every golden query once and returns the wall time.
func runAll(b *testing.B, eng *fsql.Engine, queries []string) time.Duration {
	b.Helper()
	start := time.Now()
	for _, q := range queries {
		drainQuery(b, eng, q)
	}
	return time.Since(start)
}

func medianDuration(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// BenchmarkAdaptiveTPCDS times TPC-DS queries with the adaptive scheduler
// against fixed parallelism 1, 2, 4 and 16 (issue 14's target: adaptive at
// most 0.95x the best fixed setting): after one uncounted warm-up round,
// 5 interleaved rounds (the config order rotates every round), median per
// config. The metrics are
// milliseconds for the whole set and adaptive/best-fixed.
//
// By default the foundation's 20 queries on benchTPCDSDir's data;
// FSQL_BENCH_DATA names another dataset folder (for example the
// Hive-partitioned or the flat scale-1 set `make bench-vs-duckdb`
// generates), FSQL_BENCH_QUERIES=all runs all 103 statements, and
// FSQL_BENCH_ROUNDS sets the rounds.
//
//	go test -run '^$' -bench AdaptiveTPCDS -benchtime 1x .
//	FSQL_BENCH_SCALE=1 go test -run '^$' -bench AdaptiveTPCDS -benchtime 1x -timeout 1h .
//	FSQL_BENCH_DATA=$HOME/.cache/fsql/tpcds-sf1 FSQL_BENCH_QUERIES=all FSQL_BENCH_ROUNDS=3 \
//	  go test -run '^$' -bench AdaptiveTPCDS -benchtime 1x -timeout 3h .
func BenchmarkAdaptiveTPCDS(b *testing.B) {
	dir, scale := benchTPCDSDir(b)
	if d := os.Getenv("FSQL_BENCH_DATA"); d != "" {
		dir, scale = d, 0
	}
	names := goldenQueries
	if os.Getenv("FSQL_BENCH_QUERIES") == "all" {
		files, err := filepath.Glob(filepath.Join("testdata", "tpcds", "queries", "q*.sql"))
		if err != nil {
			b.Fatal(err)
		}
		names = nil
		for _, f := range files {
			names = append(names, strings.TrimSuffix(filepath.Base(f), ".sql"))
		}
	}
	var queries []string
	for _, q := range names {
		text, err := os.ReadFile(filepath.Join("testdata", "tpcds", "queries", q+".sql"))
		if err != nil {
			b.Fatal(err)
		}
		queries = append(queries, strings.TrimSpace(string(text)))
	}
	fixed := func(p string) []string {
		return []string{"execution.batch.adaptive.auto-parallelism.enabled", "false", "parallelism.default", p}
	}
	configs := []struct {
		name string
		kv   []string
	}{
		{"adaptive", nil},
		{"fixed-p1", fixed("1")},
		{"fixed-p2", fixed("2")},
		{"fixed-p4", fixed("4")},
		{"fixed-p16", fixed("16")},
	}
	engines := make([]*fsql.Engine, len(configs))
	for i, c := range configs {
		engines[i] = adaptEngine(b, dir, nil, c.kv...)
	}
	rounds := 5
	if s := os.Getenv("FSQL_BENCH_ROUNDS"); s != "" {
		if n, err := strconv.Atoi(s); err != nil || n < 1 {
			b.Fatalf("FSQL_BENCH_ROUNDS=%q: want a positive number of rounds", s)
		} else {
			rounds = n
		}
	}
	// One uncounted round first: each engine's first run pays for the
	// catalog and the footer cache, which the rounds after it do not.
	for c := range configs {
		runAll(b, engines[c], queries)
	}
	for i := 0; i < b.N; i++ {
		times := make([][]time.Duration, len(configs))
		for r := 0; r < rounds; r++ {
			for k := range configs {
				c := (k + r) % len(configs)
				times[c] = append(times[c], runAll(b, engines[c], queries))
			}
		}
		best := time.Duration(1<<63 - 1)
		for c := range configs {
			if c > 0 {
				best = min(best, medianDuration(times[c]))
			}
		}
		for c, cfg := range configs {
			m := medianDuration(times[c])
			b.ReportMetric(float64(m.Milliseconds()), cfg.name+"-ms")
			b.Logf("%s (scale %g), %d statements, %s: median %v of %v", dir, scale, len(queries), cfg.name, m.Round(time.Millisecond), times[c])
		}
		b.ReportMetric(float64(medianDuration(times[0]))/float64(best), "adaptive/best-fixed")
	}
}

// BenchmarkSkewJoin times a join whose probe side has one key holding 25%
// of its rows, with the skewed key group split across tasks and without,
// interleaved (one query of each per iteration, so warm-up and other load
// fall on both alike). Metrics: milliseconds per query.
func BenchmarkSkewJoin(b *testing.B) {
	dir := skewData(b)
	engines := []*fsql.Engine{
		adaptEngine(b, dir, nil, skewSettings("64kb")...),
		adaptEngine(b, dir, nil, skewSettings("1gb")...),
	}
	run := func(eng *fsql.Engine) time.Duration {
		start := time.Now()
		rows, err := eng.Query(context.Background(), skewQuery)
		if err != nil {
			b.Fatal(err)
		}
		for rows.Next() {
		}
		if err := rows.Err(); err != nil {
			b.Fatal(err)
		}
		rows.Close()
		return time.Since(start)
	}
	run(engines[0])
	run(engines[1])
	b.ResetTimer()
	times := [2][]time.Duration{}
	for i := 0; i < b.N; i++ {
		for k := range engines {
			c := (k + i) % 2
			times[c] = append(times[c], run(engines[c]))
		}
	}
	b.ReportMetric(float64(medianDuration(times[0]).Microseconds())/1000, "split-ms")
	b.ReportMetric(float64(medianDuration(times[1]).Microseconds())/1000, "unsplit-ms")
}
