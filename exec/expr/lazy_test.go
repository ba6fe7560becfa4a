package expr

import (
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func cast(t *testing.T, e Expr, to arrow.DataType) Expr {
	t.Helper()
	c, err := NewCast(e, to)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Errors of a CASE branch, a later WHEN, a COALESCE argument or an AND/OR
// operand count only for the rows that reach them.
func TestLazyBranchesFailOnlyForTheirRows(t *testing.T) {
	b := batchOf(t, []any{int64(1), int64(2), int64(3), nil}, []any{"7", "x", nil, "9"})
	k, s := col(b, 0), col(b, 1)
	num := cast(t, s, tInt64) // fails for "x"
	isX := call(t, "=", s, str("x"))
	cases := []struct {
		name string
		e    Expr
		want string
	}{
		{"case branch", call(t, "case", isX, i64(0), num), "7 0 NULL 9"},
		{"case else", call(t, "case", call(t, "<>", s, str("x")), num, i64(-1)), "7 -1 -1 9"},
		{"later when", call(t, "case", isX, i64(0), call(t, ">", num, i64(8)), i64(1), i64(2)), "2 0 2 1"},
		{"coalesce", call(t, "coalesce", call(t, "case", isX, i64(0), Null(tInt64)), num), "7 0 NULL 9"},
		{"and", call(t, "and", call(t, "<>", s, str("x")), call(t, ">", num, i64(8))), "false false NULL true"},
		{"or", call(t, "or", isX, call(t, ">", num, i64(8))), "false true NULL true"},
		// Operands that may fail but do not: evaluated over the whole batch.
		{"and that does not fail", call(t, "and", call(t, ">", call(t, "+", k, i64(1)), i64(2)), call(t, "<=", call(t, "+", k, i64(1)), i64(3))), "false true false NULL"},
		{"or that does not fail", call(t, "or", call(t, "<", call(t, "-", k, i64(1)), i64(1)), call(t, ">", call(t, "-", k, i64(1)), i64(1))), "true false true NULL"},
		{"and of three", call(t, "and", call(t, "isnotnull", k), call(t, "<>", s, str("x")), call(t, "=", num, i64(7))), "true false NULL false"},
	}
	for _, c := range cases {
		got, err := evalRows(t, c.e, b)
		if err != nil {
			t.Errorf("%s: %s: %v", c.name, c.e, err)
			continue
		}
		if g := strings.Join(got, " "); g != c.want {
			t.Errorf("%s: %s = %s, want %s", c.name, c.e, g, c.want)
		}
	}
	// A branch that rows do take still fails, naming the value.
	_, err := evalRows(t, call(t, "case", call(t, "isnotnull", s), num, i64(0)), b)
	if !errors.Is(err, ErrInvalidValue) || !strings.Contains(err.Error(), `"x"`) {
		t.Fatalf("want the error for \"x\", got %v", err)
	}
}

// Constant folding leaves a failing subtree for run time.
func TestConstantFoldIsLazy(t *testing.T) {
	bad := cast(t, str("abc"), tInt64)
	e := call(t, "case", call(t, "=", i64(1), i64(0)), bad, i64(5))
	f, err := ConstantFold(e, nil)
	if err != nil {
		t.Fatal(err)
	}
	if l, ok := f.(*Literal); !ok || l.Value != int64(5) {
		t.Fatalf("folded to %s, want 5", f)
	}
	f, err = ConstantFold(call(t, "+", bad, i64(1)), nil)
	if err != nil {
		t.Fatalf("folding must not fail: %v", err)
	}
	if _, ok := f.(*Literal); ok {
		t.Fatalf("a failing expression was folded to %s", f)
	}
	if _, err := evalRows(t, f, oneRow); !errors.Is(err, ErrInvalidValue) {
		t.Fatalf("run time: want ErrInvalidValue, got %v", err)
	}
	// A literal that does not convert binds to a run-time CAST.
	in, err := NewCall("in", i64(1), str("abc"), i64(5))
	if err != nil {
		t.Fatalf("binding must not fail: %v", err)
	}
	if _, err := evalRows(t, in, oneRow); !errors.Is(err, ErrInvalidValue) {
		t.Fatalf("1 IN ('abc', 5): want ErrInvalidValue, got %v", err)
	}
}

func TestCanFail(t *testing.T) {
	b := batchOf(t, []any{int64(1)}, []any{"a"}, []any{1.5})
	k, s, f := col(b, 0), col(b, 1), col(b, 2)
	for _, c := range []struct {
		e    Expr
		want bool
	}{
		{k, false},
		{call(t, "=", k, i64(1)), false},
		{call(t, "+", f, f64(1)), false},
		{call(t, "+", k, i64(1)), true}, // BIGINT overflow
		{cast(t, s, tInt64), true},
		{cast(t, k, tFloat64), false},
		{cast(t, k, tString), false},
		{cast(t, k, decType(19, 0)), false},
		{cast(t, k, decType(5, 0)), true},
		{call(t, "upper", s), false},
		{call(t, "case", call(t, "=", k, i64(1)), cast(t, s, tInt64), i64(0)), true},
	} {
		if got := canFail(c.e); got != c.want {
			t.Errorf("canFail(%s) = %v, want %v", c.e, got, c.want)
		}
	}
}

// Lazy evaluation over many rows, with every branch taken by some rows,
// leaks nothing and keeps every row's value.
func TestLazyCaseManyRows(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	const n = 5000
	ib := array.NewInt64Builder(mem)
	sb := array.NewStringBuilder(mem)
	for i := 0; i < n; i++ {
		ib.Append(int64(i))
		if i%3 == 0 {
			sb.Append("bad")
		} else {
			sb.Append(" 10 ")
		}
	}
	ia, sa := ib.NewArray(), sb.NewArray()
	ib.Release()
	sb.Release()
	sc := arrow.NewSchema([]arrow.Field{{Name: "i", Type: tInt64, Nullable: true}, {Name: "s", Type: tString, Nullable: true}}, nil)
	rec := array.NewRecordBatch(sc, []arrow.Array{ia, sa}, n)
	ia.Release()
	sa.Release()
	defer rec.Release()
	i, s := NewColumn(0, tInt64, "i"), NewColumn(1, tString, "s")
	three := call(t, "%", i, i64(3))
	e := call(t, "case", call(t, "=", three, i64(0)), call(t, "neg", i), call(t, "+", cast(t, s, tInt64), i))
	out, err := e.Eval(&Context{Alloc: mem}, rec)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	v := out.(*array.Int64)
	for r := 0; r < n; r++ {
		want := int64(r) + 10
		if r%3 == 0 {
			want = -int64(r)
		}
		if v.Value(r) != want {
			t.Fatalf("row %d: %d, want %d", r, v.Value(r), want)
		}
	}
}
