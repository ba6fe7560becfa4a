package exec

import (
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/exec/expr"
)

// TestScanStaticFilter: the reader drops the rows a one-column conjunct
// that cannot fail rejects (so a Filter above gets fewer), keeps every
// row a conjunct holds for, and never evaluates a conjunct that may fail
// (cast('v1' AS SIGNED) would).
func TestScanStaticFilter(t *testing.T) {
	tb := scanTestTable(t) // table columns id, v, day; conjuncts are over them
	id := expr.NewColumn(0, arrow.PrimitiveTypes.Int64, "id")
	v := expr.NewColumn(1, arrow.BinaryTypes.String, "v")
	call := func(fn string, args ...expr.Expr) expr.Expr {
		e, err := expr.NewCall(fn, args...)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	lit := func(x any, dt arrow.DataType) expr.Expr { return expr.NewLiteral(x, dt) }
	mod := call("=", call("%", id, lit(int64(7), arrow.PrimitiveTypes.Int64)), lit(int64(3), arrow.PrimitiveTypes.Int64))
	like := call("like", v, lit("v1%", arrow.BinaryTypes.String))
	cast, err := expr.NewCast(v, arrow.PrimitiveTypes.Int64)
	if err != nil {
		t.Fatal(err)
	}
	mayFail := call("=", cast, lit(int64(3), arrow.PrimitiveTypes.Int64))
	s := &Scan{Table: tb, Columns: []int{2, 0, 1}, Filters: []expr.Expr{mod, like, mayFail}}
	stats := &OperatorStats{}
	got := map[int64]bool{}
	for _, ids := range runScan(t, s, 2, stats) {
		for _, x := range ids {
			got[x] = true
		}
	}
	want := 0
	for x := int64(0); x < 1800; x++ {
		keep := x%7 == 3 && x%5 != 0 && strconv.FormatInt(x, 10)[0] == '1' // v is "v<id>", NULL for every fifth id
		if keep {
			want++
		}
		if keep != got[x] {
			t.Fatalf("id %d: read %v, want %v", x, got[x], keep)
		}
	}
	if len(got) != want || want == 0 {
		t.Fatalf("read %d rows, want %d", len(got), want)
	}
	if r := stats.Scan.RowsRead.Load(); r != 1800 {
		t.Errorf("rows read %d, want 1800", r)
	}
}

// TestScanStaticFilterStops: a column whose conjuncts keep most of the
// rows they saw is no longer tested (every row passes to the Filter
// above, which tests it anyway).
func TestScanStaticFilterStops(t *testing.T) {
	tb := scanTestTable(t)
	id := expr.NewColumn(0, arrow.PrimitiveTypes.Int64, "id")
	keepMost, err := expr.NewCall(">", id, expr.NewLiteral(int64(10), arrow.PrimitiveTypes.Int64))
	if err != nil {
		t.Fatal(err)
	}
	st := &scanStream{s: &Scan{Table: tb, Columns: []int{0}, Filters: []expr.Expr{keepMost}}, tc: &TaskContext{Alloc: memory.DefaultAllocator}, op: &OperatorStats{}}
	f := newScanStaticFilter(st)
	if f == nil {
		t.Fatal("no filter")
	}
	b := array.NewInt64Builder(memory.DefaultAllocator)
	for i := range 8192 {
		b.Append(int64(i))
	}
	col := b.NewArray()
	defer col.Release()
	tested := 0
	for range 16 {
		f.Columns()
		sel, all, err := f.Select(0, col)
		if err != nil {
			t.Fatal(err)
		}
		if all {
			break
		}
		tested++
		if len(sel) != 8192-11 {
			t.Fatalf("kept %d rows, want %d", len(sel), 8192-11)
		}
	}
	if tested*8192 < stopAfter || tested > stopAfter/8192+1 {
		t.Errorf("tested %d batches of 8192 rows before stopping, want about %d", tested, stopAfter/8192)
	}
}
