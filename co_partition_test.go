package fsql_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql"
	"github.com/fsql-dev/fsql/internal/answers"
)

// coPartitionedJoins counts the lines of an EXPLAIN ANALYZE text that
// say a planned broadcast join ran co-partitioned, and returns the hash
// join lines whose probe keys start with probe that spilled.
func coPartitionedJoins(text, probe string) (switched int, spilled []string) {
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, "co-partition switch: planned broadcast") {
			switched++
		}
		if strings.Contains(line, "HashJoin(") && strings.Contains(line, "probe ["+probe) && strings.Contains(line, "spilled=") {
			spilled = append(spilled, strings.TrimSpace(line))
		}
	}
	return switched, spilled
}

// TestCoPartitionSwitchTPCDS: q78's final two left joins are planned
// broadcasts (the planner estimates the web and catalog aggregates small)
// over a probe side hash-partitioned on the join keys (the store
// aggregate's year, item, customer). Under 8mb on 2 slots each build's
// table is over half a task's quota: held whole it spills (adaptive off
// shows it); at run time both joins run co-partitioned instead, each task
// building only its key groups' rows, and neither spills a byte, with
// the golden answer.
func TestCoPartitionSwitchTPCDS(t *testing.T) {
	if testing.Short() {
		t.Skip("generates TPC-DS data")
	}
	noLeaks(t)
	dir := tpcdsData(t)
	tmp := t.TempDir()
	set := []string{"execution.memory.query-budget=8mb", "taskmanager.numberOfTaskSlots=2", "io.tmp.dirs=" + tmp}
	want := readAnswerMaybeEmpty(t, "q78")
	if err := answers.Compare(want, queryAnswer(t, dir, "q78", set...)); err != nil {
		t.Fatal(err)
	}
	text := tpcdsExplain(t, dir, "q78", set...)
	switched, spilled := coPartitionedJoins(text, "ss.ss_sold_year")
	if switched != 2 {
		t.Fatalf("want both planned broadcast left joins co-partitioned, got %d switches:\n%s", switched, text)
	}
	if len(spilled) > 0 {
		t.Fatalf("co-partitioned joins spilled:\n%s\n\n%s", strings.Join(spilled, "\n"), text)
	}
	if !regexp.MustCompile(`raised to \d+ by the co-partition switch`).MatchString(text) {
		t.Errorf("the join stage's parallelism was not raised for its co-partitioned builds:\n%s", text)
	}
	// The budget is what makes the whole builds spill: with adaptive
	// scheduling off nothing switches, and the broadcast joins spill.
	off := append(append([]string{}, set...), "execution.batch.adaptive.auto-parallelism.enabled=false", "parallelism.default=2")
	offText := tpcdsExplain(t, dir, "q78", off...)
	if n, sp := coPartitionedJoins(offText, "ss.ss_sold_year"); n != 0 || len(sp) == 0 {
		t.Fatalf("adaptive off: want no switch and spilling broadcast joins, got %d switches and %d spilling joins:\n%s", n, len(sp), offText)
	}
	if err := answers.Compare(want, queryAnswer(t, dir, "q78", off...)); err != nil {
		t.Fatal(err)
	}
}

