package exec

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/spill"
)

// bigWindowSchema: id (unique), p (partition: 0 for most rows), o (order
// key with ties and NULLs), v (value with NULLs), s (string).
var bigWindowSchema = opSchema(fld("id", tInt64), fld("p", tInt64), fld("o", tInt64), fld("v", tInt64), fld("s", tStr))

func bigWindowRows(n int, seed int64) [][]any {
	r := rand.New(rand.NewSource(seed))
	rows := make([][]any, n)
	for i := range rows {
		p := 0
		if r.Intn(10) == 0 {
			p = 1 + r.Intn(3)
		}
		var o, v, s any = r.Intn(n / 8), r.Intn(200) - 50, fmt.Sprintf("s%05d", r.Intn(5000))
		if r.Intn(50) == 0 {
			o = nil
		}
		if r.Intn(12) == 0 {
			v = nil
		}
		if r.Intn(20) == 0 {
			s = nil
		}
		rows[i] = []any{i, p, o, v, s}
	}
	// A long run of ties: one peer group spanning many records.
	for i := n / 3; i < n/3+n/5; i++ {
		rows[i][1], rows[i][2] = 0, n
	}
	return rows
}

// bigWindowFuncs is every window function fsql has, over column v (3),
// s (4) and none.
func bigWindowFuncs() []WindowFunc {
	v, s := col(3, tInt64), col(4, tStr)
	return []WindowFunc{
		{Fn: "row_number", Type: tInt64, Name: "rn"},
		{Fn: "rank", Type: tInt64, Name: "rk"},
		{Fn: "dense_rank", Type: tInt64, Name: "dr"},
		{Fn: "percent_rank", Type: tF64, Name: "pr"},
		{Fn: "cume_dist", Type: tF64, Name: "cd"},
		{Fn: "ntile", N: 7, Type: tInt64, Name: "nt"},
		{Fn: "lag", Arg: v, N: 3, Default: expr.NewLiteral(int64(-1), tInt64), Type: tInt64, Name: "lg"},
		{Fn: "lead", Arg: s, N: 150, Type: tStr, Name: "ld"},
		{Fn: "first_value", Arg: v, Type: tInt64, Name: "fv"},
		{Fn: "last_value", Arg: s, Type: tStr, Name: "lv"},
		{Fn: "nth_value", Arg: v, N: 3, Type: tInt64, Name: "nv"},
		{Fn: "sum", Arg: v, Type: tDec38_0, Name: "sm"},
		{Fn: "avg", Arg: v, Type: tDec38_4, Name: "av"},
		{Fn: "min", Arg: s, Type: tStr, Name: "mn"},
		{Fn: "max", Arg: v, Type: tInt64, Name: "mx"},
		{Fn: "count", Arg: v, Type: tInt64, Name: "ct"},
		{Fn: "count_star", Type: tInt64, Name: "cs"},
		{Fn: "stddev_samp", Arg: v, Type: tF64, Name: "sd"},
		{Fn: "var_pop", Arg: v, Type: tF64, Name: "vp"},
		{Fn: "bit_and", Arg: v, Type: tU64, Name: "ba"},
		{Fn: "bit_or", Arg: v, Type: tU64, Name: "bo"},
		{Fn: "bit_xor", Arg: v, Type: tU64, Name: "bx"},
	}
}

// frameFuncs are the functions that read the frame.
func frameFuncs() []WindowFunc {
	var out []WindowFunc
	for _, f := range bigWindowFuncs() {
		if windowFuncKinds[f.Fn] && f.Fn != "var_pop" && f.Fn != "bit_and" && f.Fn != "bit_xor" {
			out = append(out, f)
		}
	}
	return out
}

