package main

// The side-by-side benchmark: fsql against DuckDB on the same TPC-DS data,
// same cores, interleaved.
//
// Each engine runs in a child process of its own (this binary, started as
// `oracle serve fsql|duckdb`), which opens the data once and then runs the
// queries the parent names on its stdin, one at a time. Separate processes
// give each engine its own peak memory: before every query the child resets
// its resident-set high-water mark (writing 5 to /proc/self/clear_refs) and
// reads it back (VmHWM) after the last row; each child first returns
// the Go heap earlier statements freed (debug.FreeOSMemory; --keep-heap
// skips that, to see what fresh pages cost fsql). CPU time is the child's own
// user+system time over the query (getrusage). Both children stay up for the
// whole run, so both engines run warm, as in a long-lived service or library
// user; the first round is a warm-up that is not counted.
//
// The parent interleaves the engines query by query (fsql qN, DuckDB qN,
// fsql qN+1, ...) in every round, so a noisy neighbour slows both alike, and
// reports per query the median over rounds of wall time, CPU time and peak
// memory, the ratio fsql/DuckDB, and the totals over all statements and over
// the 20-query star set.

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fsql-dev/fsql"
)

// starSet is the 20-query set of `fsql bench tpcds` (cmd/fsql/bench.go).
var starSet = []string{"q3", "q7", "q19", "q27", "q42", "q43", "q52", "q53", "q55", "q59",
	"q63", "q65", "q68", "q73", "q79", "q89", "q96", "q98", "q34", "q46"}

func benchMain(args []string) error {
	fs := flag.NewFlagSet("oracle bench", flag.ContinueOnError)
	layouts := fs.String("data", "", "comma-separated data folders to run, e.g. the partitioned and the flat layout")
	queries := fs.String("queries", "testdata/tpcds", "folder holding queries/ and duckdb/")
	only := fs.String("only", "", "comma-separated query names (default: all statements)")
	rounds := fs.Int("runs", 3, "counted rounds (after one warm-up round)")
	threads := fs.Int("threads", 2, "threads of each engine: DuckDB threads, fsql GOMAXPROCS and task slots")
	timeout := fs.Duration("timeout", 10*time.Minute, "per-query limit; a query over it counts as failed")
	set := fs.String("set", "", "extra fsql settings, comma-separated key=value")
	keepHeap := fs.Bool("keep-heap", false, "do not return the Go heap to the OS before each statement (fsql then reuses warm pages; the peak memory column then includes earlier statements' heap)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *keepHeap {
		// The children inherit the environment (startChild).
		os.Setenv(keepHeapEnv, "1")
	}
	if *layouts == "" {
		return errors.New("--data is required (one or more dataset folders, comma-separated)")
	}
	names, err := queryNames(*queries, *only)
	if err != nil {
		return err
	}
	for _, dir := range strings.Split(*layouts, ",") {
		if err := benchLayout(dir, *queries, names, *rounds, *threads, *timeout, *set); err != nil {
			return fmt.Errorf("%s: %w", dir, err)
		}
	}
	return nil
}

func queryNames(queries, only string) ([]string, error) {
	if only != "" {
		return strings.Split(only, ","), nil
	}
	files, err := filepath.Glob(filepath.Join(queries, "queries", "q*.sql"))
	if err != nil {
		return nil, err
	}
	sort.Slice(files, func(i, j int) bool { return queryOrder(files[i]) < queryOrder(files[j]) })
	var out []string
	for _, f := range files {
		out = append(out, strings.TrimSuffix(filepath.Base(f), ".sql"))
	}
	return out, nil
}

// measurement is what a child reports for one query.
type measurement struct {
	Query string `json:"query"`
	Rows  int64  `json:"rows"`
	Wall  int64  `json:"wall_ns"`
	CPU   int64  `json:"cpu_ns"`
	Peak  int64  `json:"peak_bytes"` // VmHWM over the query
	Err   string `json:"error,omitempty"`
}

type child struct {
	name string
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Scanner
}

