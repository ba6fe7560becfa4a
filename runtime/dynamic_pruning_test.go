package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/parquet-go/parquet-go"
	"go.uber.org/goleak"

	"github.com/fsql-dev/fsql/connectors/hive"
	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/pruning"
	"github.com/fsql-dev/fsql/runtime"
	"github.com/fsql-dev/fsql/shuffle"
)

// These tests run the real coordinator (package pruning), hence the
// external test package.

// dppFact writes table "fact" partitioned by day = 1..6 and NULL, 200
// rows per partition in row groups of 50; id is unique and ascending, so
// row-group min/max statistics separate ids well.
func dppFact(t *testing.T) *hive.Table {
	t.Helper()
	dir := t.TempDir()
	group := parquet.Group{"id": parquet.Int(64), "v": parquet.String()}
	id := int64(0)
	for _, day := range []string{"1", "2", "3", "4", "5", "6", hive.DefaultPartitionName} {
		path := filepath.Join(dir, "fact", "day="+day, "part-0.parquet")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		w := parquet.NewWriter(f, parquet.NewSchema("t", group), parquet.MaxRowsPerRowGroup(50))
		b := parquet.NewRowBuilder(group)
		rows := make([]parquet.Row, 0, 200)
		for i := 0; i < 200; i++ {
			b.Reset()
			b.Add(0, parquet.Int64Value(id))
			b.Add(1, parquet.ByteArrayValue(fmt.Appendf(nil, "v%d", id)))
			rows = append(rows, b.Row())
			id++
		}
		if _, err := w.WriteRows(rows); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	cat, err := hive.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := cat.Table("fact")
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

const (
	factID  = 0
	factV   = 1
	factDay = 2
)

// dimValues is a one-column constant dimension of the given keys (nil is NULL).
func dimValues(typ arrow.DataType, keys ...any) *exec.Values {
	rows := make([][]expr.Expr, len(keys))
	for i, k := range keys {
		if k == nil {
			rows[i] = []expr.Expr{expr.Null(typ)}
		} else {
			rows[i] = []expr.Expr{expr.NewLiteral(k, typ)}
		}
	}
	return &exec.Values{Rows: rows, Names: []string{"k"}, Types: []arrow.DataType{typ}}
}

// dppPlan is a semi join of the fact scan with the dimension on factCol,
// hash-partitioned on both sides, so the scan's stage does not read the
// dimension's: only the OrderEnforce edge orders them.
func dppPlan(tb *hive.Table, dim exec.Node, factCol int) (root exec.Node, scan *exec.Scan, coll *exec.DynamicFilterDataCollector) {
	keyType := dim.Schema().Field(0).Type
	dimKey := expr.NewColumn(0, keyType, "k")
	coll = &exec.DynamicFilterDataCollector{ID: 1, Child: dim, Keys: []expr.Expr{dimKey}}
	name := tb.Schema.Field(factCol).Name
	scan = &exec.Scan{Table: tb, Columns: []int{factCol, factV}, DynamicFilters: []pruning.Target{{CollectorID: 1, Column: factCol, Name: name}}}
	factKey := expr.NewColumn(0, tb.Schema.Field(factCol).Type, name)
	root = &exec.HashJoin{
		Type:      exec.SemiJoin,
		Build:     &shuffle.Exchange{Kind: shuffle.Hash, Child: coll, Keys: []expr.Expr{dimKey}, MaxParallelism: 8},
		Probe:     &shuffle.Exchange{Kind: shuffle.Hash, Child: &exec.OrderEnforce{Child: scan, After: []int{coll.ID}}, Keys: []expr.Expr{factKey}, MaxParallelism: 8},
		BuildKeys: []expr.Expr{dimKey},
		ProbeKeys: []expr.Expr{factKey},
	}
	return root, scan, coll
}

// runAll runs root and returns the values of result column 1 ("v").
func runAll(t *testing.T, root exec.Node, mem memory.Allocator, stats *exec.QueryStats) ([]string, *runtime.ExecutionGraph) {
	t.Helper()
	return runWith(t, root, runtime.RunConfig{Parallelism: 2, Slots: 2, Alloc: mem, Stats: stats})
}

func runWith(t *testing.T, root exec.Node, cfg runtime.RunConfig) ([]string, *runtime.ExecutionGraph) {
	t.Helper()
	e, err := runtime.Run(context.Background(), root, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var out []string
	for {
		b, err := e.Next(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		v := b.Column(1).(*array.String)
		for i := 0; i < v.Len(); i++ {
			out = append(out, v.Value(i))
		}
		b.Release()
	}
	return out, e.Graph()
}

// TestDynamicPartitionPruningRun: the dimension's stage runs first, the
// scan reads only the partitions whose day it collected (a NULL key
// matches nothing, the NULL partition is pruned), the join's answer is
// unchanged, and EXPLAIN ANALYZE shows the edge and the ledger.
func TestDynamicPartitionPruningRun(t *testing.T) {
	defer goleak.VerifyNone(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	tb := dppFact(t)
	root, scan, _ := dppPlan(tb, dimValues(arrow.PrimitiveTypes.Int32, int32(2), int32(5), nil, int32(9)), factDay)

	jg, err := runtime.BuildJobGraph(root)
	if err != nil {
		t.Fatal(err)
	}
	plan := jg.Explain()
	for _, want := range []string{
		"Stage 2 (parallelism decided at run time) -> hash [day] by key group, 8 key groups waits for Stage 1 (dynamic filter)",
		"OrderEnforce(after collector 1)",
		"DynamicFilterDataCollector(id=1, keys [k])",
		"Scan(fact [day, v] partitions=7/7 dynamic filter on day from collector 1)",
	} {
		if !strings.Contains(plan, want) {
			t.Errorf("EXPLAIN lacks %q:\n%s", want, plan)
		}
	}

	stats := exec.NewQueryStats()
	got, g := runAll(t, root, mem, stats)
	if len(got) != 400 {
		t.Fatalf("%d rows, want 400 (days 2 and 5)", len(got))
	}
	for _, v := range got {
		var id int
		fmt.Sscanf(v, "v%d", &id)
		if day := id/200 + 1; day != 2 && day != 5 {
			t.Fatalf("row %s of day %d", v, day)
		}
	}
	sDim, sScan := g.Stages[0], g.Stages[1]
	if len(sScan.Stage.DependsOn) != 1 || sScan.Stage.DependsOn[0] != sDim.Stage {
		t.Fatalf("scan stage depends on %v", sScan.Stage.DependsOn)
	}
	if sScan.Start.Before(sDim.End) {
		t.Fatal("the scan stage started before the collector's stage ended")
	}
	sc := &stats.For(g.Job.NodeID(scan)).Scan
	if !sc.Dynamic() || sc.PartitionsTotal.Load() != 7 || sc.PartitionsKept.Load() != 2 || sc.RowGroupsKept.Load() != 8 || sc.RowGroupsTotal.Load() != 28 ||
		sc.Files.Load() != 2 || sc.FilesPruned.Load() != 5 || sc.RowsRead.Load() != 400 || sc.RowsKept.Load() != 400 || sc.BytesRead.Load() <= 0 ||
		len(sc.Ledger()) != 1 || sc.Ledger()[0] != (exec.CollectorLedger{Collector: 1, Exact: true, Keys: 3}) {
		t.Fatalf("ledger %+v %+v", scanCounts(sc), sc.Ledger())
	}
	if sc.FilterWait() <= 0 {
		t.Fatalf("no filter wait noted: %v", sc.FilterWait())
	}
	analyze := g.Explain(stats)
	for _, want := range []string{"ledger: partitions 2/7, files 2/7, row groups 8/28, rows 400/400 kept, bytes ", "filter wait ", "collector 1 keys 3"} {
		if !strings.Contains(analyze, want) {
			t.Errorf("EXPLAIN ANALYZE lacks %q:\n%s", want, analyze)
		}
	}
	t.Logf("\n%s", analyze)
}

// TestDynamicRowGroupAndRowPruning: a file-column target prunes row groups
// by min/max and rows by value.
func TestDynamicRowGroupAndRowPruning(t *testing.T) {
	defer goleak.VerifyNone(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	tb := dppFact(t)
	root, scan, _ := dppPlan(tb, dimValues(arrow.PrimitiveTypes.Int64, int64(7), int64(30), int64(1210), int64(5000), nil), factID)
	stats := exec.NewQueryStats()
	got, g := runAll(t, root, mem, stats)
	if strings.Join(sortedCopy(got), ",") != "v1210,v30,v7" {
		t.Fatalf("rows %v", got)
	}
	sc := &stats.For(g.Job.NodeID(scan)).Scan
	// 7 and 30 share row group 0 of day 1; 1210 is in the NULL partition's
	// first row group (ids 1200..1249).
	if sc.PartitionsKept.Load() != 7 || sc.RowGroupsKept.Load() != 2 || sc.RowsRead.Load() != 100 || sc.RowsKept.Load() != 3 {
		t.Fatalf("ledger %+v", scanCounts(sc))
	}
}

// TestDynamicDegradedRun: past the collector cap the filter is a bloom
// filter, and the join's answer is still complete.
func TestDynamicDegradedRun(t *testing.T) {
	defer goleak.VerifyNone(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	tb := dppFact(t)
	var keys []any
	for id := int64(300); id < 1400; id += 50 { // the first id of 22 row groups
		keys = append(keys, id)
	}
	root, scan, _ := dppPlan(tb, dimValues(arrow.PrimitiveTypes.Int64, keys...), factID)
	stats := exec.NewQueryStats()
	got, g := runWith(t, root, runtime.RunConfig{Parallelism: 2, Slots: 2, Alloc: mem, Stats: stats, DynamicFilterMaxValues: 4})
	if len(got) != len(keys) {
		t.Fatalf("%d rows %v", len(got), got)
	}
	sc := &stats.For(g.Job.NodeID(scan)).Scan
	if l := sc.Ledger(); len(l) != 1 || l[0].Exact || l[0].Bloom <= 0 || sc.RowsKept.Load() < 22 || sc.RowGroupsKept.Load() != 22 {
		t.Fatalf("ledger %+v %+v", scanCounts(sc), sc.Ledger())
	}
}

// TestDynamicPruningErrors: an incomplete collector fails the scan; the
// stage cut refuses an OrderEnforce it cannot honour.
func TestDynamicPruningErrors(t *testing.T) {
	defer goleak.VerifyNone(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	tb := dppFact(t)
	root, scan, coll := dppPlan(tb, dimValues(arrow.PrimitiveTypes.Int32, int32(1)), factDay)

	// The scan alone, before the collector ran.
	coord := pruning.NewCoordinator(pruning.CoordinatorConfig{})
	st, err := scan.Open(&exec.TaskContext{Alloc: mem, Parallelism: 1, DynamicFilters: coord}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.Next(context.Background())
	st.Close()
	if !errors.Is(err, exec.ErrExecution) || !strings.Contains(err.Error(), "dynamic filter 1 incomplete") {
		t.Fatalf("scan before its collector: %v", err)
	}

	// Collector and OrderEnforce in one stage.
	same := &exec.UnionAll{Inputs: []exec.Node{coll, &exec.OrderEnforce{Child: coll, After: []int{coll.ID}}}}
	if _, err := runtime.BuildJobGraph(same); !errors.Is(err, errs.Internal) {
		t.Fatalf("same stage: %v", err)
	}
	// A collector that is not in the plan.
	if _, err := runtime.BuildJobGraph(&exec.OrderEnforce{Child: scan, After: []int{7}}); !errors.Is(err, errs.Internal) {
		t.Fatalf("missing collector: %v", err)
	}
	// A dynamic scan that does not wait for its collector is refused at
	// the cut, not left to scheduling luck.
	noWait := &exec.HashJoin{
		Type:      exec.SemiJoin,
		Build:     &shuffle.Exchange{Kind: shuffle.Hash, Child: coll, Keys: coll.Keys, MaxParallelism: 8},
		Probe:     &shuffle.Exchange{Kind: shuffle.Hash, Child: scan, Keys: []expr.Expr{expr.NewColumn(0, arrow.PrimitiveTypes.Int32, "day")}, MaxParallelism: 8},
		BuildKeys: coll.Keys,
		ProbeKeys: []expr.Expr{expr.NewColumn(0, arrow.PrimitiveTypes.Int32, "day")},
	}
	if _, err := runtime.BuildJobGraph(noWait); !errors.Is(err, errs.Internal) || !strings.Contains(err.Error(), "does not wait") {
		t.Fatalf("scan without OrderEnforce: %v", err)
	}
	// A broadcast build read by the scan's own stage already orders them.
	bcast := &exec.HashJoin{
		Type:      exec.SemiJoin,
		Build:     &shuffle.Exchange{Kind: shuffle.Broadcast, Child: coll},
		Probe:     scan,
		BuildKeys: coll.Keys,
		ProbeKeys: []expr.Expr{expr.NewColumn(0, arrow.PrimitiveTypes.Int32, "day")},
	}
	if _, err := runtime.BuildJobGraph(bcast); err != nil {
		t.Fatalf("broadcast build: %v", err)
	}
	// The full plan still runs.
	if got, _ := runAll(t, root, mem, nil); len(got) != 200 {
		t.Fatalf("%d rows", len(got))
	}
}

// TestPlanRunsTwice: the plan holds no filter state (the runtime creates
// a coordinator per run), so one plan runs again, and concurrently, with
// the same answer and the same filters: keys are neither carried over nor
// doubled (a shared coordinator would refuse the second run's keys, its
// filter being frozen).
func TestPlanRunsTwice(t *testing.T) {
	defer goleak.VerifyNone(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	tb := dppFact(t)
	root, scan, _ := dppPlan(tb, dimValues(arrow.PrimitiveTypes.Int32, int32(2), int32(5), nil, int32(9)), factDay)
	check := func(got []string, stats *exec.QueryStats, g *runtime.ExecutionGraph) {
		t.Helper()
		sc := &stats.For(g.Job.NodeID(scan)).Scan
		if len(got) != 400 || sc.PartitionsKept.Load() != 2 || len(sc.Ledger()) != 1 || sc.Ledger()[0] != (exec.CollectorLedger{Collector: 1, Exact: true, Keys: 3}) {
			t.Fatalf("%d rows, %d partitions kept, ledger %+v", len(got), sc.PartitionsKept.Load(), sc.Ledger())
		}
	}
	for run := 0; run < 2; run++ {
		stats := exec.NewQueryStats()
		got, g := runWith(t, root, runtime.RunConfig{Parallelism: 2, Slots: 2, Alloc: mem, Stats: stats})
		check(got, stats, g)
	}
	// Two runs at once.
	type result struct {
		got   []string
		stats *exec.QueryStats
		g     *runtime.ExecutionGraph
	}
	results := make(chan result, 2)
	for run := 0; run < 2; run++ {
		go func() {
			stats := exec.NewQueryStats()
			e, err := runtime.Run(context.Background(), root, runtime.RunConfig{Parallelism: 3, Slots: 2, Alloc: mem, Stats: stats})
			if err != nil {
				results <- result{}
				return
			}
			defer e.Close()
			var out []string
			for {
				b, err := e.Next(context.Background())
				if err != nil {
					break
				}
				v := b.Column(1).(*array.String)
				for i := 0; i < v.Len(); i++ {
					out = append(out, v.Value(i))
				}
				b.Release()
			}
			if e.Err() != nil {
				out = nil
			}
			results <- result{out, stats, e.Graph()}
		}()
	}
	for run := 0; run < 2; run++ {
		r := <-results
		if r.g == nil {
			t.Fatal("a concurrent run failed to start")
		}
		check(r.got, r.stats, r.g)
	}
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// scanCounts lists a scan's counters for failure messages.
func scanCounts(sc *exec.ScanStats) map[string]int64 {
	return map[string]int64{
		"bytes_read": sc.BytesRead.Load(), "partitions_total": sc.PartitionsTotal.Load(), "partitions_static": sc.PartitionsStatic.Load(),
		"partitions_kept": sc.PartitionsKept.Load(), "files": sc.Files.Load(), "files_pruned": sc.FilesPruned.Load(),
		"row_groups_total": sc.RowGroupsTotal.Load(), "row_groups_kept": sc.RowGroupsKept.Load(),
		"rows_read": sc.RowsRead.Load(), "rows_kept": sc.RowsKept.Load(),
	}
}

// TestTwoAttemptsCollector: the collector's task runs as two attempts
// (the first cancelled mid-way, or both finishing and one discarded): the
// filter counts the task once, holds exactly the dimension's keys, the
// join's answer is unchanged and nothing leaks.
func TestTwoAttemptsCollector(t *testing.T) {
	defer goleak.VerifyNone(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	tb := dppFact(t)
	// Three batches of keys, so an attempt can stop after the first.
	dim := func() exec.Node {
		return &exec.UnionAll{Inputs: []exec.Node{
			dimValues(arrow.PrimitiveTypes.Int32, int32(2)),
			dimValues(arrow.PrimitiveTypes.Int32, int32(5), nil),
			dimValues(arrow.PrimitiveTypes.Int32, int32(9)),
		}}
	}
	for _, fault := range []runtime.AttemptFault{{Twin: true, CancelAfter: 1}, {Twin: true, BothFinish: true}} {
		root, scan, _ := dppPlan(tb, dim(), factDay)
		stats := exec.NewQueryStats()
		budget := exec.NewMemoryBudget(0)
		e, err := runtime.Run(context.Background(), root, runtime.RunConfig{
			Parallelism: 2, Slots: 1, Alloc: mem, Memory: budget, Stats: stats,
			Faults: &runtime.Faults{Attempt: func(stage, task, attempt int) runtime.AttemptFault {
				if stage == 1 && attempt == 0 {
					return fault
				}
				return runtime.AttemptFault{}
			}},
		})
		if err != nil {
			t.Fatal(err)
		}
		rows := 0
		for {
			b, err := e.Next(context.Background())
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			rows += int(b.NumRows())
			b.Release()
		}
		e.Close()
		if rows != 400 {
			t.Fatalf("%+v: %d rows, want 400 (days 2 and 5)", fault, rows)
		}
		g := e.Graph()
		task := g.Stages[0].Tasks[0]
		if len(task.Attempts) != 2 || task.Committed == nil {
			t.Fatalf("%+v: collector task ran %d attempts", fault, len(task.Attempts))
		}
		if a0 := task.Attempts[0]; fault.CancelAfter > 0 && (a0.State() != runtime.Cancelled || task.Committed != task.Attempts[1]) {
			t.Fatalf("attempt 0 %s, committed #%d; want the first cancelled, the second committed", a0.State(), task.Committed.Number)
		}
		sc := &stats.For(g.Job.NodeID(scan)).Scan
		if l := sc.Ledger(); len(l) != 1 || l[0].Keys != 3 || sc.PartitionsKept.Load() != 2 {
			t.Fatalf("%+v: ledger %+v, partitions kept %d", fault, l, sc.PartitionsKept.Load())
		}
		if budget.Used() != 0 {
			t.Fatalf("%+v: budget holds %d", fault, budget.Used())
		}
	}
}
