package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/fsql-dev/fsql"
	"github.com/fsql-dev/fsql/internal/sltrun"
)

func sltUsage(w io.Writer) {
	fmt.Fprint(w, `usage: fsql slt [flags] FILE...

Runs sqllogictest scripts (SQLite's format: statement ok|error, query
with its types, sort mode and expected values or their hash) against a
fresh engine per file whose tables are held in memory, and prints per
file: FILE: N passed, N failed, N skipped.

Records under skipif mysql, or under onlyif naming another engine, are
skipped (fsql speaks MySQL's dialect); onlyif mysql ones run. Results
are compared as the corpus defines: values by the query's type letters
(I as an integer, R with three decimals, T as text), sorted by rowsort or valuesort, and as the MD5 of the
values when the script gives "N values hashing to H". The exit status is
1 when a record failed.

flags:
  --set KEY=VALUE    engine setting, repeatable (fsql help lists the keys)
  --failures         print each failing record: FILE:LINE kind: why
  --timeout D        limit per statement (default 1m)
`)
}

// runSLT implements fsql slt.
func runSLT(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("fsql slt", flag.ContinueOnError)
	var sets setFlags
	fs.Var(&sets, "set", "key=value")
	failures := fs.Bool("failures", false, "print failing records")
	timeout := fs.Duration("timeout", time.Minute, "limit per statement")
	if err := parseFlags(fs, args, stdout, sltUsage); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return errors.New("fsql slt needs the scripts to run: fsql slt FILE... (see fsql slt -h)")
	}
	cfg := fsql.DefaultConfig()
	if err := sets.apply(&cfg); err != nil {
		return err
	}
	ctx, stop := interruptContext()
	defer stop()
	failed := 0
	for _, path := range fs.Args() {
		res, err := sltrun.RunFile(ctx, path, sltrun.Options{Config: &cfg, Timeout: *timeout})
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, res)
		if *failures {
			for _, f := range res.Failures {
				fmt.Fprintf(stdout, "%s:%d %s: %s\n", path, f.Line, f.Kind, f.Reason)
			}
		}
		failed += res.Failed
	}
	if failed > 0 {
		return errSLTFailed{failed}
	}
	return nil
}

// errSLTFailed makes the exit status 1 after the counts were printed.
type errSLTFailed struct{ n int }

func (e errSLTFailed) Error() string { return fmt.Sprintf("%d records failed", e.n) }
