package fsql_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/internal/answers"
)

// TestSharedBroadcastBuildSpills: under a budget the broadcast dimension
// does not fit, the join's three tasks still build it once: the builder
// spills its partitions and the others join against those files
// (EXPLAIN ANALYZE: one built, two borrowed, one build file beside the
// tasks' probe files), and the answers are those of one task in memory,
// for inner, left, semi and anti joins.
func TestSharedBroadcastBuildSpills(t *testing.T) {
	noLeaks(t)
	dir := skewData(t)
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer alloc.AssertSize(t, 0)
	tmp := t.TempDir()
	fixed := func(p string, kv ...string) []string {
		return append([]string{"execution.batch.adaptive.auto-parallelism.enabled", "false", "parallelism.default", p,
			"table.optimizer.join.broadcast-threshold", "10mb", "taskmanager.numberOfTaskSlots", "2"}, kv...)
	}
	small := adaptEngine(t, dir, alloc, fixed("3", "execution.memory.query-budget", "1mb", "io.tmp.dirs", tmp)...)
	one := adaptEngine(t, dir, alloc, fixed("1")...)
	const inner = "select f.a, count(*), sum(d.v) from fact f join dim d on f.k = d.k group by f.a order by 1"
	text := explainAnalyze(t, small, inner)
	var join string
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, "HashJoin(") {
			join = line
		}
	}
	if !strings.Contains(join, "shared_build=1 built, 2 borrowed") || !strings.Contains(join, "spilled=") {
		t.Fatalf("the join's three tasks did not share one spilled build:\n%s", text)
	}
	// One build file and at most one probe file per task: a build
	// spilled per task would be three build files.
	m := regexp.MustCompile(`spill_files=(\d+)`).FindStringSubmatch(join)
	if m == nil {
		t.Fatalf("no spill_files on the join:\n%s", join)
	}
	if files, _ := strconv.Atoi(m[1]); files > 1+3 {
		t.Fatalf("the join wrote %d spill files, want one build file and at most three probe files:\n%s", files, join)
	}
	for _, q := range []string{
		inner,
		"select f.a, count(*), sum(d.v) from fact f left join dim d on f.k = d.k and d.a < 25 group by f.a order by 1",
		"select f.a, count(*) from fact f where f.k in (select k from dim where a < 25) group by f.a order by 1",
		"select f.a, count(*) from fact f where not exists (select 1 from dim d where d.k = f.k and d.a < 25) group by f.a order by 1",
	} {
		if err := answers.Compare(answerOf(t, one, q), answerOf(t, small, q)); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
	if left := spillFolders(t, tmp); len(left) != 0 {
		t.Fatalf("left %v in io.tmp.dirs", left)
	}
}
