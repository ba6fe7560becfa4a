package main

// The write benchmark: fsql's CREATE TABLE ... PARTITION BY KEY (k) AS
// SELECT * FROM t against DuckDB's COPY (SELECT * FROM t) TO ... (FORMAT
// PARQUET, PARTITION_BY (k)) on the same Parquet table, same cores,
// interleaved (`oracle bench-write`, `make bench-write-vs-duckdb`).
//
// As in bench.go, each engine runs in a child process of its own
// (`oracle serve-write`) that stays up for the whole run, so both read
// warm; the parent interleaves the engines in every round, and the first
// round is a warm-up that is not counted. Each statement writes into a
// fresh folder of the scratch directory; after the statement the child
// counts the files and bytes written (outside the timing) and removes
// them. The report gives per engine the median over rounds of wall time,
// CPU time and peak memory, the source table's Parquet bytes read per
// second of wall time, and the files and bytes written.

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fsql-dev/fsql"
)

// writeMeasurement is what a serve-write child reports for one statement.
type writeMeasurement struct {
	Wall  int64  `json:"wall_ns"`
	CPU   int64  `json:"cpu_ns"`
	Peak  int64  `json:"peak_bytes"`
	Rows  int64  `json:"rows"`
	Files int64  `json:"files"`
	Bytes int64  `json:"bytes"`
	Err   string `json:"error,omitempty"`
}

func benchWriteMain(args []string) error {
	fs := flag.NewFlagSet("oracle bench-write", flag.ContinueOnError)
	data := fs.String("data", "", "dataset folder (one sub-folder of Parquet files per table)")
	table := fs.String("table", "store_sales", "table to copy")
	key := fs.String("partition", "ss_sold_date_sk", "partition column (empty: an unpartitioned write)")
	rounds := fs.Int("runs", 3, "counted rounds (after one warm-up round)")
	threads := fs.Int("threads", 2, "threads of each engine: DuckDB threads, fsql GOMAXPROCS and task slots")
	compression := fs.String("compression", "zstd", "Parquet codec of both engines (fsql's default is zstd, DuckDB's snappy)")
	scratch := fs.String("scratch", "", "folder the statements write into (default: a new temporary folder, removed at the end)")
	set := fs.String("set", "", "extra fsql settings, comma-separated key=value")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of fsql's counted statements to this file")
	only := fs.String("engines", "fsql,duckdb", "engines to run, comma-separated (fsql alone to profile it)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *data == "" {
		return errors.New("--data is required")
	}
	src, err := filepath.Abs(filepath.Join(*data, *table))
	if err != nil {
		return err
	}
	inBytes, _, err := treeSize(src)
	if err != nil {
		return fmt.Errorf("the source table: %w", err)
	}
	dir := *scratch
	if dir == "" {
		if dir, err = os.MkdirTemp("", "fsql-bench-write-"); err != nil {
			return err
		}
		defer os.RemoveAll(dir)
	}
	engines := strings.Split(*only, ",")
	children := map[string]*writeChild{}
	defer func() {
		for _, c := range children {
			c.stop()
		}
	}()
	for _, e := range engines {
		out := filepath.Join(dir, e)
		if err := os.MkdirAll(out, 0o755); err != nil {
			return err
		}
		childArgs := []string{"serve-write", "--engine", e, "--src", src, "--table", *table,
			"--partition", *key, "--out", out, "--threads", strconv.Itoa(*threads),
			"--compression", *compression, "--set", *set}
		if e == "fsql" && *cpuProfile != "" {
			childArgs = append(childArgs, "--cpuprofile", *cpuProfile, "--skip", "1")
		}
		c, err := startWriteChild(childArgs, *threads)
		if err != nil {
			return err
		}
		children[e] = c
	}
	fmt.Printf("# %s (%.1f MiB of Parquet) partitioned by %q, %s, %d counted rounds after a warm-up, %d threads each\n",
		src, mib(inBytes), *key, *compression, *rounds, *threads)
	res := map[string][]writeMeasurement{}
	for r := 0; r <= *rounds; r++ {
		for _, e := range engines {
			m, err := children[e].run(r)
			if err != nil {
				return fmt.Errorf("%s: %w", e, err)
			}
			if m.Err != "" {
				return fmt.Errorf("%s: %s", e, m.Err)
			}
			fmt.Printf("# round %d %-6s %8.2f s wall %8.2f s cpu %6d files %8.1f MiB\n", r, e, sec(m.Wall), sec(m.CPU), m.Files, mib(m.Bytes))
			if r > 0 {
				res[e] = append(res[e], m)
			}
		}
	}
	fmt.Printf("%-7s %9s %9s %9s %9s %8s %10s %10s\n", "engine", "wall s", "cpu s", "peak MiB", "in MiB/s", "files", "out MiB", "rows")
	med := map[string]writeMeasurement{}
	for _, e := range engines {
		m := medianWrite(res[e])
		med[e] = m
		fmt.Printf("%-7s %9.2f %9.2f %9.1f %9.1f %8d %10.1f %10d\n", e, sec(m.Wall), sec(m.CPU), mib(m.Peak),
			mib(inBytes)/sec(m.Wall), m.Files, mib(m.Bytes), m.Rows)
	}
	f, d := med["fsql"], med["duckdb"]
	if len(engines) < 2 {
		return nil
	}
	fmt.Printf("ratio fsql/duckdb: wall %.2f, cpu %.2f, peak memory %.2f\n", ratio(f.Wall, d.Wall), ratio(f.CPU, d.CPU), ratio(f.Peak, d.Peak))
	if f.Rows != d.Rows {
		return fmt.Errorf("the engines wrote different row counts: fsql %d, duckdb %d", f.Rows, d.Rows)
	}
	return nil
}

