package exec

import (
	"context"
	"io"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.uber.org/goleak"

	"github.com/fsql-dev/fsql/exec/expr"
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
func (s *kvSource) Children() []Node      { return nil }
func (s *kvSource) String() string        { return "KV" }
func (s *kvSource) Open(tc *TaskContext, _ []Stream) (Stream, error) {
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
func joinPlan(t JoinType, probe, build *kvSource) Node {
	return &HashJoin{
		Type:      t,
		Probe:     &Exchange{Kind: HashExchange, Child: probe, Keys: []expr.Expr{kvKey()}, MaxParallelism: 32},
		Build:     &Exchange{Kind: HashExchange, Child: build, Keys: []expr.Expr{kvKey()}, MaxParallelism: 32},
		ProbeKeys: []expr.Expr{kvKey()}, BuildKeys: []expr.Expr{kvKey()},
	}
}

// joinRows runs the plan and returns how often each (probe id, build id)
// pair (build id -1 for probe-only rows) came out, and the graph.
func joinRows(t *testing.T, root Node, cfg RunConfig) (map[[2]int64]int, *JobGraph) {
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

func joinStage(g *JobGraph) *Stage {
	for _, st := range g.Stages {
		if _, ok := st.Root.(*HashJoin); ok {
			return st
		}
	}
	return nil
}

func TestSplittableSides(t *testing.T) {
	for _, c := range []struct {
		t            JoinType
		probe, build bool
	}{
		{InnerJoin, true, true}, {LeftJoin, true, false}, {SemiJoin, true, false}, {AntiJoin, true, false},
		{RightJoin, false, false}, {FullJoin, false, false}, {NullAwareAntiJoin, false, false}, {MarkJoin, false, false},
	} {
		p, b := splittableSides(c.t)
		if p != c.probe || b != c.build {
			t.Errorf("%s: splittable probe=%v build=%v, want %v %v", c.t, p, b, c.probe, c.build)
		}
	}
}

func TestFindSkew(t *testing.T) {
	kg := []int64{10, 0, 12, 100, 9, 11, 0, 50}
	got, med := findSkew(kg, 4, 20)
	if !reflect.DeepEqual(got, []int{3, 7}) || med != 11 {
		t.Errorf("findSkew = %v, median %d; want [3 7], 11", got, med)
	}
	if got, _ := findSkew(kg, 4, 60); !reflect.DeepEqual(got, []int{3}) {
		t.Errorf("threshold 60: %v, want [3]", got)
	}
	if got, _ := findSkew(kg, 0, 0); got != nil {
		t.Errorf("factor 0 (off): %v", got)
	}
}

// Reading a key group in parts yields each of its rows exactly once.
func TestSlicesPartsCoverKeyGroupOnce(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ex := &Exchange{Kind: HashExchange, Child: &kvSource{}, Keys: []expr.Expr{kvKey()}, MaxParallelism: 4}
	buf := newExchangeBuffer(ex, 4, 2, NewMemoryBudget(0))
	defer buf.Release()
	id := int64(0)
	for p := 0; p < 2; p++ {
		for b := 0; b < 5; b++ {
			// 3 rows of key group 1, 2 of key group 2.
			ib, kb := array.NewInt64Builder(mem), array.NewInt64Builder(mem)
			for i := 0; i < 5; i++ {
				ib.Append(id)
				id++
				kb.Append(int64(1 + i/3))
			}
			ids, keys := ib.NewArray(), kb.NewArray()
			ib.Release()
			kb.Release()
			rb := array.NewRecordBatch(kvSchema, []arrow.Array{ids, keys}, 5)
			ids.Release()
			keys.Release()
			if err := buf.write(p, rb, []int32{1, 2}, []int32{3, 5}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n := buf.batchesWith(1); n != 10 {
		t.Fatalf("batchesWith(1) = %d, want 10", n)
	}
	read := func(sl []KeyGroupSlice) []int64 {
		r := buf.store.OpenSlices(sl)
		defer r.Close()
		var out []int64
		for {
			b, err := r.Next(context.Background())
			if err == io.EOF {
				return out
			}
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, b.Column(0).(*array.Int64).Int64Values()...)
			b.Release()
		}
	}
	seen := map[int64]int{}
	for part := 0; part < 3; part++ {
		for _, v := range read([]KeyGroupSlice{{Start: 1, End: 1, Producer: -1, Part: part, Parts: 3}}) {
			seen[v]++
		}
	}
	if len(seen) != 30 {
		t.Errorf("parts read %d distinct rows of key group 1, want 30", len(seen))
	}
	for v, n := range seen {
		if n != 1 || v%5 >= 3 {
			t.Errorf("row %d read %d times", v, n)
		}
	}
	if got := read([]KeyGroupSlice{{Start: 2, End: 2, Producer: 1, Parts: 1}}); len(got) != 10 || got[0] != 28 {
		t.Errorf("producer 1's key group 2: %v", got)
	}
	if got := read([]KeyGroupSlice{}); len(got) != 0 {
		t.Errorf("no slices read %v", got)
	}
}

func adaptiveCfg(threshold int64, broadcast int64) RunConfig {
	return RunConfig{Parallelism: 3, Adaptive: AdaptiveConfig{
		Enabled: true, BytesPerTask: 64 << 10, MaxParallelism: 32,
		SkewFactor: 4, SkewThreshold: threshold, BroadcastThreshold: broadcast,
	}}
}

// A hot key (40% of the probe rows) is split for inner, left, semi and
// anti joins, never for right and full joins, and every join gives the
// same pairs as without adaptive scheduling.
func TestSkewedJoinSplitKeepsAnswers(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, jt := range []JoinType{InnerJoin, LeftJoin, SemiJoin, AntiJoin, RightJoin, FullJoin} {
		probe := &kvSource{Rows: 60000, Keys: 5000, HotPct: 40}
		build := &kvSource{Rows: 4000, Keys: 8000, Offset: 1 << 20} // keys 0..3999, each once
		want, _ := joinRows(t, joinPlan(jt, probe, build), RunConfig{Parallelism: 3})
		got, g := joinRows(t, joinPlan(jt, probe, build), adaptiveCfg(1, 0))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: adaptive answer differs (%d vs %d distinct rows)", jt, len(got), len(want))
		}
		st := joinStage(g)
		canSplit, _ := splittableSides(jt)
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
	want, _ := joinRows(t, joinPlan(InnerJoin, probe, build), RunConfig{Parallelism: 3})
	got, g := joinRows(t, joinPlan(InnerJoin, probe, build), adaptiveCfg(1, 0))
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
	for _, jt := range []JoinType{InnerJoin, SemiJoin, LeftJoin, RightJoin} {
		probe := &kvSource{Rows: 60000, Keys: 5000}
		build := &kvSource{Rows: 500, Keys: 8000, Offset: 1 << 20}
		want, _ := joinRows(t, joinPlan(jt, probe, build), RunConfig{Parallelism: 3})
		got, g := joinRows(t, joinPlan(jt, probe, build), adaptiveCfg(1<<40, 1<<20))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: switched answer differs (%d vs %d distinct rows)", jt, len(got), len(want))
		}
		st := joinStage(g)
		switched := jt == InnerJoin || jt == SemiJoin
		if (st.Switch != "") != switched {
			t.Errorf("%s: switch %q, want switched=%v", jt, st.Switch, switched)
		}
		var probeStage *Stage
		for i, ex := range st.Inputs {
			if ex == st.Root.(*HashJoin).Probe {
				probeStage = st.Producers[i]
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
	_, g := joinRows(t, joinPlan(InnerJoin, probe, build), adaptiveCfg(1<<40, 1000))
	if st := joinStage(g); st.Switch != "" {
		t.Errorf("switched a build side above the threshold: %s", st.Switch)
	}
}

// findSwitches only offers joins whose probe stage feeds nothing else and
// whose build stage does not wait for the probe stage.
func TestFindSwitchesShape(t *testing.T) {
	probe, build := &kvSource{Rows: 10, Keys: 5}, &kvSource{Rows: 10, Keys: 5}
	g, err := BuildStages(joinPlan(InnerJoin, probe, build))
	if err != nil {
		t.Fatal(err)
	}
	sws := findSwitches(g)
	if len(sws) != 1 || sws[0].join != g.Result {
		t.Fatalf("switches %v", sws)
	}
	// The build stage waiting for the probe stage would deadlock.
	g2, _ := BuildStages(joinPlan(InnerJoin, probe, build))
	js := g2.Result
	var ps, bs *Stage
	for i, ex := range js.Inputs {
		if ex == js.Root.(*HashJoin).Probe {
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
	g3, _ := BuildStages(&HashAggregate{Mode: AggFinal, Child: joinPlan(InnerJoin, probe, build)})
	if _, ok := shuffledJoin(g3.Result); ok {
		t.Errorf("a final aggregate above the join was taken for a row-local stage")
	}
	// The join feeding the build side of another join in its stage: each
	// task's share would be taken for the whole build side.
	outer := &HashJoin{Type: InnerJoin, Build: joinPlan(InnerJoin, probe, build), Probe: &kvSource{Rows: 10, Keys: 5},
		BuildKeys: []expr.Expr{kvKey()}, ProbeKeys: []expr.Expr{kvKey()}}
	g4, _ := BuildStages(outer)
	if _, ok := shuffledJoin(g4.Result); ok {
		t.Errorf("a join on the build side of another join was taken for a row-local stage")
	}
}
