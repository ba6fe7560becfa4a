package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/fsql-dev/fsql"
	"github.com/fsql-dev/fsql/connectors/tpcds"
)

// dppBenchQueries are the foundation's TPC-DS set without q96, which
// filters no date and so has nothing to prune dynamically.
var dppBenchQueries = []string{"3", "7", "19", "27", "34", "42", "43", "46", "52", "53",
	"55", "59", "63", "65", "68", "73", "79", "89", "98"}

func benchDPPUsage(w io.Writer) {
	fmt.Fprint(w, `usage: fsql bench dpp [flags]

Measures dynamic partition pruning: runs each query with
table.optimizer.dynamic-filtering.enabled true and false, interleaved
(run 1 of every query both ways, then run 2, ...), and prints per query the
median time, bytes read, partitions kept and row groups kept, on the
Hive-partitioned layout and on the flat (--partitioned=false) layout of
the same scale.

flags:
  --scale S         TPC-DS scale factor (default 1); data in
                    <user cache>/fsql/tpcds-sf<S>-g<generator version>
                    and tpcds-sf<S>-flat-g<generator version>,
                    generated if missing
  --queries LIST    comma-separated query numbers (default the 19 of the
                    foundation set that filter a date)
  --runs N          runs per query and setting (default 5)
  --layout L        partitioned, flat or both (default both)
  --query-dir DIR   folder of qN.sql files (default testdata/tpcds/queries)
  --set KEY=VALUE   engine setting, repeatable
`)
}

type dppResult struct {
	times []time.Duration
	stats fsql.ScanStats
	rows  int64
	err   error
}

func runBenchDPP(args []string, stdout, stderr io.Writer) error {
	fset := flag.NewFlagSet("fsql bench dpp", flag.ContinueOnError)
	scale := fset.Float64("scale", 1, "scale factor")
	queries := fset.String("queries", strings.Join(dppBenchQueries, ","), "query numbers")
	runs := fset.Int("runs", 5, "runs per query and setting")
	layout := fset.String("layout", "both", "partitioned, flat or both")
	queryDir := fset.String("query-dir", filepath.Join("testdata", "tpcds", "queries"), "query folder")
	var sets setFlags
	fset.Var(&sets, "set", "key=value")
	if err := parseFlags(fset, args, stdout, benchDPPUsage); err != nil {
		return err
	}
	if fset.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (see fsql bench dpp -h)", fset.Arg(0))
	}
	if *scale <= 0 || *runs < 1 {
		return errors.New("--scale must be positive and --runs at least 1")
	}
	var layouts []bool // partitioned?
	switch *layout {
	case "both":
		layouts = []bool{true, false}
	case "partitioned":
		layouts = []bool{true}
	case "flat":
		layouts = []bool{false}
	default:
		return fmt.Errorf("--layout must be partitioned, flat or both, got %q", *layout)
	}
	qs, err := loadBenchQueries(*queryDir, *queries)
	if err != nil {
		return err
	}
	ctx, stop := interruptContext()
	defer stop()
	for _, partitioned := range layouts {
		dir, err := defaultDataDir(*scale, !partitioned)
		if err != nil {
			return err
		}
		name := "partitioned"
		if !partitioned {
			name = "flat (--partitioned=false)"
		}
		if err := ensureLayout(ctx, dir, *scale, partitioned, stderr); err != nil {
			return err
		}
		engines := map[bool]*fsql.Engine{}
		for _, on := range []bool{true, false} {
			cfg := fsql.DefaultConfig()
			if err := sets.apply(&cfg); err != nil {
				return err
			}
			cfg.DynamicFiltering = on
			if engines[on], err = fsql.Open(dir, cfg); err != nil {
				return err
			}
		}
		res := map[string]map[bool]*dppResult{}
		for _, q := range qs {
			res[q.name] = map[bool]*dppResult{true: {}, false: {}}
		}
		for r := 1; r <= *runs; r++ {
			fmt.Fprintf(stderr, "fsql: %s layout, run %d of %d\n", name, r, *runs)
			for _, q := range qs {
				for _, on := range []bool{true, false} {
					d := res[q.name][on]
					if d.err != nil {
						continue
					}
					if d.err = runDPPQuery(ctx, engines[on], q.text, d); d.err != nil {
						if ctx.Err() != nil {
							return ctx.Err()
						}
						fmt.Fprintf(stderr, "fsql: %s: %s\n", q.name, message(d.err))
					}
				}
			}
		}
		fmt.Fprintf(stdout, "\n%s layout, scale %s, median of %d runs\n", name, strconv.FormatFloat(*scale, 'f', -1, 64), *runs)
		printDPP(stdout, qs, res)
	}
	return nil
}

