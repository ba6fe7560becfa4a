package expr

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func TestThreeValuedLogic(t *testing.T) {
	T, F, N := NewLiteral(true, tBool), NewLiteral(false, tBool), Null(tBool)
	vals := []Expr{T, F, N}
	names := []string{"true", "false", "NULL"}
	// Expected AND / OR results indexed [a][b] over (TRUE, FALSE, NULL).
	and := [3][3]string{{"true", "false", "NULL"}, {"false", "false", "false"}, {"NULL", "false", "NULL"}}
	or := [3][3]string{{"true", "true", "true"}, {"true", "false", "NULL"}, {"true", "NULL", "NULL"}}
	for i := range vals {
		for j := range vals {
			if got := eval1(t, call(t, "and", vals[i], vals[j])); got != and[i][j] {
				t.Errorf("%s AND %s = %s, want %s", names[i], names[j], got, and[i][j])
			}
			if got := eval1(t, call(t, "or", vals[i], vals[j])); got != or[i][j] {
				t.Errorf("%s OR %s = %s, want %s", names[i], names[j], got, or[i][j])
			}
		}
	}
	for i, want := range []string{"false", "true", "NULL"} {
		if got := eval1(t, call(t, "not", vals[i])); got != want {
			t.Errorf("NOT %s = %s", names[i], got)
		}
	}
	if got := eval1(t, call(t, "isnull", N)); got != "true" {
		t.Errorf("isnull(NULL) = %s", got)
	}
	if got := eval1(t, call(t, "isnotnull", N)); got != "false" {
		t.Errorf("isnotnull(NULL) = %s", got)
	}
}

func TestLogicColumns(t *testing.T) {
	// 20 rows so the byte-at-a-time paths and the tail both run.
	var a, b []any
	for i := 0; i < 20; i++ {
		var x, y any
		if i%3 != 2 {
			x = i%3 == 0
		}
		if i%5 != 4 {
			y = i%2 == 0
		}
		a, b = append(a, x), append(b, y)
	}
	batch := batchOf(t, a, b)
	got, err := evalRows(t, call(t, "and", col(batch, 0), col(batch, 1)), batch)
	if err != nil {
		t.Fatal(err)
	}
	got2, _ := evalRows(t, call(t, "or", col(batch, 0), col(batch, 1)), batch)
	for i := range a {
		want := eval1(t, call(t, "and", lit3(a[i]), lit3(b[i])))
		if got[i] != want {
			t.Errorf("row %d: %v AND %v = %s, want %s", i, a[i], b[i], got[i], want)
		}
		want = eval1(t, call(t, "or", lit3(a[i]), lit3(b[i])))
		if got2[i] != want {
			t.Errorf("row %d: %v OR %v = %s, want %s", i, a[i], b[i], got2[i], want)
		}
	}
}

func lit3(v any) Expr {
	if v == nil {
		return Null(tBool)
	}
	return NewLiteral(v, tBool)
}

func TestComparisons(t *testing.T) {
	for _, tc := range []struct {
		fn   string
		a, b Expr
		want string
	}{
		{"=", i64(1), dec("1.00", 3, 2), "true"},
		{"<", NewLiteral(int32(3), tInt32), i64(4), "true"},
		{">=", f64(2.5), dec("2.50", 3, 2), "true"},
		{"=", str("1.0"), i64(1), "true"},
		{"<", str("B"), str("a"), "true"},
		{"=", str("a "), str("a"), "false"},
		{"=", str("2000-01-02"), NewLiteral(arrowDate(2000, 1, 2), tDate), "true"},
		{"<>", i64(1), Null(tInt64), "NULL"},
		{"=", Null(tNull), i64(1), "NULL"},
		{"<=>", Null(tInt64), Null(tInt64), "true"},
		{"<=>", i64(1), Null(tInt64), "false"},
		{"<=>", i64(1), i64(1), "true"},
	} {
		e := call(t, tc.fn, tc.a, tc.b)
		if got := eval1(t, e); got != tc.want {
			t.Errorf("%s = %s, want %s", e, got, tc.want)
		}
	}
	var xs, ys []any
	for i := 0; i < 19; i++ {
		xs = append(xs, int64(i))
		ys = append(ys, int64(18-i))
	}
	xs[3] = nil
	b := batchOf(t, xs, ys)
	got, err := evalRows(t, call(t, "<", col(b, 0), col(b, 1)), b)
	if err != nil {
		t.Fatal(err)
	}
	want := "true,true,true,NULL,true,true,true,true,true,false,false,false,false,false,false,false,false,false,false"
	if strings.Join(got, ",") != want {
		t.Errorf("got %v", got)
	}
}

