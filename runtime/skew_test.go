package runtime

import (
	"context"
	"io"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.uber.org/goleak"

	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/runtime/policy"
	"github.com/fsql-dev/fsql/shuffle"
)

var kvSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "key", Type: arrow.PrimitiveTypes.Int64},
}, nil)

// kvSource emits Rows rows split among its tasks: id, and key = 0 for
// every row with id%100 < HotPct (the hot key), else id % Keys. Batches
// hold 1000 rows.
type kvSource struct {
	Rows, Keys, HotPct, Offset int
}

func (s *kvSource) Schema() *arrow.Schema { return kvSchema }
func (s *kvSource) Children() []exec.Node { return nil }
func (s *kvSource) String() string        { return "KV" }
func (s *kvSource) Open(tc *exec.TaskContext, _ []exec.Stream) (exec.Stream, error) {
	p := max(tc.Parallelism, 1)
	return &kvStream{s: s, alloc: tc.Alloc, next: s.Rows * tc.Task / p, end: s.Rows * (tc.Task + 1) / p}, nil
}

func (s *kvSource) key(id int) int64 {
	if id%100 < s.HotPct {
		return 0
	}
	return int64(id % s.Keys)
}

type kvStream struct {
	s         *kvSource
	alloc     memory.Allocator
	next, end int
}

func (st *kvStream) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if st.next >= st.end {
		return nil, io.EOF
	}
	n := min(1000, st.end-st.next)
	ib, kb := array.NewInt64Builder(st.alloc), array.NewInt64Builder(st.alloc)
	defer ib.Release()
	defer kb.Release()
	for i := st.next; i < st.next+n; i++ {
		ib.Append(int64(i + st.s.Offset))
		kb.Append(st.s.key(i))
	}
	st.next += n
	ids, keys := ib.NewArray(), kb.NewArray()
	defer ids.Release()
	defer keys.Release()
	return array.NewRecordBatch(kvSchema, []arrow.Array{ids, keys}, int64(n)), nil
}

func (st *kvStream) Close() {}

func kvKey() expr.Expr { return expr.NewColumn(1, arrow.PrimitiveTypes.Int64, "key") }

// joinPlan is a join of probe and build, both hash-exchanged on key.
func joinPlan(t exec.JoinType, probe, build *kvSource) exec.Node {
	return &exec.HashJoin{
		Type:      t,
		Probe:     &shuffle.Exchange{Kind: shuffle.Hash, Child: probe, Keys: []expr.Expr{kvKey()}, MaxParallelism: 32},
		Build:     &shuffle.Exchange{Kind: shuffle.Hash, Child: build, Keys: []expr.Expr{kvKey()}, MaxParallelism: 32},
		ProbeKeys: []expr.Expr{kvKey()}, BuildKeys: []expr.Expr{kvKey()},
	}
}

// joinRows runs the plan and returns how often each (probe id, build id)
// pair (build id -1 for probe-only rows) came out, and the graph.
func joinRows(t *testing.T, root exec.Node, cfg RunConfig) (map[[2]int64]int, *ExecutionGraph) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	cfg.Alloc, cfg.Slots = mem, 2
	e, err := Run(context.Background(), root, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	out := map[[2]int64]int{}
	for {
		b, err := e.Next(context.Background())
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		probe := b.Column(0).(*array.Int64)
		for i := 0; i < int(b.NumRows()); i++ {
			k := [2]int64{probe.Value(i), -1}
			if b.NumCols() > 2 && b.Column(2).IsValid(i) {
				k[1] = b.Column(2).(*array.Int64).Value(i)
			}
			out[k]++
		}
		b.Release()
	}
	return out, e.Graph()
}

func joinStage(g *ExecutionGraph) *StageRun {
	for _, st := range g.Stages {
		if _, ok := st.Stage.Root.(*exec.HashJoin); ok {
			return st
		}
	}
	return nil
}

func adaptiveCfg(threshold int64, broadcast int64) RunConfig {
	return RunConfig{Parallelism: 3, Adaptive: policy.AdaptiveConfig{
		Enabled: true, BytesPerTask: 64 << 10, MaxParallelism: 32,
		SkewFactor: 4, SkewThreshold: threshold, BroadcastThreshold: broadcast,
	}}
}

// A hot key (40% of the probe rows) is split for inner, left, semi and
// anti joins, never for right and full joins, and every join gives the
// same pairs as without adaptive scheduling.
func TestSkewedJoinSplitKeepsAnswers(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, jt := range []exec.JoinType{exec.InnerJoin, exec.LeftJoin, exec.SemiJoin, exec.AntiJoin, exec.RightJoin, exec.FullJoin} {
		probe := &kvSource{Rows: 60000, Keys: 5000, HotPct: 40}
		build := &kvSource{Rows: 4000, Keys: 8000, Offset: 1 << 20} // keys 0..3999, each once
		want, _ := joinRows(t, joinPlan(jt, probe, build), RunConfig{Parallelism: 3})
		got, g := joinRows(t, joinPlan(jt, probe, build), adaptiveCfg(1, 0))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: adaptive answer differs (%d vs %d distinct rows)", jt, len(got), len(want))
		}
		st := joinStage(g)
		canSplit := (&exec.HashJoin{Type: jt}).SplittableInputs()[1] // [build, probe]
		if canSplit != (len(st.SkewSplits) > 0) {
			t.Errorf("%s: skew splits %v, splittable %v", jt, st.SkewSplits, canSplit)
		}
		if canSplit && st.SkewSplits[0].Side != "probe" {
			t.Errorf("%s: split the %s side", jt, st.SkewSplits[0].Side)
		}
	}
}

