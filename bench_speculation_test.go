package fsql_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fsql-dev/fsql"
	"github.com/fsql-dev/fsql/connectors/tpcds"
)

// specBenchDir is the data of the speculation benchmarks: with
// FSQL_BENCH_SCALE set, the flat set `fsql bench dpp` generates
// (<user cache>/fsql/tpcds-sf<S>-flat-g<generator version>, the same generator options as
// benchTPCDSDir) when it exists, else benchTPCDSDir's.
func specBenchDir(b *testing.B) (string, float64) {
	if s := os.Getenv("FSQL_BENCH_SCALE"); s != "" {
		if cache, err := os.UserCacheDir(); err == nil {
			dir := filepath.Join(cache, "fsql", tpcds.CacheFolder("tpcds-sf"+s+"-flat"))
			if _, err := os.Stat(filepath.Join(dir, "store_sales")); err == nil {
				var scale float64
				fmt.Sscan(s, &scale)
				return dir, scale
			}
		}
	}
	return benchTPCDSDir(b)
}

// specPool is the benchmarks' cluster: 4 workers of 1 slot each.
var specPool = []string{"minicluster.number-of-taskmanagers", "4", "taskmanager.numberOfTaskSlots", "1"}

// runSet runs every query once on eng and returns the wall time and the
// attempts summed over the queries.
func runSet(b *testing.B, eng *fsql.Engine, queries []string) (time.Duration, fsql.AttemptStats) {
	b.Helper()
	var total fsql.AttemptStats
	start := time.Now()
	for _, q := range queries {
		st := drainQuery(b, eng, q).Attempts()
		total.Tasks += st.Tasks
		total.Attempts += st.Attempts
		total.Speculative += st.Speculative
		total.SpeculativeWon += st.SpeculativeWon
		total.Retries += st.Retries
		total.Failed += st.Failed
	}
	return time.Since(start), total
}

// BenchmarkSpeculationTPCDS times the 20-query TPC-DS set on 4 workers of
// 1 slot each: no fault with speculation off and on; worker tm-1 slowed
// 10 times with speculation on and off; one injected failure per query
// (the first attempt of stage 1's task 0 fails after doing all its work;
// speculation off, so failover alone recovers it). 5 interleaved rounds
// (the order rotates every round), median per configuration; each
// configuration keeps one engine, so its blocklist carries from query to
// query as it would in a long-lived engine. Metrics: milliseconds for the
// set, and the ratios the README quotes.
//
//	FSQL_BENCH_SCALE=1 go test -run '^$' -bench SpeculationTPCDS -benchtime 1x -timeout 2h .
func BenchmarkSpeculationTPCDS(b *testing.B) {
	dir, scale := specBenchDir(b)
	var queries []string
	for _, q := range goldenQueries {
		text, err := os.ReadFile(filepath.Join("testdata", "tpcds", "queries", q+".sql"))
		if err != nil {
			b.Fatal(err)
		}
		queries = append(queries, strings.TrimSpace(string(text)))
	}
	slow := &fsql.Faults{SlowWorkers: map[string]float64{"tm-1": 10}}
	fail := &fsql.Faults{FailAttempt: func(stage, task, attempt int) bool { return stage == 1 && task == 0 && attempt == 0 }}
	on := []string{"execution.batch.speculative.enabled", "true"}
	off := []string{"execution.batch.speculative.enabled", "false"}
	configs := []struct {
		name   string
		kv     []string
		faults *fsql.Faults
	}{
		{"off", off, nil},
		{"on", on, nil},
		{"slow-on", on, slow},
		{"slow-off", off, slow},
		{"fail", off, fail},
	}
	engines := make([]*fsql.Engine, len(configs))
	for i, c := range configs {
		engines[i] = adaptEngine(b, dir, nil, append(append([]string(nil), specPool...), c.kv...)...)
		if c.faults != nil {
			engines[i] = engines[i].WithFaults(*c.faults)
		}
	}
	rounds := 5
	if s := os.Getenv("FSQL_BENCH_ROUNDS"); s != "" {
		fmt.Sscan(s, &rounds)
	}
	for i := 0; i < b.N; i++ {
		times := make([][]time.Duration, len(configs))
		stats := make([]fsql.AttemptStats, len(configs))
		for r := 0; r < rounds; r++ {
			for k := range configs {
				c := (k + r) % len(configs)
				d, st := runSet(b, engines[c], queries)
				times[c] = append(times[c], d)
				stats[c].Tasks += st.Tasks
				stats[c].Attempts += st.Attempts
				stats[c].Speculative += st.Speculative
				stats[c].SpeculativeWon += st.SpeculativeWon
				stats[c].Retries += st.Retries
				stats[c].Failed += st.Failed
			}
		}
		med := make([]time.Duration, len(configs))
		for c, cfg := range configs {
			med[c] = medianDuration(times[c])
			st := stats[c]
			b.ReportMetric(float64(med[c].Milliseconds()), cfg.name+"-ms")
			b.Logf("scale %g, %s: median %v of %v; per set: %.1f tasks, %.1f speculative attempts (%.1f won), %.1f failed, %.1f retries",
				scale, cfg.name, med[c].Round(time.Millisecond), times[c], float64(st.Tasks)/float64(rounds),
				float64(st.Speculative)/float64(rounds), float64(st.SpeculativeWon)/float64(rounds),
				float64(st.Failed)/float64(rounds), float64(st.Retries)/float64(rounds))
		}
		b.ReportMetric(float64(med[1])/float64(med[0]), "on/off")
		b.ReportMetric(float64(med[2])/float64(med[0]), "slow-on/off")
		b.ReportMetric(float64(med[3])/float64(med[0]), "slow-off/off")
		b.ReportMetric(float64(med[4])/float64(med[0]), "fail/off")
	}
}