func TestInList(t *testing.T) {
	list := func(n int, withNull bool) []Expr {
		var out []Expr
		for i := 0; i < n; i++ {
			out = append(out, i64(int64(i*10)))
		}
		if withNull {
			out = append(out, Null(tInt64))
		}
		return out
	}
	for _, n := range []int{3, 20} { // scan and hash set
		b := batchOf(t, []any{int64(10), int64(11), nil, int64(0)})
		for _, withNull := range []bool{false, true} {
			args := append([]Expr{col(b, 0)}, list(n, withNull)...)
			got, err := evalRows(t, call(t, "in", args...), b)
			if err != nil {
				t.Fatal(err)
			}
			want := "true,false,NULL,true"
			if withNull {
				want = "true,NULL,NULL,true"
			}
			if strings.Join(got, ",") != want {
				t.Errorf("n=%d null=%v: got %v want %s", n, withNull, got, want)
			}
		}
	}
	// Mixed types: an INT probe against decimals and strings.
	b := batchOf(t, []any{int32(1), int32(2)})
	got, _ := evalRows(t, call(t, "in", col(b, 0), dec("1.0", 2, 1), dec("2.5", 2, 1)), b)
	if strings.Join(got, ",") != "true,false" {
		t.Errorf("decimal list: %v", got)
	}
	sb := batchOf(t, []any{"x", "y", nil})
	got, _ = evalRows(t, call(t, "in", col(sb, 0), str("y"), str("z")), sb)
	if strings.Join(got, ",") != "false,true,NULL" {
		t.Errorf("string list: %v", got)
	}
	// A list with a column binds to ORed equalities.
	b2 := batchOf(t, []any{int64(1), int64(2)}, []any{int64(2), nil})
	got, _ = evalRows(t, call(t, "in", col(b2, 0), col(b2, 1), i64(1)), b2)
	if strings.Join(got, ",") != "true,NULL" {
		t.Errorf("column list: %v", got)
	}
}

func TestLike(t *testing.T) {
	for _, tc := range []struct {
		s, p string
		want bool
	}{
		{"abc", "abc", true},
		{"abc", "ab", false},
		{"abc", "a%", true},
		{"abc", "%c", true},
		{"abc", "%b%", true},
		{"abc", "%d%", false},
		{"abc", "a_c", true},
		{"abc", "a_", false},
		{"abc", "%", true},
		{"", "%", true},
		{"", "_", false},
		{"a%c", `a\%c`, true},
		{"abc", `a\%c`, false},
		{"a_c", `a\_c`, true},
		{"abbbc", "a%b%c", true},
		{"abcbd", "a%b_", true},
		{"ab", "a%b%c", false},
		{"héllo", "h_llo", true},
		{"héllo", "h%o", true},
		{"ABC", "abc", false},
		{"mississippi", "%iss%pi", true},
		{"mississippi", "m%s_s%i", true},
	} {
		got := eval1(t, call(t, "like", str(tc.s), str(tc.p)))
		if got != map[bool]string{true: "true", false: "false"}[tc.want] {
			t.Errorf("%q LIKE %q = %s", tc.s, tc.p, got)
		}
	}
	if got := eval1(t, call(t, "like", Null(tString), str("%"))); got != "NULL" {
		t.Errorf("NULL LIKE = %s", got)
	}
}

