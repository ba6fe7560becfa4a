package fsql_test

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fsql-dev/fsql"
	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/internal/slt"
	"github.com/fsql-dev/fsql/internal/sltcorpus"
)

var (
	sltCorpus       = flag.Bool("slt-corpus", false, "run SQLite's sqllogictest scripts in testdata/sqllogictest (a few minutes)")
	sltCorpusUpdate = flag.Bool("slt-corpus-update", false, "with -slt-corpus: rewrite testdata/sqllogictest/known_failures.txt")
)

const knownFailuresFile = "testdata/sqllogictest/known_failures.txt"

// TestSQLiteCorpus runs select1.test ... select5.test of SQLite's corpus
// and fails on every failing query not listed in known_failures.txt. It
// logs the counts: passed, failed with a wrong answer, failed with a
// not-implemented error, failed otherwise.
func TestSQLiteCorpus(t *testing.T) {
	if !*sltCorpus {
		t.Skip("run with -slt-corpus")
	}
	files, err := filepath.Glob("testdata/sqllogictest/*.test")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts in testdata/sqllogictest: %v", err)
	}
	known := map[string]bool{}
	if f, err := os.Open(knownFailuresFile); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, _, _ := strings.Cut(sc.Text(), " "); k != "" && !strings.HasPrefix(k, "#") {
				known[k] = true
			}
		}
		f.Close()
	}
	var failures []string
	total := map[string]int{}
	for _, path := range files {
		counts, fails := runCorpusScript(t, path)
		for k, v := range counts {
			total[k] += v
		}
		t.Logf("%s: %d passed, %d wrong, %d not implemented, %d errors", filepath.Base(path), counts["pass"], counts["wrong"], counts["unsupported"], counts["error"])
		for _, f := range fails {
			key, _, _ := strings.Cut(f, " ")
			if !known[key] && !*sltCorpusUpdate {
				t.Errorf("%s", f)
			}
			failures = append(failures, f)
		}
	}
	t.Logf("total: %d passed, %d wrong, %d not implemented, %d errors", total["pass"], total["wrong"], total["unsupported"], total["error"])
	if *sltCorpusUpdate {
		sort.Strings(failures)
		text := "# Queries of testdata/sqllogictest that fsql fails, file:line and why (rewritten by -slt-corpus-update).\n" + strings.Join(failures, "\n") + "\n"
		if err := os.WriteFile(knownFailuresFile, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// runCorpusScript runs one script and returns its counts and one line per
// failing query ("file:line reason").
func runCorpusScript(t *testing.T, path string) (map[string]int, []string) {
	script, err := sltcorpus.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	db := sltcorpus.NewDatabase()
	counts := map[string]int{}
	var fails []string
	var eng *fsql.Engine
	written := -1
	base := t.TempDir()
	for _, r := range script.Records {
		if !r.Applies("mysql") {
			continue
		}
		where := fmt.Sprintf("%s:%d", filepath.Base(path), r.Line)
		switch r.Kind {
		case sltcorpus.KindHalt:
			return counts, fails
		case sltcorpus.KindStatement:
			err := db.Apply(r.SQL)
			if errors.Is(err, sltcorpus.ErrNotData) {
				t.Errorf("%s: statement fsql cannot run: %s", where, r.SQL)
				continue
			}
			if err != nil && !r.ExpectError {
				t.Errorf("%s: %v", where, err)
			}
		case sltcorpus.KindQuery:
			if written != db.Version {
				dir := filepath.Join(base, fmt.Sprint(db.Version))
				if err := slt.WriteTables(dir, db.Tables()); err != nil {
					t.Fatal(err)
				}
				cfg := fsql.DefaultConfig()
				e, err := fsql.Open(dir, cfg)
				if err != nil {
					t.Fatal(err)
				}
				eng, written = e, db.Version
			}
			vals, err := corpusQuery(eng, r)
			switch {
			case err == nil:
				if cerr := r.Check(vals); cerr != nil {
					counts["wrong"]++
					fails = append(fails, fmt.Sprintf("%s wrong: %v", where, cerr))
				} else {
					counts["pass"]++
				}
			case errors.Is(err, exec.ErrNotImplemented):
				counts["unsupported"]++
				fails = append(fails, fmt.Sprintf("%s unsupported: %s", where, firstLine(err.Error())))
			default:
				counts["error"]++
				fails = append(fails, fmt.Sprintf("%s error: %s", where, firstLine(err.Error())))
			}
		}
	}
	return counts, fails
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

func corpusQuery(eng *fsql.Engine, r *sltcorpus.Record) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, batches, err := collect(ctx, eng, r.SQL)
	if err != nil {
		return nil, err
	}
	defer releaseAll(batches)
	res, err := sltcorpus.Rows(r.Types, batches)
	if err != nil {
		return nil, err
	}
	return sltcorpus.Values(r.Sort, res), nil
}
