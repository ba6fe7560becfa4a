package exec

import (
	"context"
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/exec/expr"
)

// probe: (pk int32, pv string); build: (bk int64, bv string)
var (
	probeSchema = opSchema(fld("pk", tInt32), fld("pv", tStr))
	buildSchema = opSchema(fld("bk", tInt32), fld("bv", tStr))
)

func probeRows(t *testing.T) *opSource {
	return src(t, probeSchema, []any{1, "p1"}, []any{2, "p2"}, []any{nil, "pn"}, []any{4, "p4"}, []any{2, "p2b"})
}

func buildRows(t *testing.T, rows ...[]any) *opSource {
	if rows == nil {
		rows = [][]any{{1, "b1"}, {2, "b2"}, {2, "b2x"}, {3, "b3"}, {nil, "bn"}}
	}
	return src(t, buildSchema, rows...)
}

func hj(t *testing.T, typ JoinType, build *opSource, residual expr.Expr) *HashJoin {
	return &HashJoin{Type: typ, Build: build, Probe: probeRows(t),
		BuildKeys: []expr.Expr{col(0, tInt32)}, ProbeKeys: []expr.Expr{col(0, tInt32)}, Residual: residual}
}

func TestHashJoinTypes(t *testing.T) {
	cases := []struct {
		typ  JoinType
		want []string
	}{
		{InnerJoin, []string{"1|p1|1|b1", "2|p2|2|b2", "2|p2|2|b2x", "2|p2b|2|b2", "2|p2b|2|b2x"}},
		{LeftJoin, []string{"1|p1|1|b1", "2|p2|2|b2", "2|p2|2|b2x", "2|p2b|2|b2", "2|p2b|2|b2x", "NULL|pn|NULL|NULL", "4|p4|NULL|NULL"}},
		{RightJoin, []string{"1|p1|1|b1", "2|p2|2|b2", "2|p2|2|b2x", "2|p2b|2|b2", "2|p2b|2|b2x", "NULL|NULL|3|b3", "NULL|NULL|NULL|bn"}},
		{FullJoin, []string{"1|p1|1|b1", "2|p2|2|b2", "2|p2|2|b2x", "2|p2b|2|b2", "2|p2b|2|b2x", "NULL|pn|NULL|NULL", "4|p4|NULL|NULL", "NULL|NULL|3|b3", "NULL|NULL|NULL|bn"}},
		{SemiJoin, []string{"1|p1", "2|p2", "2|p2b"}},
		{AntiJoin, []string{"NULL|pn", "4|p4"}},
		{NullAwareAntiJoin, nil}, // build has a NULL key
		{MarkJoin, []string{"1|p1|true", "2|p2|true", "NULL|pn|NULL", "4|p4|NULL", "2|p2b|true"}},
	}
	for _, c := range cases {
		t.Run(c.typ.String(), func(t *testing.T) {
			j := hj(t, c.typ, buildRows(t), nil)
			wantSet(t, runRows(t, j), c.want...)
		})
	}
}

func TestHashJoinNullAwareAndMarkWithoutBuildNulls(t *testing.T) {
	b := func() *opSource { return buildRows(t, []any{1, "b1"}, []any{3, "b3"}) }
	wantSet(t, runRows(t, hj(t, NullAwareAntiJoin, b(), nil)), "2|p2", "4|p4", "2|p2b")
	wantSet(t, runRows(t, hj(t, MarkJoin, b(), nil)), "1|p1|true", "2|p2|false", "NULL|pn|NULL", "4|p4|false", "2|p2b|false")
	// Empty build side: NOT IN () keeps every row, NULL keys included.
	empty := func() *opSource { return buildRows(t, [][]any{}...) }
	all := []string{"1|p1", "2|p2", "NULL|pn", "4|p4", "2|p2b"}
	wantSet(t, runRows(t, hj(t, NullAwareAntiJoin, empty(), nil)), all...)
	wantSet(t, runRows(t, hj(t, AntiJoin, empty(), nil)), all...)
	wantSet(t, runRows(t, hj(t, InnerJoin, empty(), nil)))
	wantSet(t, runRows(t, hj(t, LeftJoin, empty(), nil)), "1|p1|NULL|NULL", "2|p2|NULL|NULL", "NULL|pn|NULL|NULL", "4|p4|NULL|NULL", "2|p2b|NULL|NULL")
	wantSet(t, runRows(t, hj(t, MarkJoin, empty(), nil)), "1|p1|false", "2|p2|false", "NULL|pn|false", "4|p4|false", "2|p2b|false")
}