func startChild(engine, data, queries string, threads int, set string) (*child, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, "serve", "--engine", engine, "--data", data, "--queries", queries,
		"--threads", strconv.Itoa(threads), "--set", set)
	cmd.Env = append(os.Environ(), "GOMAXPROCS="+strconv.Itoa(threads))
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(outPipe)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	c := &child{name: engine, cmd: cmd, in: in, out: sc}
	// The child says "ready" once its data is open.
	if !sc.Scan() || sc.Text() != "ready" {
		c.stop()
		return nil, fmt.Errorf("%s child did not start: %v", engine, sc.Err())
	}
	return c, nil
}

func (c *child) run(q string, timeout time.Duration) measurement {
	fmt.Fprintln(c.in, q)
	got := make(chan measurement, 1)
	go func() {
		var m measurement
		if !c.out.Scan() {
			m.Err = fmt.Sprintf("%s child ended: %v", c.name, c.out.Err())
		} else if err := json.Unmarshal(c.out.Bytes(), &m); err != nil {
			m.Err = err.Error()
		}
		got <- m
	}()
	select {
	case m := <-got:
		m.Query = q
		return m
	case <-time.After(timeout):
		c.cmd.Process.Kill()
		return measurement{Query: q, Err: "timeout"}
	}
}

func (c *child) stop() {
	c.in.Close()
	done := make(chan struct{})
	go func() { c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		c.cmd.Process.Kill()
		<-done
	}
}

func benchLayout(data, queries string, names []string, rounds, threads int, timeout time.Duration, set string) error {
	engines := []string{"fsql", "duckdb"}
	children := map[string]*child{}
	start := func(e string) error {
		c, err := startChild(e, data, queries, threads, set)
		if err != nil {
			return err
		}
		children[e] = c
		return nil
	}
	for _, e := range engines {
		if err := start(e); err != nil {
			return err
		}
	}
	defer func() {
		for _, c := range children {
			c.stop()
		}
	}()
	res := map[string]map[string][]measurement{"fsql": {}, "duckdb": {}}
	failed := map[string]map[string]string{"fsql": {}, "duckdb": {}}
	fmt.Printf("# %s: %d statements, %d counted rounds after a warm-up, %d threads each\n", data, len(names), rounds, threads)
	for r := 0; r <= rounds; r++ {
		for _, q := range names {
			for _, e := range engines {
				if failed[e][q] != "" {
					continue
				}
				m := children[e].run(q, timeout)
				if m.Err != "" {
					failed[e][q] = m.Err
					if m.Err == "timeout" || strings.Contains(m.Err, "child ended") {
						children[e].stop()
						if err := start(e); err != nil {
							return err
						}
					}
					continue
				}
				if r > 0 {
					res[e][q] = append(res[e][q], m)
				}
			}
		}
		if r == 0 {
			fmt.Printf("# warm-up done\n")
		}
	}
	report(os.Stdout, names, res, failed)
	return nil
}

type summary struct{ wall, cpu, peak, rows int64 }

func medianOf(ms []measurement) summary {
	pick := func(f func(measurement) int64) int64 {
		v := make([]int64, len(ms))
		for i, m := range ms {
			v[i] = f(m)
		}
		sort.Slice(v, func(a, b int) bool { return v[a] < v[b] })
		return v[len(v)/2]
	}
	return summary{
		wall: pick(func(m measurement) int64 { return m.Wall }),
		cpu:  pick(func(m measurement) int64 { return m.CPU }),
		peak: pick(func(m measurement) int64 { return m.Peak }),
		rows: ms[0].Rows,
	}
}

