package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/fsql-dev/fsql/connectors/tpcds"
)

// runGen implements `fsql gen tpcds --scale S --out DIR [--partitioned=false]
// [--row-group-rows N] [--seed N] [--workers N]`.
func runGen(args []string, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "tpcds" {
		return errors.New("usage: fsql gen tpcds --scale S --out DIR [--partitioned=false] [--row-group-rows N] [--seed N]")
	}
	fs := flag.NewFlagSet("fsql gen tpcds", flag.ContinueOnError)
	fs.SetOutput(stderr)
	scale := fs.Float64("scale", 1, "scale factor (>= 0.01; 1 is about 1 GB of CSV)")
	out := fs.String("out", "", "destination folder (must not exist or be empty)")
	partitioned := fs.Bool("partitioned", true, "Hive-partition the fact tables on their date key (false: a few files per table sorted by it; the rows are the same)")
	rowGroupRows := fs.Int("row-group-rows", 122880, "rows per row group for unpartitioned files")
	seed := fs.Uint64("seed", 1, "random seed (same scale and seed give identical files; the golden answers use 1)")
	workers := fs.Int("workers", 0, "parallel writers (default: all cores)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("fsql gen tpcds: unexpected argument %q", fs.Arg(0))
	}
	if *out == "" {
		return errors.New("fsql gen tpcds: --out is required")
	}
	ctx, stop := interruptContext()
	defer stop()
	start := time.Now()
	// A progress bar on a terminal, one line per table otherwise.
	var progress io.Writer = stderr
	var bar *progressBar
	if isTerminal(stderr) {
		bar = newProgressBar(stderr, len(tpcds.TableNames()))
		progress = bar
	}
	err := tpcds.Generate(ctx, tpcds.Options{
		Scale:        *scale,
		Out:          *out,
		Partitioned:  *partitioned,
		RowGroupRows: *rowGroupRows,
		Seed:         *seed,
		Workers:      *workers,
		Progress:     progress,
	})
	if bar != nil {
		bar.Finish()
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "tpcds: scale %g written to %s in %.1fs\n", *scale, *out, time.Since(start).Seconds())
	return nil
}
