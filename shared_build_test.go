package fsql_test

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/internal/answers"
)

// TestSharedBroadcastBuild: the tasks of a stage that joins a broadcast
// dimension build its hash table once and share it (EXPLAIN ANALYZE says
// how many built and borrowed it), and the answers are those of one task
// per stage, for inner, left, semi and anti joins.
func TestSharedBroadcastBuild(t *testing.T) {
	dir := skewData(t)
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer alloc.AssertSize(t, 0)
	fixed := func(p string) []string {
		return []string{"execution.batch.adaptive.auto-parallelism.enabled", "false", "parallelism.default", p,
			"table.optimizer.join.broadcast-threshold", "10mb"}
	}
	shared := adaptEngine(t, dir, alloc, fixed("3")...)
	one := adaptEngine(t, dir, alloc, fixed("1")...)
	const inner = "select f.a, count(*), sum(d.v) from fact f join dim d on f.k = d.k and d.a < 40 group by f.a order by 1"
	text := explainAnalyze(t, shared, inner)
	if !strings.Contains(text, "shared_build=1 built, 2 borrowed") {
		t.Fatalf("the join's three tasks did not share one build:\n%s", text)
	}
	for _, q := range []string{
		inner,
		"select f.a, count(*), sum(d.v) from fact f left join dim d on f.k = d.k and d.a < 25 group by f.a order by 1",
		"select f.a, count(*) from fact f where f.k in (select k from dim where a < 25) group by f.a order by 1",
		"select f.a, count(*) from fact f where not exists (select 1 from dim d where d.k = f.k and d.a < 25) group by f.a order by 1",
	} {
		if err := answers.Compare(answerOf(t, one, q), answerOf(t, shared, q)); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
}
