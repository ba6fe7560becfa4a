package exec

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"math/rand"
	"os"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/spill"
)

// spillRun runs n in one task under a budget of limit bytes with a spill
// manager, checking that no buffer leaks and no file is left behind, and
// returns the rows and the root's spill counters.
func spillRun(t *testing.T, n Node, limit int64) ([]string, *SpillStats) {
	t.Helper()
	return spillRunWith(t, n, limit, nil)
}

// spillRunWith is spillRun with the task context's key groups (nil: none).
func spillRunWith(t *testing.T, n Node, limit int64, kg *KeyGroups) ([]string, *SpillStats) {
	t.Helper()
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer alloc.AssertSize(t, 0)
	dir := t.TempDir()
	m := spill.NewManager(spill.Config{Dirs: []string{dir}})
	op := &OperatorStats{}
	tc := &TaskContext{Alloc: alloc, Memory: NewMemoryBudget(limit), Parallelism: 1, Spill: m, Op: op, KeyGroups: kg}
	rows, err := runWith(tc, n)
	if err != nil {
		t.Fatalf("%s under %d bytes: %v", n, limit, err)
	}
	if u := tc.Memory.Used(); u != 0 {
		t.Fatalf("%s: %d bytes still reserved", n, u)
	}
	if p := tc.Memory.Peak(); p > limit {
		t.Fatalf("%s: peak %d past the budget %d", n, p, limit)
	}
	// Operators remove their files as they finish with them.
	for _, f := range m.Folders() {
		ents, _ := os.ReadDir(f)
		for _, e := range ents {
			if e.Name() != "owner.lock" {
				t.Fatalf("%s left %s behind", n, e.Name())
			}
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	return rows, &op.Spill
}

func sortRows(n int, seed int64) [][]any {
	r := rand.New(rand.NewSource(seed))
	var rows [][]any
	for i := 0; i < n; i++ {
		var a any = r.Intn(300)
		if r.Intn(40) == 0 {
			a = nil
		}
		var s any = fmt.Sprintf("s%04d", r.Intn(2000))
		if r.Intn(30) == 0 {
			s = nil
		}
		rows = append(rows, []any{a, s, fmt.Sprintf("%d.%02d", r.Intn(100), r.Intn(100)), float64(i)})
	}
	return rows
}

// An external sort (several runs merged, in rounds under a tiny budget)
// returns exactly the in-memory sort's rows, ties in input order.
func TestSortSpills(t *testing.T) {
	in := &opSource{schema: sortSchema, rows: sortRows(30000, 3), per: 1000, t: t}
	for _, keys := range [][]SortKey{
		{{Expr: col(0, tInt64), NullsFirst: true}},
		{{Expr: col(1, tStr), Desc: true}, {Expr: col(2, tDec152), NullsFirst: true}},
	} {
		n := &Sort{Child: in, Keys: keys}
		want := runRows(t, n)
		for _, limit := range []int64{1 << 20, 256 << 10} {
			got, st := spillRun(t, n, limit)
			if !slices.Equal(got, want) {
				t.Fatalf("%s under %d bytes: rows differ from the in-memory sort", n, limit)
			}
			if st.Files.Load() < 2 || st.Bytes.Load() == 0 {
				t.Fatalf("%s under %d bytes: spilled %d files, %d bytes", n, limit, st.Files.Load(), st.Bytes.Load())
			}
			t.Logf("%s under %d: %d files, %d bytes, %d passes", n, limit, st.Files.Load(), st.Bytes.Load(), st.Passes.Load())
		}
	}
}

// Many runs under a tiny share (a fan-in of a few runs) merge in passes
// over consecutive groups: each row is written about log(runs) times,
// not once per merge round, and the rows keep the in-memory order.
func TestSortMergesInPasses(t *testing.T) {
	in := &opSource{schema: sortSchema, rows: sortRows(60000, 5), per: 500, t: t}
	n := &Sort{Child: in, Keys: []SortKey{{Expr: col(1, tStr)}, {Expr: col(0, tInt64), NullsFirst: true}}}
	want := runRows(t, n)
	got, st := spillRun(t, n, 96<<10)
	if !slices.Equal(got, want) {
		t.Fatal("rows differ from the in-memory sort")
	}
	files, passes, bytes := st.Files.Load(), st.Passes.Load(), st.Bytes.Load()
	t.Logf("%d files, %d bytes, %d passes", files, bytes, passes)
	// A cascade merging the merged run again with the next ones made a
	// pass per round: as many as the runs.
	if files < 40 || passes > int64(bits.Len(uint(files))) {
		t.Fatalf("%d files in %d passes", files, passes)
	}
}

func TestTopNSpills(t *testing.T) {
	in := &opSource{schema: sortSchema, rows: sortRows(30000, 4), per: 1000, t: t}
	keys := []SortKey{{Expr: col(0, tInt64), Desc: true}, {Expr: col(3, tF64)}}
	for _, c := range []struct{ n, off int64 }{{12000, 50}, {20000, 9000}} {
		n := &TopN{Child: in, Keys: keys, N: c.n, Offset: c.off}
		want := runRows(t, &Limit{Child: &Sort{Child: in, Keys: keys}, N: c.n, Offset: c.off})
		got, st := spillRun(t, n, 256<<10)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: %d rows differ from sort+limit's %d", n, len(got), len(want))
		}
		if st.Files.Load() == 0 {
			t.Fatalf("%s did not spill", n)
		}
	}
}

// A window over a spilled sort computes partition by partition of the
// merged runs and gives the in-memory answer.
func TestWindowSpills(t *testing.T) {
	in := &opSource{schema: sortSchema, rows: sortRows(80000, 5), per: 1000, t: t}
	w := &Window{Child: in,
		PartitionBy: []expr.Expr{col(0, tInt64)},
		OrderBy:     []SortKey{{Expr: col(3, tF64)}},
		Funcs: []WindowFunc{
			{Fn: "rank", Type: tInt64, Name: "r"},
			{Fn: "sum", Arg: col(3, tF64), Type: tF64, Name: "s"},
			{Fn: "lag", Arg: col(1, tStr), N: 1, Type: tStr, Name: "l"},
			{Fn: "count_star", Type: tInt64, Name: "c"},
		},
		Frame: WindowFrame{Unit: FrameRows, Start: FrameBound{Kind: Preceding, Rows: 2}, End: FrameBound{Kind: Following, Rows: 1}},
	}
	want := runRows(t, w)
	got, st := spillRun(t, w, 4<<20)
	if !slices.Equal(got, want) {
		t.Fatalf("window rows differ from the in-memory ones")
	}
	if st.Files.Load() == 0 {
		t.Fatal("window did not spill")
	}
	// One partition (no PARTITION BY) larger than the share: a rank is
	// computed as the merge hands the rows out, a sum from a file of the
	// partition's own.
	small := &opSource{schema: sortSchema, rows: sortRows(30000, 5), per: 1000, t: t}
	for _, f := range []WindowFunc{{Fn: "rank", Type: tInt64, Name: "r"}, {Fn: "sum", Arg: col(0, tInt64), Type: tDec38_0, Name: "s"}} {
		one := &Window{Child: small, OrderBy: []SortKey{{Expr: col(3, tF64)}}, Funcs: []WindowFunc{f}}
		want = runRows(t, one)
		bigPartitionsSpilled.Store(0)
		bigPartitionsStreamed.Store(0)
		if got, _ := spillRun(t, one, 256<<10); !slices.Equal(got, want) {
			t.Fatalf("one huge partition, %s: rows differ from the in-memory ones", f.Fn)
		}
		spilled, streamed := bigPartitionsSpilled.Load(), bigPartitionsStreamed.Load()
		if f.Fn == "rank" && (spilled != 0 || streamed != 1) || f.Fn == "sum" && (spilled != 1 || streamed != 0) {
			t.Fatalf("one huge partition, %s: %d partitions spilled whole, %d streamed", f.Fn, spilled, streamed)
		}
	}
}

// Cancelling a spilling sort mid-way leaves no buffer and, once the run's
// manager closes, no file.
func TestSortSpillCancel(t *testing.T) {
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer alloc.AssertSize(t, 0)
	dir := t.TempDir()
	m := spill.NewManager(spill.Config{Dirs: []string{dir}})
	tc := &TaskContext{Alloc: alloc, Memory: NewMemoryBudget(256 << 10), Parallelism: 1, Spill: m}
	in := &opSource{schema: sortSchema, rows: sortRows(30000, 6), per: 1000, t: t}
	ctx, cancel := context.WithCancel(context.Background())
	n := &Sort{Child: &cancelAfter{Node: in, after: 20, cancel: cancel}, Keys: []SortKey{{Expr: col(1, tStr)}}}
	s, err := openTree(tc, n)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Next(ctx)
	s.Close()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want cancellation, got %v", err)
	}
	if st := m.Stats(); st.Files == 0 {
		t.Fatal("the sort had not spilled before the cancellation")
	}
	m.Close()
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("left behind: %v", ents)
	}
}