func ensureLayout(ctx context.Context, dir string, scale float64, partitioned bool, stderr io.Writer) error {
	if partitioned {
		return ensureTPCDS(ctx, dir, scale, stderr)
	}
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	fmt.Fprintf(stderr, "fsql: generating flat TPC-DS scale %s data in %s (first use only)\n", strconv.FormatFloat(scale, 'f', -1, 64), dir)
	return tpcds.Generate(ctx, tpcds.Options{Scale: scale, Out: dir, Partitioned: false, RowGroupRows: 122880, Seed: 1, Progress: stderr})
}

func runDPPQuery(ctx context.Context, eng *fsql.Engine, text string, d *dppResult) error {
	t, n, st, err := timeQuery(ctx, eng, text)
	if err != nil {
		return err
	}
	d.times = append(d.times, t)
	d.stats, d.rows = st, n
	return nil
}

func printDPP(out io.Writer, qs []*benchQuery, res map[string]map[bool]*dppResult) {
	head := []string{"query", "on ms", "off ms", "on/off", "on MB read", "off MB read", "partitions kept on/off/total", "row groups kept on/off/total"}
	lines := [][]string{head}
	var tOn, tOff time.Duration
	var bOn, bOff int64
	for _, q := range qs {
		on, off := res[q.name][true], res[q.name][false]
		if on.err != nil || off.err != nil {
			lines = append(lines, []string{q.name, "failed", "", "", "", "", "", ""})
			continue
		}
		mOn, mOff := median(on.times), median(off.times)
		tOn, tOff = tOn+mOn, tOff+mOff
		bOn, bOff = bOn+on.stats.BytesRead, bOff+off.stats.BytesRead
		lines = append(lines, []string{q.name,
			fmt.Sprintf("%.1f", ms(mOn)), fmt.Sprintf("%.1f", ms(mOff)), fmt.Sprintf("%.2f", ms(mOn)/ms(mOff)),
			fmt.Sprintf("%.2f", float64(on.stats.BytesRead)/1e6), fmt.Sprintf("%.2f", float64(off.stats.BytesRead)/1e6),
			fmt.Sprintf("%d/%d/%d", on.stats.PartitionsKept, off.stats.PartitionsKept, on.stats.PartitionsTotal),
			fmt.Sprintf("%d/%d/%d", on.stats.RowGroupsKept, off.stats.RowGroupsKept, on.stats.RowGroupsTotal),
		})
	}
	ratio := 0.0
	if tOff > 0 {
		ratio = ms(tOn) / ms(tOff)
	}
	lines = append(lines, []string{"total", fmt.Sprintf("%.1f", ms(tOn)), fmt.Sprintf("%.1f", ms(tOff)), fmt.Sprintf("%.2f", ratio),
		fmt.Sprintf("%.2f", float64(bOn)/1e6), fmt.Sprintf("%.2f", float64(bOff)/1e6), "", ""})
	width := make([]int, len(head))
	for _, l := range lines {
		for i, c := range l {
			width[i] = max(width[i], len(c))
		}
	}
	for _, l := range lines {
		fmt.Fprintf(out, "%-*s", width[0], l[0])
		for i := 1; i < len(l); i++ {
			fmt.Fprintf(out, "  %*s", width[i], l[i])
		}
		fmt.Fprintln(out)
	}
}
