package pruning

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/connectors/hive"
	"github.com/fsql-dev/fsql/exec/expr"
)

func days(ps []*hive.Partition) string {
	var out []string
	for _, p := range ps {
		if p.Values[0] == nil {
			out = append(out, "NULL")
		} else {
			out = append(out, fmt.Sprint(p.Values[0]))
		}
	}
	return strings.Join(out, ",")
}

func call(t *testing.T, fn string, args ...expr.Expr) expr.Expr {
	t.Helper()
	e, err := expr.NewCall(fn, args...)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestStaticPartitions(t *testing.T) {
	tb := testTable(t)
	day := expr.NewColumn(colDay, arrow.PrimitiveTypes.Int32, "day")
	id := expr.NewColumn(colID, arrow.PrimitiveTypes.Int64, "id")
	lit := func(v int) expr.Expr { return expr.NewLiteral(int32(v), arrow.PrimitiveTypes.Int32) }
	for _, tc := range []struct {
		name      string
		conjuncts []expr.Expr
		want      string
	}{
		{"none", nil, "1,2,3,NULL"},
		{"range drops NULL", []expr.Expr{call(t, ">=", day, lit(2))}, "2,3"},
		{"between as two conjuncts", []expr.Expr{call(t, ">=", day, lit(2)), call(t, "<=", day, lit(2))}, "2"},
		{"or is null", []expr.Expr{call(t, "or", call(t, "=", day, lit(1)), call(t, "isnull", day))}, "1,NULL"},
		{"in", []expr.Expr{call(t, "in", day, lit(3), lit(1), lit(7))}, "1,3"},
		{"file column ignored", []expr.Expr{call(t, ">", id, expr.NewLiteral(int64(1000), arrow.PrimitiveTypes.Int64))}, "1,2,3,NULL"},
		{"mixed", []expr.Expr{call(t, "<", day, lit(3)), call(t, "=", call(t, "+", day, id), expr.NewLiteral(int64(2), arrow.PrimitiveTypes.Int64))}, "1,2"},
		{"false literal", []expr.Expr{expr.NewLiteral(false, arrow.FixedWidthTypes.Boolean)}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			got, err := StaticPartitions(tb, tc.conjuncts, mem)
			if err != nil {
				t.Fatal(err)
			}
			if days(got) != tc.want {
				t.Fatalf("kept %q, want %q", days(got), tc.want)
			}
		})
	}
}

// evenDay is a test-only Expr (day % 2 = 0, computed by hand) so the test
// does not depend on which functions NewCall knows.
type evenDay struct{}

func (evenDay) DataType() arrow.DataType { return arrow.FixedWidthTypes.Boolean }
func (evenDay) Children() []expr.Expr {
	return []expr.Expr{expr.NewColumn(colDay, arrow.PrimitiveTypes.Int32, "day")}
}
func (evenDay) String() string { return "even(day)" }
func (evenDay) Eval(ctx *expr.Context, b arrow.RecordBatch) (arrow.Array, error) {
	col := b.Column(colDay).(*array.Int32)
	bld := array.NewBooleanBuilder(ctx.Alloc)
	defer bld.Release()
	for i := 0; i < col.Len(); i++ {
		if col.IsNull(i) {
			bld.AppendNull()
		} else {
			bld.Append(col.Value(i)%2 == 0)
		}
	}
	return bld.NewArray(), nil
}

func TestStaticPartitionsCustomExpr(t *testing.T) {
	tb := testTable(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	got, err := StaticPartitions(tb, []expr.Expr{evenDay{}}, mem)
	if err != nil {
		t.Fatal(err)
	}
	if days(got) != "2" {
		t.Fatalf("kept %q, want 2", days(got))
	}
}