func report(w io.Writer, names []string, res map[string]map[string][]measurement, failed map[string]map[string]string) {
	fmt.Fprintf(w, "%-6s %10s %10s %7s %10s %10s %7s %9s %9s %7s %s\n",
		"query", "fsql ms", "duckdb ms", "ratio", "fsql cpu", "duck cpu", "ratio", "fsql MiB", "duck MiB", "ratio", "note")
	type total struct {
		f, d         summary
		n            int
		over2, memx2 []string
	}
	var all, star total
	inStar := map[string]bool{}
	for _, q := range starSet {
		inStar[q] = true
	}
	for _, q := range names {
		fm, dm := res["fsql"][q], res["duckdb"][q]
		if len(fm) == 0 || len(dm) == 0 {
			fmt.Fprintf(w, "%-6s failed: fsql=%q duckdb=%q\n", q, failed["fsql"][q], failed["duckdb"][q])
			continue
		}
		f, d := medianOf(fm), medianOf(dm)
		note := ""
		if f.rows != d.rows {
			note = fmt.Sprintf("rows differ: fsql %d, duckdb %d", f.rows, d.rows)
		}
		fmt.Fprintf(w, "%-6s %10.1f %10.1f %7.2f %10.1f %10.1f %7.2f %9.1f %9.1f %7.2f %s\n", q,
			ms(f.wall), ms(d.wall), ratio(f.wall, d.wall), ms(f.cpu), ms(d.cpu), ratio(f.cpu, d.cpu),
			mib(f.peak), mib(d.peak), ratio(f.peak, d.peak), note)
		for _, t := range []*total{&all, &star} {
			if t == &star && !inStar[q] {
				continue
			}
			t.f.wall += f.wall
			t.d.wall += d.wall
			t.f.cpu += f.cpu
			t.d.cpu += d.cpu
			t.n++
			if ratio(f.wall, d.wall) > 2 {
				t.over2 = append(t.over2, q)
			}
			if ratio(f.peak, d.peak) > 2 {
				t.memx2 = append(t.memx2, q)
			}
		}
	}
	for _, t := range []struct {
		name string
		t    *total
	}{{"all", &all}, {"star20", &star}} {
		fmt.Fprintf(w, "total %-6s %d statements: fsql %.2fs, duckdb %.2fs, ratio %.2f; cpu fsql %.2fs, duckdb %.2fs, ratio %.2f; over 2x: %v; memory over 2x: %v\n",
			t.name, t.t.n, sec(t.t.f.wall), sec(t.t.d.wall), ratio(t.t.f.wall, t.t.d.wall),
			sec(t.t.f.cpu), sec(t.t.d.cpu), ratio(t.t.f.cpu, t.t.d.cpu), t.t.over2, t.t.memx2)
	}
}

func ms(ns int64) float64  { return float64(ns) / 1e6 }
func sec(ns int64) float64 { return float64(ns) / 1e9 }
func mib(b int64) float64  { return float64(b) / (1 << 20) }
func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// keepHeapEnv tells a child not to return the Go heap to the OS before
// each statement (bench --keep-heap).
const keepHeapEnv = "FSQL_ORACLE_KEEP_HEAP"