// cancelAfter cancels the query after its child produced some batches.
type cancelAfter struct {
	Node
	after  int
	cancel context.CancelFunc
}

func (c *cancelAfter) Children() []Node { return []Node{c.Node} }
func (c *cancelAfter) Open(tc *TaskContext, in []Stream) (Stream, error) {
	return &cancelStream{in: in[0], after: c.after, cancel: c.cancel}, nil
}

type cancelStream struct {
	in     Stream
	after  int
	cancel context.CancelFunc
}

func (s *cancelStream) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if s.after == 0 {
		s.cancel()
		return nil, ctx.Err()
	}
	s.after--
	return s.in.Next(ctx)
}

func (s *cancelStream) Close() { s.in.Close() }

func TestSpillRecordBytes(t *testing.T) {
	for _, c := range []struct{ share, want int64 }{
		{-1, spill.PartRecordBytes},        // undivided: the most
		{0, 0},                             // no share: every piece alone
		{40 << 10, 10 << 10},               // a quarter of the share
		{256 << 10, spill.PartRecordBytes}, // a quarter reaches the most
		{1 << 30, spill.PartRecordBytes},
	} {
		if got := spillRecordBytes(c.share); got != c.want {
			t.Errorf("spillRecordBytes(%d) = %d, want %d", c.share, got, c.want)
		}
	}
}