// TestIsNullBitmap: IS [NOT] NULL over a slice that starts mid-byte, a
// column without NULLs and the NULL type, row by row.
func TestIsNullBitmap(t *testing.T) {
	vals := make([]any, 37)
	for i := range vals {
		if i%3 != 1 && i != 20 {
			vals[i] = int64(i)
		}
	}
	whole := batchOf(t, vals)
	b := whole.NewSlice(5, 37)
	defer b.Release()
	k := col(b, 0)
	for _, fn := range []string{"isnull", "isnotnull"} {
		got, err := evalRows(t, call(t, fn, k), b)
		if err != nil {
			t.Fatal(err)
		}
		for i, g := range got {
			null := vals[i+5] == nil
			if want := map[bool]string{true: "true", false: "false"}[null == (fn == "isnull")]; g != want {
				t.Errorf("%s row %d (%v) = %s, want %s", fn, i+5, vals[i+5], g, want)
			}
		}
		if g := eval1(t, call(t, fn, i64(3))); g != map[bool]string{true: "false", false: "true"}[fn == "isnull"] {
			t.Errorf("%s(3) = %s", fn, g)
		}
	}
}

// TestAndOrNarrowed evaluates ANDs and ORs whose first operand decides
// most rows (the later operands then run over the undecided rows only)
// and ones whose first operand decides few, over random NULL-rich
// columns and a batch sliced mid-byte, and wants the values and NULLs of
// every operand evaluated over the whole batch.
func TestAndOrNarrowed(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewSource(3))
	const n = 1500
	ab, bb := array.NewInt64Builder(mem), array.NewInt64Builder(mem)
	for i := 0; i < n; i++ {
		for _, bl := range []*array.Int64Builder{ab, bb} {
			if rng.Intn(9) == 0 {
				bl.AppendNull()
			} else {
				bl.Append(int64(rng.Intn(100)))
			}
		}
	}
	aa, ba := ab.NewArray(), bb.NewArray()
	ab.Release()
	bb.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: tInt64, Nullable: true}, {Name: "b", Type: tInt64, Nullable: true}}, nil)
	whole := array.NewRecordBatch(schema, []arrow.Array{aa, ba}, n)
	aa.Release()
	ba.Release()
	defer whole.Release()
	a, b := NewColumn(0, tInt64, "a"), NewColumn(1, tInt64, "b")
	conds := []Expr{
		call(t, "and", call(t, "<", a, i64(10)), call(t, "or", call(t, "<", b, i64(5)), call(t, ">", b, i64(90)), call(t, "=", a, i64(3)))),
		call(t, "or", call(t, ">", a, i64(5)), call(t, "and", call(t, ">=", b, i64(20)), call(t, "<=", b, i64(30)))),
		call(t, "or", call(t, "<", a, i64(5)), call(t, "and", call(t, ">=", b, i64(20)), call(t, "isnull", a)), call(t, "=", b, i64(7))),
		call(t, "and", call(t, ">", a, i64(50)), call(t, "or", call(t, "isnull", b), call(t, "<", b, i64(10)))),
		call(t, "and", call(t, "isnull", a), call(t, "or", call(t, "isnull", b), call(t, ">", b, i64(60)))),
	}
	ctx := &Context{Alloc: mem}
	for _, batch := range []arrow.RecordBatch{whole, whole.NewSlice(5, n-3)} {
		for _, e := range conds {
			c := e.(*Call)
			got, err := c.Eval(ctx, batch)
			if err != nil {
				t.Fatal(err)
			}
			args, err := evalArgs(ctx, c.Args, batch)
			if err != nil {
				t.Fatal(err)
			}
			want := andOr(ctx, args, int(batch.NumRows()), c.Fn == "and")
			releaseAll(args)
			gb, wb := got.(*array.Boolean), want.(*array.Boolean)
			for r := 0; r < gb.Len(); r++ {
				if gb.IsValid(r) != wb.IsValid(r) || (wb.IsValid(r) && gb.Value(r) != wb.Value(r)) {
					t.Fatalf("%s row %d: got %v (valid %v), want %v (valid %v)", e, r, gb.Value(r), gb.IsValid(r), wb.Value(r), wb.IsValid(r))
				}
			}
			got.Release()
			want.Release()
		}
		if batch != whole {
			batch.Release()
		}
	}
}
