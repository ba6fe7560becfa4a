package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	goruntime "runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fsql-dev/fsql"
)

// defaultBenchQueries are TPC-DS queries that exercise scans, star joins
// with date/store/item dimensions, and aggregation, the shape fsql's
// partition pruning is for.
var defaultBenchQueries = []string{"3", "7", "19", "27", "34", "42", "43", "46", "52", "53",
	"55", "59", "63", "65", "68", "73", "79", "89", "96", "98"}

func benchUsage(w io.Writer) {
	fmt.Fprint(w, `usage: fsql bench tpcds [flags]

Runs TPC-DS queries several times, interleaving the runs (run 1 of every
query, then run 2, ...) so that machine noise spreads evenly, and prints
each query's median time, row count and bytes read.

flags:
  --scale S         TPC-DS scale factor (default 1); data defaults to
                    <user cache>/fsql/tpcds-sf<S>-g<generator version>, generated if missing
  --queries LIST    comma-separated query numbers, e.g. 3,7,14a, or all
                    (every qN.sql of the query folder)
                    (default `+strings.Join(defaultBenchQueries, ",")+`)
  --explain         time planning only: each query runs as EXPLAIN
                    (catalog snapshot, binding, optimizing, physical plan)
  --runs N          runs per query (default 3)
  --data DIR        data folder instead of the default
  --query-dir DIR   folder of qN.sql files (default testdata/tpcds/queries,
                    relative to the current folder: run from the repo root)
  --set KEY=VALUE   engine setting, repeatable
  --modes LIST      compare shuffle modes (execution.batch-shuffle-mode):
                    blocking, hybrid-full, hybrid-selective (or Flink's
                    ALL_EXCHANGES_* names), comma-separated
  --slots LIST      compare slot counts (taskmanager.numberOfTaskSlots),
                    e.g. 1,2,4
  --cpuprofile FILE write a CPU profile of the timed runs (go tool pprof)

With --modes or --slots the run is a matrix: one engine per slot count and
mode, --runs rounds, each round running the whole query list once per
configuration in an order that rotates every round. It prints per
configuration the summed medians of every query run, of the 20-query set
and of the multi-stage set (`+strings.Join(multiStageQueries, ",")+`) when all their
queries ran, each against blocking at the same slot count, and the
highest memory a query reserved; then every query's median per
configuration. For example, the hybrid shuffle's benchmark:

  fsql bench tpcds --data DIR --queries all --runs 5 \
    --slots 1,2,4 --modes blocking,hybrid-full,hybrid-selective
`)
}

type benchQuery struct {
	name  string // q3
	text  string
	times []time.Duration
	rows  int64
	bytes int64
	hasB  bool
	err   error
}

func runBench(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || (args[0] != "tpcds" && !strings.HasPrefix(args[0], "-")) {
		return errors.New("fsql bench needs a benchmark name: fsql bench tpcds --scale 1")
	}
	if args[0] == "tpcds" {
		args = args[1:]
	}
	fset := flag.NewFlagSet("fsql bench tpcds", flag.ContinueOnError)
	scale := fset.Float64("scale", 1, "scale factor")
	queries := fset.String("queries", strings.Join(defaultBenchQueries, ","), "query numbers")
	runs := fset.Int("runs", 3, "runs per query")
	data := fset.String("data", "", "data folder")
	queryDir := fset.String("query-dir", filepath.Join("testdata", "tpcds", "queries"), "query folder")
	explain := fset.Bool("explain", false, "time planning only (EXPLAIN)")
	cpuProfile := fset.String("cpuprofile", "", "CPU profile file")
	modeList := fset.String("modes", "", "shuffle modes to compare")
	slotList := fset.String("slots", "", "slot counts to compare")
	var sets setFlags
	fset.Var(&sets, "set", "key=value")
	if err := parseFlags(fset, args, stdout, benchUsage); err != nil {
		return err
	}
	if fset.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (see fsql bench tpcds -h)", fset.Arg(0))
	}
	if *scale <= 0 {
		return fmt.Errorf("--scale must be positive, got %v", *scale)
	}
	if *runs < 1 {
		return fmt.Errorf("--runs must be at least 1, got %d", *runs)
	}
	var modes []string
	var slots []int
	var err error
	if *modeList != "" {
		if modes, err = parseModes(*modeList); err != nil {
			return err
		}
	}
	if *slotList != "" {
		if slots, err = parseSlots(*slotList); err != nil {
			return err
		}
	}
	cfg := fsql.DefaultConfig()
	if err := sets.apply(&cfg); err != nil {
		return err
	}
	qs, err := loadBenchQueries(*queryDir, *queries)
	if err != nil {
		return err
	}
	if *explain {
		for _, q := range qs {
			q.text = "EXPLAIN " + q.text
		}
	}

	ctx, stop := interruptContext()
	defer stop()
	dir := *data
	if dir == "" {
		if dir, err = defaultDataDir(*scale, false); err != nil {
			return err
		}
		if err := ensureTPCDS(ctx, dir, *scale, stderr); err != nil {
			return err
		}
	} else if dir, err = dataDir(ctx, dir, *scale, stderr); err != nil {
		return err
	}
	var cells []*benchCell
	var eng *fsql.Engine
	if modes != nil || slots != nil {
		cells, err = newCells(dir, cfg, modes, slots)
	} else {
		eng, err = fsql.Open(dir, cfg)
	}
	if err != nil {
		return err
	}

	if *cpuProfile != "" {
		stopProfile, err := startCPUProfile(*cpuProfile)
		if err != nil {
			return err
		}
		defer stopProfile()
	}
	if cells != nil {
		if err := runMatrix(ctx, cells, qs, *runs, stderr); err != nil {
			return err
		}
		return printMatrix(stdout, cells, qs)
	}
	for r := 1; r <= *runs; r++ {
		fmt.Fprintf(stderr, "fsql: run %d of %d\n", r, *runs)
		for _, q := range qs {
			if q.err != nil {
				continue
			}
			if err := runBenchQuery(ctx, eng, q); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				q.err = err
				fmt.Fprintf(stderr, "fsql: %s: %s\n", q.name, message(err))
			}
		}
	}
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
	fmt.Fprintf(stderr, "fsql: Go heap over the process: %.2f GB allocated, %d GC cycles\n", float64(ms.TotalAlloc)/1e9, ms.NumGC)
	return printBench(stdout, qs)
}

