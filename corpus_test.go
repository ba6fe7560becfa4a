package fsql_test

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql"
	"github.com/fsql-dev/fsql/internal/sltrun"
)

var (
	sltCorpus       = flag.Bool("slt-corpus", false, "run SQLite's sqllogictest scripts in testdata/sqllogictest (minutes; make test runs it as a step of its own)")
	sltCorpusUpdate = flag.Bool("slt-corpus-update", false, "with -slt-corpus: rewrite testdata/sqllogictest/known_failures.txt with the failures")
)

const knownFailuresFile = "testdata/sqllogictest/known_failures.txt"

// TestSQLiteCorpus runs select1.test ... select5.test of SQLite's corpus
// through internal/sltrun, the code `fsql slt` runs, with the scripts'
// tables held in memory, and fails on every failing record not listed
// in known_failures.txt (and on a listed one that passes now, so the
// list stays true). Each script runs under a checked allocator. It takes
// minutes, so a plain go test skips it; make test runs it with
// -slt-corpus as a step of its own.
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
	failed := map[string]bool{}
	var passed, total int
	for _, path := range files {
		mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
		res, err := sltrun.RunFile(context.Background(), path, sltrun.Options{
			Wrap: func(e *fsql.Engine) *fsql.Engine { return e.WithAllocator(mem) },
		})
		if err != nil {
			t.Fatal(err)
		}
		mem.AssertSize(t, 0)
		t.Log(res)
		passed += res.Passed
		total += res.Passed + res.Failed
		for _, f := range res.Failures {
			key := fmt.Sprintf("%s:%d", filepath.Base(path), f.Line)
			failed[key] = true
			line := fmt.Sprintf("%s %s: %s", key, f.Kind, f.Reason)
			if !known[key] && !*sltCorpusUpdate {
				t.Errorf("%s\n%s", line, f.SQL)
			}
			failures = append(failures, line)
		}
	}
	t.Logf("total: %d of %d records passed (%.2f%%)", passed, total, 100*float64(passed)/float64(total))
	if *sltCorpusUpdate {
		sort.Strings(failures)
		text := "# Records of testdata/sqllogictest that fsql fails, file:line and why (rewritten by -slt-corpus-update).\n" + strings.Join(failures, "\n") + "\n"
		if err := os.WriteFile(knownFailuresFile, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	for k := range known {
		if !failed[k] {
			t.Errorf("%s is listed in %s but passes now: remove it (-slt-corpus-update)", k, knownFailuresFile)
		}
	}
}