// An inner join splits a skewed build side (each build piece meets all
// probe rows of its key); the pairs are unchanged.
func TestSkewedBuildSideSplitInner(t *testing.T) {
	defer goleak.VerifyNone(t)
	probe := &kvSource{Rows: 3000, Keys: 3000}
	build := &kvSource{Rows: 60000, Keys: 5000, HotPct: 40, Offset: 1 << 20}
	want, _ := joinRows(t, joinPlan(exec.InnerJoin, probe, build), RunConfig{Parallelism: 3})
	got, g := joinRows(t, joinPlan(exec.InnerJoin, probe, build), adaptiveCfg(1, 0))
	if !reflect.DeepEqual(got, want) {
		t.Errorf("adaptive answer differs (%d vs %d distinct pairs)", len(got), len(want))
	}
	st := joinStage(g)
	if len(st.SkewSplits) == 0 || st.SkewSplits[0].Side != "build" {
		t.Errorf("build side not split: %v", st.SkewSplits)
	}
}

// The broadcast switch: a small build side makes the probe stage write a
// forward edge and the join run on the probe stage's tasks; right joins
// never switch. Answers are unchanged.
func TestBroadcastSwitch(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, jt := range []exec.JoinType{exec.InnerJoin, exec.SemiJoin, exec.LeftJoin, exec.RightJoin} {
		probe := &kvSource{Rows: 60000, Keys: 5000}
		build := &kvSource{Rows: 500, Keys: 8000, Offset: 1 << 20}
		want, _ := joinRows(t, joinPlan(jt, probe, build), RunConfig{Parallelism: 3})
		got, g := joinRows(t, joinPlan(jt, probe, build), adaptiveCfg(1<<40, 1<<20))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: switched answer differs (%d vs %d distinct rows)", jt, len(got), len(want))
		}
		st := joinStage(g)
		switched := jt == exec.InnerJoin || jt == exec.SemiJoin || jt == exec.LeftJoin
		if (st.Switch != "") != switched {
			t.Errorf("%s: switch %q, want switched=%v", jt, st.Switch, switched)
		}
		var probeStage *StageRun
		for i, ex := range st.Stage.Inputs {
			if ex == st.Stage.Root.(*exec.HashJoin).Probe {
				probeStage = g.Run(st.Stage.Producers[i])
			}
		}
		if probeStage.OutBuffer.Forward() != switched {
			t.Errorf("%s: probe exchange forward=%v", jt, probeStage.OutBuffer.Forward())
		}
		if switched && st.Parallelism != probeStage.Parallelism {
			t.Errorf("%s: join ran %d tasks, probe side %d", jt, st.Parallelism, probeStage.Parallelism)
		}
	}
	// Above the threshold nothing switches.
	probe := &kvSource{Rows: 60000, Keys: 5000}
	build := &kvSource{Rows: 5000, Keys: 8000}
	_, g := joinRows(t, joinPlan(exec.InnerJoin, probe, build), adaptiveCfg(1<<40, 1000))
	if st := joinStage(g); st.Switch != "" {
		t.Errorf("switched a build side above the threshold: %s", st.Switch)
	}
}

// findSwitches only offers joins whose probe stage feeds nothing else and
// whose build stage does not wait for the probe stage.
func TestFindSwitchesShape(t *testing.T) {
	probe, build := &kvSource{Rows: 10, Keys: 5}, &kvSource{Rows: 10, Keys: 5}
	g, err := BuildJobGraph(joinPlan(exec.InnerJoin, probe, build))
	if err != nil {
		t.Fatal(err)
	}
	sws := findSwitches(g)
	if len(sws) != 1 || sws[0].join != g.Result {
		t.Fatalf("switches %v", sws)
	}
	// The build stage waiting for the probe stage would deadlock.
	g2, _ := BuildJobGraph(joinPlan(exec.InnerJoin, probe, build))
	js := g2.Result
	var ps, bs *Stage
	for i, ex := range js.Inputs {
		if ex == js.Root.(*exec.HashJoin).Probe {
			ps = js.Producers[i]
		} else {
			bs = js.Producers[i]
		}
	}
	bs.DependsOn = append(bs.DependsOn, ps)
	if sws := findSwitches(g2); len(sws) != 0 {
		t.Errorf("offered a switch whose build stage waits for the probe stage")
	}
	// A final aggregate above the join needs whole key groups: no switch.
	g3, _ := BuildJobGraph(&exec.HashAggregate{Mode: exec.AggFinal, Child: joinPlan(exec.InnerJoin, probe, build)})
	if _, ok := shuffledJoin(g3.Result); ok {
		t.Errorf("a final aggregate above the join was taken for a row-local stage")
	}
	// The join feeding the build side of another join in its stage: each
	// task's share would be taken for the whole build side.
	outer := &exec.HashJoin{Type: exec.InnerJoin, Build: joinPlan(exec.InnerJoin, probe, build), Probe: &kvSource{Rows: 10, Keys: 5},
		BuildKeys: []expr.Expr{kvKey()}, ProbeKeys: []expr.Expr{kvKey()}}
	g4, _ := BuildJobGraph(outer)
	if _, ok := shuffledJoin(g4.Result); ok {
		t.Errorf("a join on the build side of another join was taken for a row-local stage")
	}
}
