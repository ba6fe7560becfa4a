package fsql_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fsql-dev/fsql"
	"github.com/fsql-dev/fsql/connectors/tpcds"
	"github.com/fsql-dev/fsql/internal/answers"
)

// The foundation's TPC-DS set: these queries must return the golden
// answers DuckDB computed over the same generated data.
var goldenQueries = []string{"q3", "q7", "q19", "q27", "q34", "q42", "q43", "q46", "q52", "q53",
	"q55", "q59", "q63", "q65", "q68", "q73", "q79", "q89", "q96", "q98"}

// goldenScale and goldenSeed must match testdata/tpcds/answers/README.md.
const (
	goldenScale = 0.2
	goldenSeed  = 1
)

var (
	tpcdsOnce sync.Once
	tpcdsDir  string
	tpcdsErr  error
)

// tpcdsData generates the golden answers' dataset once per machine, in the
// user's cache folder (tests of several packages and runs share it).
func tpcdsData(t testing.TB) string {
	t.Helper()
	tpcdsOnce.Do(func() {
		cache, err := os.UserCacheDir()
		if err != nil {
			cache = os.TempDir()
		}
		// The oracle ran on the unpartitioned layout (--partitioned=false).
		tpcdsDir = filepath.Join(cache, "fsql", tpcds.CacheFolder(fmt.Sprintf("tpcds-sf%g-seed%d-flat", goldenScale, goldenSeed)))
		if _, err := os.Stat(tpcdsDir); err == nil {
			return
		}
		tpcdsErr = tpcds.Generate(context.Background(), tpcds.Options{
			Scale: goldenScale, Out: tpcdsDir, Partitioned: false, RowGroupRows: 122880, Seed: goldenSeed,
		})
	})
	if tpcdsErr != nil {
		t.Fatalf("generating TPC-DS data: %v", tpcdsErr)
	}
	return tpcdsDir
}

func runQuery(t *testing.T, eng *fsql.Engine, text string) (*arrow.Schema, []arrow.RecordBatch) {
	t.Helper()
	rows, out, err := collect(context.Background(), eng, text)
	if err != nil {
		t.Fatal(err)
	}
	return rows.Schema(), out
}

// TestTPCDSGolden runs the set on both layouts of the same data: flat
// files sorted by date (dynamic pruning skips row groups) and
// Hive-partitioned (it skips partitions).
func TestTPCDSGolden(t *testing.T) {
	if testing.Short() {
		t.Skip("generates TPC-DS data")
	}
	for _, layout := range []struct {
		name    string
		dir     string
		checked bool
		set     []string
	}{
		// Fixed parallelism, more tasks than cores: exercises the shuffle;
		// a checked allocator catches leaked buffers.
		{"flat", tpcdsData(t), true, []string{"execution.batch.adaptive.auto-parallelism.enabled=false", "parallelism.default=3"}},
		// The defaults: adaptive parallelism, dynamic pruning, and the
		// default allocator with its recycled scan buffers.
		{"partitioned", tpcdsPartitioned(t), false, nil},
		// Hybrid shuffle (consumers of gather, broadcast and forward edges
		// start while producers run): with room for pipelining under the
		// checked allocator, with 4 slots on the defaults, and with one
		// slot, where nothing may pipeline and nothing may deadlock.
		{"flat-hybrid-full", tpcdsData(t), true, []string{"execution.batch.adaptive.auto-parallelism.enabled=false", "parallelism.default=3", "taskmanager.numberOfTaskSlots=8", "execution.batch-shuffle-mode=ALL_EXCHANGES_HYBRID_FULL"}},
		{"partitioned-hybrid-full-4-slots", tpcdsPartitioned(t), false, []string{"taskmanager.numberOfTaskSlots=4", "execution.batch-shuffle-mode=ALL_EXCHANGES_HYBRID_FULL"}},
		{"partitioned-hybrid-selective-1-slot", tpcdsPartitioned(t), false, []string{"taskmanager.numberOfTaskSlots=1", "execution.batch-shuffle-mode=ALL_EXCHANGES_HYBRID_SELECTIVE"}},
	} {
		for _, q := range goldenQueries {
			t.Run(layout.name+"/"+q, func(t *testing.T) {
				want := readAnswer(t, q)
				var got *answers.Answer
				if layout.checked {
					got = queryAnswer(t, layout.dir, q, layout.set...)
				} else {
					got = queryAnswerWith(t, nil, layout.dir, q, layout.set...)
				}
				if err := answers.Compare(want, got); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// readAnswer reads the golden answer of query q, which must have rows.
func readAnswer(t *testing.T, q string) *answers.Answer {
	t.Helper()
	want := readAnswerMaybeEmpty(t, q)
	if len(want.Rows) == 0 {
		t.Fatalf("the golden answer of %s is empty: regenerate the answers (make answers)", q)
	}
	return want
}

// multiStageQueries are the TPC-DS statements with the most stages
// (several shuffled joins and aggregates feeding each other), where
// hybrid shuffle pipelines hash edges too.
var multiStageQueries = []string{"q4", "q11", "q23a", "q23b", "q64", "q74", "q78"}

// TestTPCDSHybridMultiStage: the multi-stage statements give the golden
// answers in both hybrid modes with many slots (hash, gather and
// broadcast edges pipelined, adaptive parallelism deciding from
// committed bytes scaled by progress) and with one slot (nothing
// pipelined, nothing deadlocked). Blocking mode is TestTPCDSAllQueries.
func TestTPCDSHybridMultiStage(t *testing.T) {
	if testing.Short() {
		t.Skip("generates TPC-DS data")
	}
	for _, set := range [][]string{
		{"execution.batch-shuffle-mode=ALL_EXCHANGES_HYBRID_FULL", "taskmanager.numberOfTaskSlots=8"},
		{"execution.batch-shuffle-mode=ALL_EXCHANGES_HYBRID_SELECTIVE", "taskmanager.numberOfTaskSlots=4"},
		{"execution.batch-shuffle-mode=ALL_EXCHANGES_HYBRID_FULL", "taskmanager.numberOfTaskSlots=1"},
	} {
		for _, q := range multiStageQueries {
			t.Run(set[0][len("execution.batch-shuffle-mode="):]+"/"+set[1][len("taskmanager.numberOfTaskSlots="):]+"-slots/"+q, func(t *testing.T) {
				if err := answers.Compare(readAnswerMaybeEmpty(t, q), queryAnswer(t, tpcdsData(t), q, set...)); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}