// medianWrite is the median of each field over the rounds (files, bytes
// and rows are the same in every round of one engine, but take the
// median too).
func medianWrite(ms []writeMeasurement) writeMeasurement {
	pick := func(f func(writeMeasurement) int64) int64 {
		v := make([]int64, len(ms))
		for i, m := range ms {
			v[i] = f(m)
		}
		sort.Slice(v, func(a, b int) bool { return v[a] < v[b] })
		return v[len(v)/2]
	}
	return writeMeasurement{
		Wall:  pick(func(m writeMeasurement) int64 { return m.Wall }),
		CPU:   pick(func(m writeMeasurement) int64 { return m.CPU }),
		Peak:  pick(func(m writeMeasurement) int64 { return m.Peak }),
		Rows:  pick(func(m writeMeasurement) int64 { return m.Rows }),
		Files: pick(func(m writeMeasurement) int64 { return m.Files }),
		Bytes: pick(func(m writeMeasurement) int64 { return m.Bytes }),
	}
}

type writeChild struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

func startWriteChild(args []string, threads int) (*writeChild, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, args...)
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
	c := &writeChild{cmd: cmd, in: in, out: bufio.NewScanner(outPipe)}
	if !c.out.Scan() || c.out.Text() != "ready" {
		c.stop()
		return nil, fmt.Errorf("%s did not start: %v", strings.Join(args[:3], " "), c.out.Err())
	}
	return c, nil
}

func (c *writeChild) run(round int) (writeMeasurement, error) {
	var m writeMeasurement
	fmt.Fprintln(c.in, round)
	if !c.out.Scan() {
		return m, fmt.Errorf("child ended: %v", c.out.Err())
	}
	err := json.Unmarshal(c.out.Bytes(), &m)
	return m, err
}

func (c *writeChild) stop() {
	c.in.Close()
	done := make(chan struct{})
	go func() { c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		c.cmd.Process.Kill()
		<-done
	}
}