// TestNoShare: a reservation whose task quota over the task's open
// spillable reservations rounds to 0 bytes refuses with errNoShare, which
// is no signal to spill; a small share that is not 0 refuses as over its
// share, which is.
func TestNoShare(t *testing.T) {
	for _, c := range []struct {
		limit   int64
		slots   int
		open    int
		noShare bool
	}{
		{1, 2, 1, false}, // a quota of 1 byte (division stays on), 1 operator
		{1, 2, 2, true},
		{3, 2, 2, true},  // 1 byte over 2 operators
		{4, 2, 2, false}, // 1 byte each
		{100, 4, 30, true},
		{1 << 10, 2, 3, false},
	} {
		b := NewMemoryBudget(c.limit)
		b.SetSlots(c.slots)
		tc := &TaskContext{Memory: b, Pool: b.Task(), Spill: spill.NewManager(spill.Config{Dirs: []string{t.TempDir()}})}
		var rs []*Reservation
		for i := 0; i < c.open; i++ {
			rs = append(rs, tc.reservation(fmt.Sprintf("op%d", i), true))
		}
		err := rs[0].Grow(c.limit + 1)
		if err == nil {
			t.Fatalf("%+v: a growth past the budget was granted", c)
		}
		if IsNoShare(err) != c.noShare || tc.canSpill(err) == c.noShare {
			t.Errorf("%+v: %v (no share %v, spill %v)", c, err, IsNoShare(err), tc.canSpill(err))
		}
		if c.noShare && !errors.Is(err, ErrResourcesExhausted) {
			t.Errorf("%+v: %v is not resources exhausted", c, err)
		}
		for _, r := range rs {
			r.Free()
		}
	}
}
