package exec

import (
	"context"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"io"

	"github.com/fsql-dev/fsql/exec/expr"
	"testing"
)

func TestFilterProjectLimitUnion(t *testing.T) {
	s := opSchema(fld("a", tInt64), fld("b", tInt64))
	in := src(t, s, []any{1, 2}, []any{3, 1}, []any{nil, 1}, []any{5, 9}, []any{7, 7})
	f := &Filter{Child: in, Cond: cmpExpr(0, 1, "<")}
	wantRows(t, runRows(t, f), "1|2", "5|9")

	p := &Project{Child: in, Exprs: []expr.Expr{col(1, tInt64), cmpExpr(0, 1, ">")}, Names: []string{"b", "gt"}}
	wantRows(t, runRows(t, p), "2|false", "1|true", "1|NULL", "9|false", "7|false")
	if p.Schema().Field(1).Name != "gt" {
		t.Fatal(p.Schema())
	}

	wantRows(t, runRows(t, &Limit{Child: in, N: 2, Offset: 1}), "3|1", "NULL|1")
	wantRows(t, runRows(t, &Limit{Child: in, N: 0}))
	wantRows(t, runRows(t, &Limit{Child: in, N: 10, Offset: 4}), "7|7")

	u := &UnionAll{Inputs: []Node{&Limit{Child: in, N: 1}, f}}
	wantRows(t, runRows(t, u), "1|2", "1|2", "5|9")
}

func TestFilterPassesFullBatchesUntouched(t *testing.T) {
	s := opSchema(fld("a", tInt64))
	in := src(t, s, []any{1}, []any{2})
	wantRows(t, runRows(t, &Filter{Child: in, Cond: litExpr(tBool, true)}), "1", "2")
	wantRows(t, runRows(t, &Filter{Child: in, Cond: litExpr(tBool, nil)}))
}

func TestValuesOnlyTaskZero(t *testing.T) {
	v := &Values{Rows: [][]expr.Expr{{litExpr(tInt64, 1), litExpr(tStr, "x")}, {litExpr(tInt64, nil), litExpr(tStr, "y")}},
		Names: []string{"a", "b"}, Types: []arrow.DataType{tInt64, tStr}}
	wantRows(t, runRows(t, v), "1|x", "NULL|y")
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer alloc.AssertSize(t, 0)
	tc := newTC(alloc)
	tc.Task = 1
	rows, err := runWith(tc, v)
	if err != nil || len(rows) != 0 {
		t.Fatal(rows, err)
	}
}

// TestOperatorsWithRealExpressions runs Filter, Project and Values over
// the expression package's own calls and literals.
func TestOperatorsWithRealExpressions(t *testing.T) {
	s := opSchema(fld("a", tInt64), fld("b", tStr))
	in := src(t, s, []any{1, "x"}, []any{5, "y"}, []any{nil, "z"}, []any{3, "w"})
	cond, err := expr.NewCall(">", col(0, tInt64), expr.NewLiteral(2, tInt64))
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, runRows(t, &Filter{Child: in, Cond: cond}), "5|y", "3|w")
	plus, err := expr.NewCall("+", col(0, tInt64), expr.NewLiteral(1, tInt64))
	if err != nil {
		t.Fatal(err)
	}
	p := &Project{Child: in, Exprs: []expr.Expr{plus}, Names: []string{"a1"}}
	got := runRows(t, p)
	if len(got) != 4 || got[2] != "NULL" {
		t.Fatalf("project: %q", got)
	}
	v := &Values{Rows: [][]expr.Expr{{expr.NewLiteral(7, tInt64), expr.NewLiteral("s", tStr)}, {expr.Null(tInt64), expr.NewLiteral("t", tStr)}},
		Types: []arrow.DataType{tInt64, tStr}}
	wantRows(t, runRows(t, v), "7|s", "NULL|t")
}

// closeSpy records whether its stream was closed.
type closeSpy struct {
	Node
	closed *bool
}

func (c closeSpy) Open(tc *TaskContext, in []Stream) (Stream, error) {
	s, err := c.Node.Open(tc, in)
	return spyStream{s, c.closed}, err
}

type spyStream struct {
	Stream
	closed *bool
}

func (s spyStream) Close() { *s.closed = true; s.Stream.Close() }

func TestLimitClosesInputOnceSatisfied(t *testing.T) {
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer alloc.AssertSize(t, 0)
	var closed bool
	s := opSchema(fld("a", tInt64))
	in := closeSpy{Node: src(t, s, []any{1}, []any{2}, []any{3}, []any{4}, []any{5}), closed: &closed}
	st, err := openTree(newTC(alloc), &Limit{Child: in, N: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rows := 0
	for {
		b, err := st.Next(context.Background())
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		rows += int(b.NumRows())
		b.Release()
	}
	if rows != 3 || !closed {
		t.Fatalf("rows %d, input closed %v", rows, closed)
	}
}