// serveMain is the child: open the data, then answer one query name per
// stdin line with one JSON measurement per stdout line.
func serveMain(args []string) error {
	fs := flag.NewFlagSet("oracle serve", flag.ContinueOnError)
	engine := fs.String("engine", "", "fsql or duckdb")
	data := fs.String("data", "", "dataset folder")
	queries := fs.String("queries", "testdata/tpcds", "folder holding queries/ and duckdb/")
	threads := fs.Int("threads", 2, "threads")
	set := fs.String("set", "", "extra fsql settings, comma-separated key=value")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var run func(ctx context.Context, text string) (int64, error)
	switch *engine {
	case "fsql":
		runtime.GOMAXPROCS(*threads)
		cfg := fsql.DefaultConfig()
		if err := applySettings(&cfg, "taskmanager.numberOfTaskSlots="+strconv.Itoa(*threads), *set); err != nil {
			return err
		}
		eng, err := fsql.Open(*data, cfg)
		if err != nil {
			return err
		}
		run = func(ctx context.Context, text string) (int64, error) {
			rows, err := eng.Query(ctx, text)
			if err != nil {
				return 0, err
			}
			defer rows.Close()
			var n int64
			for rows.Next() {
				n += rows.RecordBatch().NumRows()
			}
			return n, rows.Err()
		}
	case "duckdb":
		db, err := openDuckDB(context.Background(), *data)
		if err != nil {
			return err
		}
		defer db.Close()
		// DuckDB's footer cache is off by default; fsql keeps footers
		// across queries, so DuckDB gets to as well.
		for _, q := range []string{fmt.Sprintf("SET threads=%d", *threads), "SET parquet_metadata_cache=true"} {
			if _, err := db.Exec(q); err != nil {
				return err
			}
		}
		run = func(ctx context.Context, text string) (int64, error) {
			rows, err := db.QueryContext(ctx, text)
			if err != nil {
				return 0, err
			}
			defer rows.Close()
			cols, _ := rows.Columns()
			dest := make([]any, len(cols))
			for i := range dest {
				dest[i] = new(any)
			}
			var n int64
			for rows.Next() {
				if err := rows.Scan(dest...); err != nil {
					return n, err
				}
				n++
			}
			return n, rows.Err()
		}
	default:
		return fmt.Errorf("--engine must be fsql or duckdb, got %q", *engine)
	}
	fmt.Println("ready")
	in := bufio.NewScanner(os.Stdin)
	enc := json.NewEncoder(os.Stdout)
	for in.Scan() {
		q := strings.TrimSpace(in.Text())
		text, err := queryText(*queries, q, *engine == "duckdb")
		m := measurement{Query: q}
		if err == nil {
			// The Go runtime keeps a freed heap mapped until its
			// scavenger returns it, which an idle process never gets to:
			// after q78 the child holds 1.3 GB that q43 would be charged
			// for. Return it first, so each peak is the statement's own
			// (DuckDB's allocator returns memory itself).
			if os.Getenv(keepHeapEnv) == "" {
				debug.FreeOSMemory()
			}
			resetPeakRSS()
			cpu0, t0 := cpuTime(), time.Now()
			m.Rows, err = run(context.Background(), text)
			m.Wall = int64(time.Since(t0))
			m.CPU = int64(cpuTime() - cpu0)
			m.Peak = peakRSS()
		}
		if err != nil {
			m.Err = err.Error()
		}
		if err := enc.Encode(m); err != nil {
			return err
		}
	}
	return in.Err()
}

// openDuckDB opens an in-memory DuckDB with one view per table folder of
// data, sorting NULLs as MySQL does (the answers must agree with fsql's).
func openDuckDB(ctx context.Context, data string) (*sql.DB, error) {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return nil, err
	}
	// One connection: the SET and the views live in the session.
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, "SET default_null_order='nulls_first_on_asc_last_on_desc'"); err != nil {
		db.Close()
		return nil, err
	}
	tables, err := os.ReadDir(data)
	if err != nil {
		db.Close()
		return nil, err
	}
	for _, t := range tables {
		if !t.IsDir() {
			continue
		}
		dir, _ := filepath.Abs(filepath.Join(data, t.Name()))
		q := fmt.Sprintf("CREATE VIEW %s AS SELECT * FROM read_parquet('%s/**/*.parquet', hive_partitioning = true)", t.Name(), dir)
		if _, err := db.ExecContext(ctx, q); err != nil {
			db.Close()
			return nil, fmt.Errorf("view %s: %w", t.Name(), err)
		}
	}
	return db, nil
}

// queryText is the query's fsql text, or DuckDB's rewrite where one exists.
func queryText(queries, name string, duck bool) (string, error) {
	if duck {
		if b, err := os.ReadFile(filepath.Join(queries, "duckdb", name+".sql")); err == nil {
			return string(b), nil
		}
	}
	b, err := os.ReadFile(filepath.Join(queries, "queries", name+".sql"))
	return string(b), err
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// resetPeakRSS resets the kernel's resident-set high-water mark of this
// process (Linux: clear_refs value 5).
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// peakRSS is VmHWM of this process in bytes.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			f := strings.Fields(rest)
			if len(f) >= 1 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}