// TestWindowBigPartition computes a window whose partition (about 90% of
// 6,000 rows) is several times the window's share, for every function
// (all of them under the default frame and without ORDER BY, those that
// read the frame under every frame kind), and compares each row with the in-memory answer
// (floating-point results to 1e-6 of the rendered value: the tree folds
// in another order).
func TestWindowBigPartition(t *testing.T) {
	if testing.Short() {
		t.Skip("many spilled windows")
	}
	in := &opSource{schema: bigWindowSchema, rows: bigWindowRows(6000, 11), per: 1000, t: t}
	up, uf, cr := FrameBound{Kind: UnboundedPreceding}, FrameBound{Kind: UnboundedFollowing}, FrameBound{Kind: CurrentRow}
	pre := func(n int64) FrameBound { return FrameBound{Kind: Preceding, Rows: n} }
	fol := func(n int64) FrameBound { return FrameBound{Kind: Following, Rows: n} }
	// Running, whole-partition, sliding (narrow and wider than a
	// record), suffix and empty-at-the-edges frames, in both units (RANGE
	// offsets count order-key values, about 8 rows each).
	var frames []WindowFrame
	for _, unit := range []FrameUnit{FrameRows, FrameRange} {
		for _, se := range [][2]FrameBound{{up, cr}, {up, uf}, {pre(3), fol(1)}, {pre(300), pre(3)}, {cr, fol(200)},
			{cr, uf}, {fol(1), uf}, {up, fol(20)}, {cr, cr}} {
			frames = append(frames, WindowFrame{Unit: unit, Start: se[0], End: se[1]})
		}
	}
	frames = append(frames, WindowFrame{}) // the default: RANGE UNBOUNDED PRECEDING .. CURRENT ROW
	for _, desc := range []bool{false, true} {
		for _, fr := range frames {
			if desc && fr.Unit == FrameRows {
				continue // the direction matters to RANGE offsets
			}
			funcs := frameFuncs()
			if fr == (WindowFrame{}) {
				funcs = bigWindowFuncs()
			}
			order := []SortKey{{Expr: col(2, tInt64), Desc: desc, NullsFirst: !desc}}
			if fr.Unit == FrameRows && fr != (WindowFrame{}) {
				order = append(order, SortKey{Expr: col(0, tInt64)}) // a total order
			} else {
				fr.Start, fr.End = rangeOffset(t, fr.Start, desc), rangeOffset(t, fr.End, desc)
			}
			w := &Window{Child: in, PartitionBy: []expr.Expr{col(1, tInt64)}, OrderBy: order, Frame: fr, Funcs: funcs}
			checkBigWindow(t, w, 384<<10)
		}
	}
	// Without ORDER BY every row is a peer; without PARTITION BY there is
	// one partition.
	checkBigWindow(t, &Window{Child: in, PartitionBy: []expr.Expr{col(1, tInt64)}, Funcs: bigWindowFuncs()}, 384<<10)
	checkBigWindow(t, &Window{Child: in, OrderBy: []SortKey{{Expr: col(4, tStr)}, {Expr: col(0, tInt64)}},
		Frame: WindowFrame{Unit: FrameRows, Start: FrameBound{Kind: Preceding, Rows: 5}, End: FrameBound{Kind: Following, Rows: 5}},
		Funcs: bigWindowFuncs()}, 384<<10)
}

// TestWindowBigPartitionStreamed: a window of only row_number, rank and
// dense_rank computes a partition larger than its share as the merge
// (or a presorted input) hands it out, writing no file of the
// partition's own, with the in-memory answer: under every order
// (ascending, descending, with NULLs and a long run of ties, none), with
// several partitions and with one.
func TestWindowBigPartitionStreamed(t *testing.T) {
	in := &opSource{schema: bigWindowSchema, rows: bigWindowRows(40000, 13), per: 1000, t: t}
	funcs := []WindowFunc{
		{Fn: "rank", Type: tInt64, Name: "rk"},
		{Fn: "row_number", Type: tInt64, Name: "rn"},
		{Fn: "dense_rank", Type: tInt64, Name: "dr"},
	}
	part := []expr.Expr{col(1, tInt64)}
	orders := [][]SortKey{
		{{Expr: col(2, tInt64), NullsFirst: true}},
		{{Expr: col(2, tInt64), Desc: true}},
		{{Expr: col(4, tStr)}, {Expr: col(3, tInt64), Desc: true}},
		nil,
	}
	for _, order := range orders {
		for _, by := range [][]expr.Expr{part, nil} {
			sorting := &Window{Child: in, PartitionBy: by, OrderBy: order, Funcs: funcs}
			keys := []SortKey{}
			for _, p := range by {
				keys = append(keys, SortKey{Expr: p, NullsFirst: true})
			}
			keys = append(keys, order...)
			pre := &Window{Child: &Sort{Child: in, Keys: keys}, PartitionBy: by, OrderBy: order, Funcs: funcs, Presorted: true}
			want := runRows(t, sorting)
			for _, w := range []*Window{sorting, pre} {
				bigPartitionsSpilled.Store(0)
				bigPartitionsStreamed.Store(0)
				got, _ := spillRun(t, w, 384<<10)
				if bigPartitionsStreamed.Load() == 0 || bigPartitionsSpilled.Load() != 0 {
					t.Fatalf("%s under 384 KiB: %d partitions streamed, %d written to a file of their own", w, bigPartitionsStreamed.Load(), bigPartitionsSpilled.Load())
				}
				if !slices.Equal(got, want) {
					t.Fatalf("%s under 384 KiB: rows differ from the in-memory ones", w)
				}
			}
		}
	}
}

