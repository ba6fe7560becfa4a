package fsql_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql"
	"github.com/fsql-dev/fsql/connectors/tpcds"
	"github.com/fsql-dev/fsql/internal/answers"
)

var (
	partOnce sync.Once
	partDir  string
	partErr  error
)

// tpcdsPartitioned is the golden scale and seed in the Hive-partitioned
// layout, where dynamic pruning skips partitions.
func tpcdsPartitioned(t testing.TB) string {
	t.Helper()
	partOnce.Do(func() {
		cache, err := os.UserCacheDir()
		if err != nil {
			cache = os.TempDir()
		}
		partDir = filepath.Join(cache, "fsql", tpcds.CacheFolder(fmt.Sprintf("tpcds-sf%g-seed%d", goldenScale, goldenSeed)))
		if _, err := os.Stat(partDir); err == nil {
			return
		}
		partErr = tpcds.Generate(context.Background(), tpcds.Options{
			Scale: goldenScale, Out: partDir, Partitioned: true, RowGroupRows: 122880, Seed: goldenSeed,
		})
	})
	if partErr != nil {
		t.Fatalf("generating TPC-DS data: %v", partErr)
	}
	return partDir
}

// queryAnswer runs TPC-DS query q under a checked allocator (every buffer
// must be released by the end).
func queryAnswer(t *testing.T, dir, q string, set ...string) *answers.Answer {
	t.Helper()
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer alloc.AssertSize(t, 0)
	return queryAnswerWith(t, alloc, dir, q, set...)
}

// queryAnswerWith runs TPC-DS query q allocating from alloc; nil is the
// engine's default, under which scans recycle their buffers through a
// pool, so a batch read after its release would show in the answer.
func queryAnswerWith(t *testing.T, alloc memory.Allocator, dir, q string, set ...string) *answers.Answer {
	t.Helper()
	text, eng := tpcdsQueryEngine(t, dir, q, set...)
	if alloc != nil {
		eng = eng.WithAllocator(alloc)
	}
	schema, batches := runQuery(t, eng, text)
	got, err := answers.FromArrow(schema, batches)
	for _, b := range batches {
		b.Release()
	}
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// Dynamic pruning must never change an answer. TestTPCDSGolden runs the
// set with pruning on (the default) on both layouts; this runs it with
// pruning off on the partitioned layout, where it matters most, against
// the same golden answers, so on and off are both checked to agree with
// DuckDB and so with each other.
func TestDynamicPruningOffSameAnswers(t *testing.T) {
	if testing.Short() {
		t.Skip("generates TPC-DS data")
	}
	dir := tpcdsPartitioned(t)
	for _, q := range goldenQueries {
		t.Run(q, func(t *testing.T) {
			want := readAnswer(t, q)
			off := queryAnswer(t, dir, q, "table.optimizer.dynamic-filtering.enabled=false")
			if err := answers.Compare(want, off); err != nil {
				t.Fatalf("with pruning off: %v", err)
			}
		})
	}
}

// The plan-golden cases that are not TPC-DS queries (a semi join, the
// optional side of a left join) have no DuckDB answer: check that pruning
// on and off agree.
func TestDynamicPruningPlanCasesSameAnswers(t *testing.T) {
	if testing.Short() {
		t.Skip("generates TPC-DS data")
	}
	dir := tpcdsPartitioned(t)
	for _, c := range planCases {
		if strings.HasPrefix(c.file, "tpcds/") {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			text, err := os.ReadFile(filepath.Join("testdata", c.file))
			if err != nil {
				t.Fatal(err)
			}
			q := strings.TrimSpace(string(text))
			var got []*answers.Answer
			for _, on := range []bool{true, false} {
				cfg := fsql.DefaultConfig()
				cfg.DynamicFiltering = on
				eng, err := fsql.Open(dir, cfg)
				if err != nil {
					t.Fatal(err)
				}
				schema, batches := runQuery(t, eng, q)
				a, err := answers.FromArrow(schema, batches)
				for _, b := range batches {
					b.Release()
				}
				if err != nil {
					t.Fatal(err)
				}
				if len(a.Rows) == 0 {
					t.Fatalf("%s returns no rows: the case proves nothing", c.name)
				}
				got = append(got, a)
			}
			if err := answers.Compare(got[1], got[0]); err != nil {
				t.Fatalf("pruning on differs from off: %v", err)
			}
		})
	}
}

// tpcdsQueryEngine reads TPC-DS query q and opens an engine over dir
// with the settings set (key=value each).
func tpcdsQueryEngine(t *testing.T, dir, q string, set ...string) (string, *fsql.Engine) {
	t.Helper()
	text, err := os.ReadFile(filepath.Join("testdata", "tpcds", "queries", q+".sql"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := fsql.DefaultConfig()
	for _, kv := range set {
		k, v, _ := strings.Cut(kv, "=")
		if err := cfg.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	eng, err := fsql.Open(dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(text)), eng
}