// serveWriteMain is the child: one write statement per stdin line (the
// round number, which names the output), one JSON measurement per stdout
// line.
func serveWriteMain(args []string) error {
	fs := flag.NewFlagSet("oracle serve-write", flag.ContinueOnError)
	engine := fs.String("engine", "", "fsql or duckdb")
	src := fs.String("src", "", "the source table's folder (absolute)")
	table := fs.String("table", "", "the source table's name")
	key := fs.String("partition", "", "partition column")
	out := fs.String("out", "", "folder the statements write into")
	threads := fs.Int("threads", 2, "threads")
	compression := fs.String("compression", "zstd", "Parquet codec")
	set := fs.String("set", "", "extra fsql settings, comma-separated key=value")
	cpuProfile := fs.String("cpuprofile", "", "CPU profile of the statements after the first --skip")
	skip := fs.Int("skip", 0, "statements not profiled")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var run func(ctx context.Context, round int) (rows int64, target string, err error)
	switch *engine {
	case "fsql":
		runtime.GOMAXPROCS(*threads)
		cfg := fsql.DefaultConfig()
		cfg.PathsOutsideData = true // the source is read by its absolute path
		fixed := "taskmanager.numberOfTaskSlots=" + strconv.Itoa(*threads) + ",parquet.compression=" + *compression
		if err := applySettings(&cfg, fixed, *set); err != nil {
			return err
		}
		// The engine's data directory is the output folder.
		eng, err := fsql.Open(*out, cfg)
		if err != nil {
			return err
		}
		run = func(ctx context.Context, round int) (int64, string, error) {
			name := fmt.Sprintf("%s_copy_%d", *table, round)
			part := ""
			if *key != "" {
				part = fmt.Sprintf(" PARTITION BY KEY (%s)", *key)
			}
			q := fmt.Sprintf("CREATE TABLE %s%s AS SELECT * FROM `%s`", name, part, *src)
			rows, err := eng.Query(ctx, q)
			if err != nil {
				return 0, "", err
			}
			defer rows.Close()
			var n int64
			for rows.Next() {
				b := rows.RecordBatch()
				if b.NumRows() > 0 && b.NumCols() > 0 {
					n, _ = strconv.ParseInt(b.Column(0).ValueStr(0), 10, 64)
				}
			}
			return n, filepath.Join(*out, name), rows.Err()
		}
	case "duckdb":
		db, err := sql.Open("duckdb", "")
		if err != nil {
			return err
		}
		defer db.Close()
		db.SetMaxOpenConns(1)
		if _, err := db.Exec(fmt.Sprintf("SET threads=%d", *threads)); err != nil {
			return err
		}
		run = func(ctx context.Context, round int) (int64, string, error) {
			target := filepath.Join(*out, fmt.Sprintf("%s_copy_%d", *table, round))
			opts := fmt.Sprintf("FORMAT PARQUET, COMPRESSION %s", *compression)
			if *key != "" {
				opts += fmt.Sprintf(", PARTITION_BY (%s)", *key)
			} else {
				target += ".parquet"
			}
			q := fmt.Sprintf("COPY (SELECT * FROM read_parquet('%s/*.parquet')) TO '%s' (%s)", *src, target, opts)
			res, err := db.ExecContext(ctx, q)
			if err != nil {
				return 0, "", err
			}
			n, err := res.RowsAffected()
			return n, target, err
		}
	default:
		return fmt.Errorf("--engine must be fsql or duckdb, got %q", *engine)
	}
	var prof *os.File
	defer func() {
		if prof != nil {
			pprof.StopCPUProfile()
			prof.Close()
		}
	}()
	fmt.Println("ready")
	in := bufio.NewScanner(os.Stdin)
	enc := json.NewEncoder(os.Stdout)
	for n := 0; in.Scan(); n++ {
		round, err := strconv.Atoi(strings.TrimSpace(in.Text()))
		if err != nil {
			return err
		}
		if *cpuProfile != "" && n == *skip {
			if prof, err = os.Create(*cpuProfile); err != nil {
				return err
			}
			if err := pprof.StartCPUProfile(prof); err != nil {
				return err
			}
		}
		var m writeMeasurement
		resetPeakRSS()
		runtime.GC()
		cpu0, t0 := cpuTime(), time.Now()
		rows, target, err := run(context.Background(), round)
		m.Wall = int64(time.Since(t0))
		m.CPU = int64(cpuTime() - cpu0)
		m.Peak = peakRSS()
		m.Rows = rows
		if err == nil {
			m.Bytes, m.Files, err = treeSize(target)
		}
		if err != nil {
			m.Err = err.Error()
		}
		if target != "" {
			os.RemoveAll(target)
		}
		if err := enc.Encode(m); err != nil {
			return err
		}
	}
	return in.Err()
}

// treeSize is the bytes and number of the Parquet files under dir (or of
// dir itself, a file), skipping hidden and underscore folders (fsql's
// marker folder).
func treeSize(dir string) (bytes, files int64, err error) {
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != dir && (strings.HasPrefix(d.Name(), "_") || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(d.Name(), ".parquet") {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		bytes += fi.Size()
		files++
		return nil
	})
	return bytes, files, err
}
