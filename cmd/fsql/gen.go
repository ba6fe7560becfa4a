package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/fsql-dev/fsql/connectors/tpcds"
)

func genUsage(w io.Writer) {
	fmt.Fprint(w, `usage: fsql gen tpcds --out DIR [flags]

Writes a TPC-DS data set: one folder per table, fact tables
Hive-partitioned on their date key. The same scale and seed give
identical files.

flags:
  --out DIR              destination folder (must not exist or be empty)
  --scale S              scale factor, 0.01 or more (default 1: about 1 GB
                         of CSV)
  --partitioned=false    a few files per fact table sorted by the date key
                         instead of partition folders (the rows are the same)
  --row-group-rows N     rows per row group of unpartitioned files
                         (default 122880)
  --seed N               random seed (default 1, as the golden answers)
  --workers N            parallel writers (default: all cores)
`)
}

// runGen implements fsql gen tpcds.
func runGen(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "tpcds" {
		args = args[1:]
	} else if len(args) == 0 || !strings.HasPrefix(args[0], "-") {
		return errors.New("fsql gen needs a data set name: fsql gen tpcds --scale 1 --out DIR (see fsql gen tpcds -h)")
	}
	fs := flag.NewFlagSet("fsql gen tpcds", flag.ContinueOnError)
	scale := fs.Float64("scale", 1, "scale factor")
	out := fs.String("out", "", "destination folder")
	partitioned := fs.Bool("partitioned", true, "Hive-partition the fact tables")
	rowGroupRows := fs.Int("row-group-rows", 122880, "rows per row group")
	seed := fs.Uint64("seed", 1, "random seed")
	workers := fs.Int("workers", 0, "parallel writers")
	if err := parseFlags(fs, args, stdout, genUsage); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (see fsql gen tpcds -h)", fs.Arg(0))
	}
	if *out == "" {
		return errors.New("fsql gen tpcds needs --out DIR (see fsql gen tpcds -h)")
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