// loadBenchQueries reads qN.sql for every listed number.
func loadBenchQueries(dir, list string) ([]*benchQuery, error) {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("query folder %s not found; run fsql bench from the repository root or pass --query-dir DIR", dir)
	}
	if strings.EqualFold(strings.TrimSpace(list), "all") {
		all, err := allQueryNames(dir)
		if err != nil {
			return nil, err
		}
		list = strings.Join(all, ",")
	}
	var qs []*benchQuery
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimPrefix(strings.ToLower(strings.TrimSpace(n)), "q")
		if n == "" {
			continue
		}
		name := "q" + n
		b, err := os.ReadFile(filepath.Join(dir, name+".sql"))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("no file %s.sql in query folder %s", name, dir)
			}
			return nil, err
		}
		text := strings.TrimRight(strings.TrimSpace(string(b)), ";")
		qs = append(qs, &benchQuery{name: name, text: text})
	}
	if len(qs) == 0 {
		return nil, errors.New("--queries lists no query")
	}
	return qs, nil
}

// allQueryNames lists the query numbers of dir's qN.sql files in numeric
// order (q1, q2, ..., q14a, q14b, ..., q99).
func allQueryNames(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "q*.sql"))
	if err != nil {
		return nil, err
	}
	type num struct {
		n    int
		name string
	}
	var out []num
	for _, f := range files {
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "q"), ".sql")
		digits := strings.TrimRightFunc(name, func(r rune) bool { return r < '0' || r > '9' })
		n, err := strconv.Atoi(digits)
		if err != nil {
			continue // not a numbered query
		}
		out = append(out, num{n, name})
	}
	slices.SortFunc(out, func(a, b num) int {
		if a.n != b.n {
			return a.n - b.n
		}
		return strings.Compare(a.name, b.name)
	})
	names := make([]string, len(out))
	for i, q := range out {
		names[i] = q.name
	}
	return names, nil
}

// runBenchQuery runs q once, draining its result, and records the time.
func runBenchQuery(ctx context.Context, eng *fsql.Engine, q *benchQuery) error {
	d, n, st, err := timeQuery(ctx, eng, q.text)
	if err != nil {
		return err
	}
	q.times = append(q.times, d)
	q.rows = n
	q.bytes, q.hasB = st.BytesRead, true
	return nil
}

// timeQuery runs text once, draining its result, and returns the wall
// time, the row count and what its scans read.
func timeQuery(ctx context.Context, eng *fsql.Engine, text string) (time.Duration, int64, fsql.ScanStats, error) {
	start := time.Now()
	rows, err := eng.Query(ctx, text)
	if err != nil {
		return 0, 0, fsql.ScanStats{}, err
	}
	var n int64
	for rows.Next() {
		n += rows.RecordBatch().NumRows()
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, 0, fsql.ScanStats{}, err
	}
	return time.Since(start), n, rows.ScanStats(), nil
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func printBench(out io.Writer, qs []*benchQuery) error {
	lines := [][]string{{"query", "median ms", "rows", "bytes read"}}
	var total time.Duration
	var totalBytes int64
	failed, allBytes := 0, true
	for _, q := range qs {
		if q.err != nil {
			failed++
			lines = append(lines, []string{q.name, "failed", "-", "-"})
			continue
		}
		m := median(q.times)
		total += m
		b := "-"
		if q.hasB {
			b = strconv.FormatInt(q.bytes, 10)
			totalBytes += q.bytes
		} else {
			allBytes = false
		}
		lines = append(lines, []string{q.name, fmt.Sprintf("%.1f", ms(m)), strconv.FormatInt(q.rows, 10), b})
	}
	tb := "-"
	if allBytes && failed < len(qs) {
		tb = strconv.FormatInt(totalBytes, 10)
	}
	lines = append(lines, []string{"total", fmt.Sprintf("%.1f", ms(total)), "", tb})
	// The query column is left-aligned, the figures right-aligned.
	width := make([]int, 4)
	for _, l := range lines {
		for i, c := range l {
			width[i] = max(width[i], len(c))
		}
	}
	var b strings.Builder
	for _, l := range lines {
		fmt.Fprintf(&b, "%-*s", width[0], l[0])
		for i := 1; i < len(l); i++ {
			fmt.Fprintf(&b, "  %*s", width[i], l[i])
		}
		b.WriteByte('\n')
	}
	if _, err := io.WriteString(out, b.String()); err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d queries failed (total covers the others)", failed, len(qs))
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// startCPUProfile profiles the process into path until the returned
// function runs; only the timed runs are profiled, not data generation.
func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