// strNE is a residual "pv <> bv with the first letter stripped": here
// simply "build value is not b2x" to exercise residual logic.
func notB2x() expr.Expr {
	return &fnExpr{typ: tBool, name: "bv <> 'b2x'", fn: func(alloc memory.Allocator, b arrow.RecordBatch) arrow.Array {
		rows := make([][]any, b.NumRows())
		c := b.Column(3)
		for i := range rows {
			if c.IsNull(i) {
				rows[i] = []any{nil}
			} else {
				rows[i] = []any{c.ValueStr(i) != "b2x" && c.ValueStr(i) != "b1"}
			}
		}
		r := opBatch(nil, alloc, opSchema(fld("m", tBool)), rows)
		defer r.Release()
		out := r.Column(0)
		out.Retain()
		return out
	}}
}

func TestHashJoinResidual(t *testing.T) {
	// Residual rejects b1 and b2x: probe 1 becomes unmatched.
	cases := []struct {
		typ  JoinType
		want []string
	}{
		{InnerJoin, []string{"2|p2|2|b2", "2|p2b|2|b2"}},
		{LeftJoin, []string{"2|p2|2|b2", "2|p2b|2|b2", "1|p1|NULL|NULL", "NULL|pn|NULL|NULL", "4|p4|NULL|NULL"}},
		{RightJoin, []string{"2|p2|2|b2", "2|p2b|2|b2", "NULL|NULL|1|b1", "NULL|NULL|2|b2x", "NULL|NULL|3|b3", "NULL|NULL|NULL|bn"}},
		{SemiJoin, []string{"2|p2", "2|p2b"}},
		{AntiJoin, []string{"1|p1", "NULL|pn", "4|p4"}},
	}
	for _, c := range cases {
		t.Run(c.typ.String(), func(t *testing.T) {
			wantSet(t, runRows(t, hj(t, c.typ, buildRows(t), notB2x())), c.want...)
		})
	}
}

func TestHashJoinMultiColumnMixedKeys(t *testing.T) {
	ps := opSchema(fld("a", tStr), fld("b", tDec152), fld("c", tDate))
	bs := opSchema(fld("x", tDate), fld("y", tStr), fld("z", tDec152))
	probe := src(t, ps, []any{"k", "1.50", 10}, []any{"k", "1.50", 11}, []any{"", "0.00", 10}, []any{nil, "1.50", 10}, []any{"k", "1.50", 10})
	build := src(t, bs, []any{10, "k", "1.50"}, []any{10, "", "0.00"}, []any{10, nil, "1.50"}, []any{11, "k", "1.5"})
	j := &HashJoin{Type: InnerJoin, Build: build, Probe: probe,
		ProbeKeys: []expr.Expr{col(0, tStr), col(1, tDec152), col(2, tDate)},
		BuildKeys: []expr.Expr{col(1, tStr), col(2, tDec152), col(0, tDate)}}
	wantSet(t, runRows(t, j),
		"k|1.50|1970-01-11|1970-01-11|k|1.50", "k|1.50|1970-01-12|1970-01-12|k|1.50",
		"|0.00|1970-01-11|1970-01-11||0.00", "k|1.50|1970-01-11|1970-01-11|k|1.50")
}