// TestCoPartitionSwitchJoinTypes: inner, left, semi and anti joins of an
// aggregate (hash-partitioned on k) with a dimension the planner
// broadcasts (a threshold of 1gb) that is too large for the budget run
// co-partitioned with the answers of an unlimited budget; NOT IN
// (null-aware: a NULL key's fate depends on the whole build side) never
// does, and neither does a join whose probe side is not partitioned on
// its keys. With every odd task's first attempt failing at its end (each
// retry reads the build side again, filtered the same way) the answers
// hold too.
func TestCoPartitionSwitchJoinTypes(t *testing.T) {
	dir := skewData(t)
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer alloc.AssertSize(t, 0)
	tmp := t.TempDir()
	tight := adaptEngine(t, dir, alloc, "table.optimizer.join.broadcast-threshold", "1gb",
		"execution.memory.query-budget", "2mb", "taskmanager.numberOfTaskSlots", "2", "io.tmp.dirs", tmp,
		"restart-strategy.fixed-delay.delay", "5ms")
	faulty := tight.WithFaults(fsql.Faults{FailAttempt: func(stage, task, attempt int) bool { return attempt == 0 && task%2 == 1 }})
	roomy := adaptEngine(t, dir, alloc, "table.optimizer.join.broadcast-threshold", "1gb")
	const fact = "(select k, count(*) c, sum(v) s from fact group by k) f"
	for _, c := range []struct {
		name, q  string
		switches bool
	}{
		{"inner", "select f.k, f.c, f.s, d.v from " + fact + " join dim d on d.k = f.k order by 1", true},
		{"left", "select f.k, f.c, d.v from " + fact + " left join (select * from dim where a < 40) d on d.k = f.k order by 1", true},
		{"semi", "select f.k, f.c from " + fact + " where exists (select 1 from dim d where d.k = f.k and d.a < 40) order by 1", true},
		{"anti", "select f.k, f.c from " + fact + " where not exists (select 1 from dim d where d.k = f.k and d.a < 40) order by 1", true},
		{"null-aware anti", "select f.k, f.c from " + fact + " where f.k not in (select k from dim where a < 40) order by 1", false},
		{"probe not partitioned on the keys", "select f.a, count(*), sum(d.v) from fact f join dim d on d.k = f.k group by f.a order by 1", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			text := explainAnalyze(t, tight, c.q)
			if got := strings.Contains(text, "co-partition switch:"); got != c.switches {
				t.Fatalf("co-partition switch %v, want %v:\n%s", got, c.switches, text)
			}
			want := answerOf(t, roomy, c.q)
			if err := answers.Compare(want, answerOf(t, tight, c.q)); err != nil {
				t.Fatal(err)
			}
			if err := answers.Compare(want, answerOf(t, faulty, c.q)); err != nil {
				t.Fatalf("with failing attempts: %v", err)
			}
		})
	}
}

// TestCoPartitionedBuildQ97: q97 joins its two aggregates (store and
// catalog customer-item pairs) on their group keys, each aggregate's
// output reaching the joins through a forward edge from a stage that read
// a hash exchange on those keys. The planner broadcasts the builds; at
// run time the larger one (the store pairs), though far under half a
// task's quota, runs co-partitioned, since shared one task would build
// it while the other waits; and as the build side was itself
// hash-partitioned on the keys before its broadcast, each task takes its
// key groups' pieces whole. The answer is the golden one, also when
// every odd task's first attempt fails at its end.
func TestCoPartitionedBuildQ97(t *testing.T) {
	if testing.Short() {
		t.Skip("generates TPC-DS data")
	}
	noLeaks(t)
	dir := tpcdsData(t)
	set := []string{"taskmanager.numberOfTaskSlots=2"}
	want := readAnswerMaybeEmpty(t, "q97")
	if err := answers.Compare(want, queryAnswer(t, dir, "q97", set...)); err != nil {
		t.Fatal(err)
	}
	text := tpcdsExplain(t, dir, "q97", set...)
	if !strings.Contains(text, "co-partitioned build: planned broadcast anti join") || !strings.Contains(text, "through a forward edge") || !strings.Contains(text, "pieces inside its key groups") {
		t.Fatalf("want q97's anti join co-partitioned through the forward edge, its build's pieces taken whole:\n%s", text)
	}
	q, eng := tpcdsQueryEngine(t, dir, "q97", set...)
	eng = eng.WithFaults(fsql.Faults{FailAttempt: func(stage, task, attempt int) bool { return attempt == 0 && task%2 == 1 }})
	schema, batches := runQuery(t, eng, q)
	got, err := answers.FromArrow(schema, batches)
	for _, b := range batches {
		b.Release()
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := answers.Compare(want, got); err != nil {
		t.Fatalf("with failing attempts: %v", err)
	}
}
