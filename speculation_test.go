package fsql_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql"
	"github.com/fsql-dev/fsql/internal/answers"
)

// speculationSettings is a pool of 4 one-slot workers, fixed parallelism
// 4 (every stage has peers for the detector's baseline), and a detector
// quick enough for the tests' scale-0.2 tasks of tens of milliseconds.
var speculationSettings = []string{
	"minicluster.number-of-taskmanagers=4",
	"taskmanager.numberOfTaskSlots=1",
	"execution.batch.adaptive.auto-parallelism.enabled=false",
	"parallelism.default=4",
	"execution.batch.speculative.enabled=true",
	"slow-task-detector.check-interval=5ms",
	"slow-task-detector.execution-time.baseline-lower-bound=20ms",
	"slow-task-detector.execution-time.baseline-ratio=0.5",
	"restart-strategy.fixed-delay.delay=5ms",
}

// specEngine opens the golden data with settings and faults f, allocating
// from alloc.
func specEngine(t *testing.T, alloc memory.Allocator, f *fsql.Faults, set ...string) *fsql.Engine {
	t.Helper()
	cfg := fsql.DefaultConfig()
	for _, kv := range set {
		k, v, _ := strings.Cut(kv, "=")
		if err := cfg.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	eng, err := fsql.Open(tpcdsData(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if f != nil {
		eng = eng.WithFaults(*f)
	}
	return eng.WithAllocator(alloc)
}

// specAnswer runs golden query q on eng and returns its answer and how
// its tasks ran.
func specAnswer(t *testing.T, eng *fsql.Engine, q string) (*answers.Answer, fsql.AttemptStats) {
	t.Helper()
	text, err := os.ReadFile(filepath.Join("testdata", "tpcds", "queries", q+".sql"))
	if err != nil {
		t.Fatal(err)
	}
	rows, batches, err := collect(context.Background(), eng, strings.TrimSpace(string(text)))
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer releaseAll(batches)
	got, err := answers.FromArrow(rows.Schema(), batches)
	if err != nil {
		t.Fatal(err)
	}
	return got, rows.Attempts()
}

// TestSpeculationTPCDSSameAnswers runs the 20-query set on 4 workers with
// speculation on: with no fault, with one worker slowed 10 times, and
// with the first attempt of task 0 of every stage failed by an injected
// fault. Every answer is the golden one, every Arrow buffer is released
// and no goroutine outlives the queries, whatever attempts were
// cancelled or discarded.
func TestSpeculationTPCDSSameAnswers(t *testing.T) {
	if testing.Short() {
		t.Skip("generates TPC-DS data")
	}
	noLeaks(t)
	failFirst := func(_, task, attempt int) bool { return task == 0 && attempt == 0 }
	for _, c := range []struct {
		name   string
		faults *fsql.Faults
		check  func(t *testing.T, total fsql.AttemptStats)
	}{
		{"no fault", nil, nil},
		{"slow worker", &fsql.Faults{SlowWorkers: map[string]float64{"tm-1": 10}}, func(t *testing.T, total fsql.AttemptStats) {
			if total.Speculative == 0 || total.SpeculativeWon == 0 || !slices.Contains(total.Blocklisted, "tm-1") {
				t.Errorf("tm-1 slowed 10 times: %d speculative attempts, %d won, blocklisted %v", total.Speculative, total.SpeculativeWon, total.Blocklisted)
			}
		}},
		{"failures", &fsql.Faults{FailAttempt: failFirst}, func(t *testing.T, total fsql.AttemptStats) {
			// A failed attempt with a speculative copy still running is
			// not retried: the copy finishes the task.
			if total.Failed == 0 || total.Retries == 0 {
				t.Errorf("%d failed attempts, %d retries", total.Failed, total.Retries)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var total fsql.AttemptStats
			for _, q := range goldenQueries {
				alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
				eng := specEngine(t, alloc, c.faults, speculationSettings...)
				got, st := specAnswer(t, eng, q)
				if err := answers.Compare(readAnswer(t, q), got); err != nil {
					t.Errorf("%s: %v", q, err)
				}
				alloc.AssertSize(t, 0)
				total.Tasks += st.Tasks
				total.Attempts += st.Attempts
				total.Speculative += st.Speculative
				total.SpeculativeWon += st.SpeculativeWon
				total.Retries += st.Retries
				total.Failed += st.Failed
				for _, w := range st.Blocklisted {
					if !slices.Contains(total.Blocklisted, w) {
						total.Blocklisted = append(total.Blocklisted, w)
					}
				}
			}
			t.Logf("%s: %+v", c.name, total)
			if c.check != nil {
				c.check(t, total)
			}
		})
	}
}

// TestExplainAnalyzeAttempts: EXPLAIN ANALYZE of a query whose first
// attempt of stage 1 task 0 fails shows both attempts of that task, the
// worker, start, duration and bytes of each, the failure and the retry.
func TestExplainAnalyzeAttempts(t *testing.T) {
	if testing.Short() {
		t.Skip("generates TPC-DS data")
	}
	text, err := os.ReadFile(filepath.Join("testdata", "tpcds", "queries", "q3.sql"))
	if err != nil {
		t.Fatal(err)
	}
	fail := &fsql.Faults{FailAttempt: func(stage, task, attempt int) bool { return stage == 1 && task == 0 && attempt == 0 }}
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer alloc.AssertSize(t, 0)
	// No speculation: a copy of the attempt that is to fail could win
	// before it fails.
	set := append(append([]string(nil), speculationSettings...), "execution.batch.speculative.enabled=false")
	plan := explainAnalyze(t, specEngine(t, alloc, fail, set...), strings.TrimSpace(string(text)))
	stage1 := plan[strings.Index(plan, "Stage 1 "):]
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^  task 0 \(input [^)]+\):\n    attempt 0 on tm-\d slot 0, start \+\S+, ran \S+, read \S+, failed: attempt failed by an injected fault: stage 1 task 0 attempt 0 on tm-\d\n`),
		regexp.MustCompile(`(?m)^    attempt 1 on tm-\d slot 0, start \+\S+, ran \S+, read \S+, committed; retry of attempt 0, which failed on tm-\d: attempt failed by an injected fault`),
	} {
		if !want.MatchString(stage1) {
			t.Errorf("EXPLAIN ANALYZE lacks %s:\n%s", want, plan)
		}
	}
}