func TestHashJoinManyMatchesSplitIntoBatches(t *testing.T) {
	var brows, prows [][]any
	for i := 0; i < 3000; i++ {
		brows = append(brows, []any{i % 3, "b"})
	}
	for i := 0; i < 30; i++ {
		prows = append(prows, []any{i % 5, "p"})
	}
	j := &HashJoin{Type: LeftJoin, Build: &opSource{schema: buildSchema, rows: brows, per: 1000, t: t},
		Probe:     &opSource{schema: probeSchema, rows: prows, per: 7, t: t},
		BuildKeys: []expr.Expr{col(0, tInt32)}, ProbeKeys: []expr.Expr{col(0, tInt32)}}
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer alloc.AssertSize(t, 0)
	s, err := openTree(newTC(alloc), j)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	total := 0
	for {
		b, err := s.Next(context.Background())
		if err != nil {
			break
		}
		if b.NumRows() > BatchSize {
			t.Fatalf("batch of %d rows", b.NumRows())
		}
		total += int(b.NumRows())
		b.Release()
	}
	// 18 probe rows with keys 0..2 match 1000 rows each; 12 are unmatched.
	if total != 18*1000+12 {
		t.Fatalf("rows %d", total)
	}
}

func TestHashJoinEarlyCloseAndBudget(t *testing.T) {
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer alloc.AssertSize(t, 0)
	tc := newTC(alloc)
	rows, err := runWith(tc, &Limit{Child: hj(t, InnerJoin, buildRows(t), nil), N: 1})
	if err != nil || len(rows) != 1 {
		t.Fatal(rows, err)
	}
	if tc.Memory.Used() != 0 {
		t.Fatalf("budget held after close: %d", tc.Memory.Used())
	}
	// A new task: its operators' reservations come from the task's quota
	// of the budget it started with.
	tc = &TaskContext{Alloc: alloc, Memory: NewMemoryBudget(10), Parallelism: 1}
	_, err = runWith(tc, hj(t, InnerJoin, buildRows(t), nil))
	if !errors.Is(err, ErrResourcesExhausted) {
		t.Fatalf("want ErrResourcesExhausted, got %v", err)
	}
	if tc.Memory.Used() != 0 {
		t.Fatalf("budget held after failure: %d", tc.Memory.Used())
	}
}

// A string key goes through the join table: the empty string is a key
// like any other and never NULL, NULL keys match nothing, and a key
// with many rows on both sides gives every pair.
func TestHashJoinStringKeys(t *testing.T) {
	ps := opSchema(fld("pk", tStr), fld("pv", tInt32))
	bs := opSchema(fld("bk", tStr), fld("bv", tInt32))
	probe := func() *opSource {
		return src(t, ps, []any{"", 1}, []any{nil, 2}, []any{"a", 3}, []any{"a", 4}, []any{"zz", 5})
	}
	build := func() *opSource {
		return src(t, bs, []any{"a", 10}, []any{"", 20}, []any{nil, 30}, []any{"a", 40}, []any{"a", 50}, []any{"b", 60})
	}
	join := func(typ JoinType) *HashJoin {
		return &HashJoin{Type: typ, Build: build(), Probe: probe(),
			BuildKeys: []expr.Expr{col(0, tStr)}, ProbeKeys: []expr.Expr{col(0, tStr)}}
	}
	wantSet(t, runRows(t, join(InnerJoin)), "|1||20",
		"a|3|a|10", "a|3|a|40", "a|3|a|50", "a|4|a|10", "a|4|a|40", "a|4|a|50")
	wantSet(t, runRows(t, join(FullJoin)), "|1||20",
		"a|3|a|10", "a|3|a|40", "a|3|a|50", "a|4|a|10", "a|4|a|40", "a|4|a|50",
		"NULL|2|NULL|NULL", "zz|5|NULL|NULL", "NULL|NULL|NULL|30", "NULL|NULL|b|60")
	wantSet(t, runRows(t, join(AntiJoin)), "NULL|2", "zz|5")
	wantSet(t, runRows(t, join(MarkJoin)), "|1|true", "NULL|2|NULL", "a|3|true", "a|4|true", "zz|5|NULL")
}