// specSkewData is a join whose probe side has one hot key with 25% of its
// rows, large enough that its tasks outlast the detector's lower bound.
func specSkewData(b *testing.B) string {
	dir := b.TempDir()
	const n = 4_000_000
	fact := make([]adaptRow, n)
	for i := range fact {
		k := int64(i % 20_000)
		if i%4 == 0 {
			k = 7 // the hot key
		}
		fact[i] = adaptRow{K: k, V: int64(i), A: int64(i % 10)}
	}
	writeAdaptTable(b, dir, "fact", 8, fact)
	dim := make([]adaptRow, 20_000)
	for i := range dim {
		dim[i] = adaptRow{K: int64(i), V: int64(i * 3), A: int64(i % 50)}
	}
	writeAdaptTable(b, dir, "dim", 2, dim)
	return dir
}

// BenchmarkSpeculationSkew runs a skewed shuffled join (one hot key with
// 25% of the probe rows; skew splitting and broadcast off, so one join
// task gets about 2.3 times the median task's rows) on 4 healthy workers
// of 1 slot, with fsql's detector and with Flink 1.16's time-only rule,
// interleaved. Metrics: milliseconds per query (median) and speculative
// attempts per query (mean) of each.
//
//	go test -run '^$' -bench SpeculationSkew -benchtime 10x .
func BenchmarkSpeculationSkew(b *testing.B) {
	dir := specSkewData(b)
	settings := func(mode string) []string {
		return append(append([]string(nil), specPool...),
			"execution.batch.adaptive.auto-parallelism.enabled", "false",
			"parallelism.default", "4",
			"table.optimizer.join.broadcast-threshold", "0",
			"execution.batch.speculative.enabled", "true",
			"slow-task-detector.mode", mode)
	}
	modes := []string{"progress", "time-only"}
	engines := make([]*fsql.Engine, len(modes))
	for i, m := range modes {
		engines[i] = adaptEngine(b, dir, nil, settings(m)...)
	}
	queries := []string{skewQuery}
	for _, e := range engines {
		runSet(b, e, queries) // warm the file cache
	}
	b.ResetTimer()
	times := make([][]time.Duration, len(modes))
	copies := make([]int, len(modes))
	for i := 0; i < b.N; i++ {
		for k := range modes {
			c := (k + i) % len(modes)
			d, st := runSet(b, engines[c], queries)
			times[c] = append(times[c], d)
			copies[c] += st.Speculative
		}
	}
	for c, m := range modes {
		b.ReportMetric(float64(medianDuration(times[c]).Microseconds())/1000, m+"-ms")
		b.ReportMetric(float64(copies[c])/float64(b.N), m+"-copies/query")
		b.Logf("%s: median %v, %d speculative attempts in %d queries", m, medianDuration(times[c]).Round(time.Millisecond), copies[c], b.N)
	}
}
