package fsql_test

import (
	"strings"
	"testing"

	"github.com/fsql-dev/fsql/internal/answers"
)

// TPC-DS statements whose hash joins spill give the golden answers. The
// budget is divided by task slot: with 64 slots each task's quota is
// 1/64 of it, and a join's build side is held to its share of that,
// while the unspillable buffers (aggregates, the shuffle) still find
// room in the whole budget.
func TestSpillJoinTPCDS(t *testing.T) {
	if testing.Short() {
		t.Skip("generates TPC-DS data")
	}
	noLeaks(t)
	dir := tpcdsData(t)
	tmp := t.TempDir()
	set := []string{"execution.memory.query-budget=256mb", "taskmanager.numberOfTaskSlots=64", "io.tmp.dirs=" + tmp,
		"execution.batch.adaptive.auto-parallelism.enabled=false", "parallelism.default=3"}
	for _, c := range []struct {
		name, q  string
		set      []string
		keyGroup bool // some join's tasks partition by key group
	}{
		{"q64", "q64", nil, false},
		{"q78", "q78", nil, false},
		// No broadcast: every join is shuffled by its keys, and its
		// tasks (three, of 128 key groups) partition by key group. At
		// 64mb: with its year filter on every channel (pushdown_through_keys.go)
		// q78's shuffled joins fit in 256mb.
		{"q78-shuffled", "q78", []string{"table.optimizer.join.broadcast-threshold=0", "execution.memory.query-budget=64mb"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			q, set := c.q, append(append([]string{}, set...), c.set...)
			want := readAnswerMaybeEmpty(t, q)
			got := queryAnswer(t, dir, q, set...)
			if err := answers.Compare(want, got); err != nil {
				t.Fatal(err)
			}
			plan := tpcdsExplain(t, dir, q, set...)
			spilled, byKeyGroup := 0, 0
			for _, line := range strings.Split(plan, "\n") {
				if strings.Contains(line, "HashJoin(") && strings.Contains(line, "reserved=") && strings.Contains(line, "spilled=") && strings.Contains(line, "spill_passes=") {
					spilled++
					if strings.Contains(line, "spill_partitioning=key-group") {
						byKeyGroup++
					}
				}
			}
			if spilled == 0 {
				t.Fatalf("no hash join of %s spilled:\n%s", q, plan)
			}
			if c.keyGroup && byKeyGroup == 0 {
				t.Fatalf("no hash join of %s partitioned its spill by key group:\n%s", q, plan)
			}
			t.Logf("%s: %d hash joins spilled, %d by key group", q, spilled, byKeyGroup)
			if left := spillFolders(t, tmp); len(left) != 0 {
				t.Fatalf("%s left %v in io.tmp.dirs", q, left)
			}
		})
	}
}

// tpcdsExplain runs EXPLAIN ANALYZE of TPC-DS query q under the settings
// set and returns the plan text.
func tpcdsExplain(t *testing.T, dir, q string, set ...string) string {
	t.Helper()
	text, eng := tpcdsQueryEngine(t, dir, q, set...)
	return explainAnalyze(t, eng, text)
}