// checkBigWindow runs w in memory and under limit, where it must write
// a partition to a file of its own.
func checkBigWindow(t *testing.T, w *Window, limit int64) {
	t.Helper()
	want := runRows(t, w)
	bigPartitionsSpilled.Store(0)
	got, _ := spillRun(t, w, limit)
	if bigPartitionsSpilled.Load() == 0 {
		t.Fatalf("%s under %d bytes: no partition went to a file of its own", w, limit)
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d rows, in memory %d", w, len(got), len(want))
	}
	for i := range want {
		if !sameRow(got[i], want[i]) {
			t.Fatalf("%s row %d:\n got: %s\nwant: %s", w, i, got[i], want[i])
		}
	}
}

// sameRow compares rendered rows, floating-point fields to 1e-6.
func sameRow(a, b string) bool {
	if a == b {
		return true
	}
	fa, fb := strings.Split(a, "|"), strings.Split(b, "|")
	if len(fa) != len(fb) {
		return false
	}
	for i := range fa {
		if fa[i] == fb[i] {
			continue
		}
		x, err1 := strconv.ParseFloat(fa[i], 64)
		y, err2 := strconv.ParseFloat(fb[i], 64)
		if err1 != nil || err2 != nil || !strings.ContainsAny(fa[i]+fb[i], ".e") {
			return false
		}
		if math.Abs(x-y) > 1e-6*math.Max(1, math.Abs(y)) {
			return false
		}
	}
	return true
}

// A window cancelled while it hands out a partition computed from its
// own file removes the file itself (before the run's manager closes) and
// leaks no buffer or reservation.
func TestWindowBigPartitionCancel(t *testing.T) {
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer alloc.AssertSize(t, 0)
	m := spill.NewManager(spill.Config{Dirs: []string{t.TempDir()}})
	defer m.Close()
	tc := &TaskContext{Alloc: alloc, Memory: NewMemoryBudget(256 << 10), Parallelism: 1, Spill: m}
	in := &opSource{schema: sortSchema, rows: sortRows(30000, 5), per: 1000, t: t}
	w := &Window{Child: in, OrderBy: []SortKey{{Expr: col(3, tF64)}},
		Funcs: []WindowFunc{{Fn: "sum", Arg: col(0, tInt64), Type: tDec38_0, Name: "s"}}}
	bigPartitionsSpilled.Store(0)
	s, err := openTree(tc, w)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	for i := 0; i < 3; i++ {
		b, err := s.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		b.Release()
	}
	if bigPartitionsSpilled.Load() != 1 {
		t.Fatal("the partition was not computed from a file of its own")
	}
	cancel()
	if _, err := s.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("want cancellation, got %v", err)
	}
	s.Close()
	for _, f := range m.Folders() {
		ents, _ := os.ReadDir(f)
		for _, e := range ents {
			if e.Name() != "owner.lock" {
				t.Fatalf("left %s behind", e.Name())
			}
		}
	}
	if u := tc.Memory.Used(); u != 0 {
		t.Fatalf("%d bytes still reserved", u)
	}
}
