package expr

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func arrowDate(y int, m time.Month, d int) arrow.Date32 { return dateFromCivil(y, m, d) }

func date(s string) *Literal {
	d, ok := parseDate(s)
	if !ok {
		panic(s)
	}
	return NewLiteral(d, tDate)
}

func TestSubstr(t *testing.T) {
	for _, tc := range []struct {
		s        string
		pos, len int64 // len 99 means absent
		want     string
	}{
		{"quadratically", 5, 99, "ratically"},
		{"quadratically", 5, 6, "ratica"},
		{"Sakila", -3, 99, "ila"},
		{"Sakila", -5, 3, "aki"},
		{"Sakila", 0, 99, ""},
		{"Sakila", 7, 99, ""},
		{"Sakila", -7, 99, ""},
		{"Sakila", 2, 0, ""},
		{"Sakila", 2, -1, ""},
		{"Sakila", 5, 10, "la"},
		{"héllo", 2, 2, "él"},
		{"héllo", -4, 99, "éllo"},
	} {
		args := []Expr{str(tc.s), i64(tc.pos)}
		if tc.len != 99 {
			args = append(args, i64(tc.len))
		}
		if got := eval1(t, call(t, "substr", args...)); got != tc.want {
			t.Errorf("substr(%q,%d,%d) = %q, want %q", tc.s, tc.pos, tc.len, got, tc.want)
		}
	}
}

func TestStrings(t *testing.T) {
	for _, tc := range []struct {
		e    Expr
		want string
	}{
		{call(t, "concat", str("a"), i64(1), dec("2.50", 3, 2)), "a12.50"},
		{call(t, "concat", str("a"), Null(tString)), "NULL"},
		{call(t, "upper", str("abé")), "ABÉ"},
		{call(t, "lower", str("ABC")), "abc"},
		{call(t, "trim", str("  a b  ")), "a b"},
		{call(t, "ltrim", str("  a ")), "a "},
		{call(t, "rtrim", str("  a ")), "  a"},
		{call(t, "length", str("héllo")), "6"},
		{call(t, "char_length", str("héllo")), "5"},
	} {
		if got := eval1(t, tc.e); got != tc.want {
			t.Errorf("%s = %q, want %q", tc.e, got, tc.want)
		}
	}
}

func TestRound(t *testing.T) {
	for _, tc := range []struct {
		e    Expr
		want string
	}{
		{call(t, "round", f64(2.5)), "2"}, // a DOUBLE rounds half to even (MySQL: the C library's rint)
		{call(t, "round", f64(-2.5)), "-2"},
		{call(t, "round", f64(0.5)), "0"},
		{call(t, "round", f64(3.5)), "4"},
		{call(t, "round", f64(1.2345), i64(2)), "1.23"},
		{call(t, "round", dec("2.5", 2, 1)), "3"},
		{call(t, "round", dec("-2.5", 2, 1)), "-3"},
		{call(t, "round", dec("1.005", 4, 3), i64(2)), "1.01"},
		{call(t, "round", dec("-1.005", 4, 3), i64(2)), "-1.01"},
		{call(t, "round", dec("1.005", 4, 3), i64(5)), "1.00500"}, // padded to d digits, as MySQL
		{call(t, "round", dec("155.5", 4, 1), i64(-1)), "160"},
		{call(t, "round", i64(15), call(t, "-", i64(0), i64(1))), "20"}, // a constant expression of digits
		{call(t, "round", i64(155), i64(-1)), "160"},
		{call(t, "round", i64(-155), i64(-1)), "-160"},
		{call(t, "round", i64(7)), "7"},
		{call(t, "abs", dec("-1.50", 3, 2)), "1.50"},
		{call(t, "abs", i64(-3)), "3"},
		{call(t, "floor", dec("-1.5", 2, 1)), "-2"},
		{call(t, "ceil", dec("1.2", 2, 1)), "2"},
		{call(t, "ceiling", dec("-1.2", 2, 1)), "-1"},
		{call(t, "floor", f64(1.7)), "1"},
		{call(t, "getbit", i64(6), i64(1)), "1"},
		{call(t, "getbit", i64(6), i64(0)), "0"},
	} {
		if got := eval1(t, tc.e); got != tc.want {
			t.Errorf("%s = %s, want %s", tc.e, got, tc.want)
		}
	}
}

func TestCasts(t *testing.T) {
	for _, tc := range []struct {
		x    Expr
		to   arrow.DataType
		want string
	}{
		{dec("1.235", 4, 3), decType(5, 2), "1.24"},
		{dec("-1.235", 4, 3), decType(5, 2), "-1.24"},
		{dec("1.5", 2, 1), tInt64, "2"},
		{dec("-1.5", 2, 1), tInt64, "-2"},
		{f64(1.005), decType(5, 2), "1.01"},
		{f64(-2.675), decType(5, 2), "-2.68"},
		{f64(2.5), tInt64, "3"},
		{i64(42), tString, "42"},
		{i64(42), decType(5, 2), "42.00"},
		{date("2000-01-01"), tString, "2000-01-01"},
		{str("2000-02-29"), tDate, "2000-02-29"},
		{str("2000-2-3"), tDate, "2000-02-03"},
		{str(" 12 "), tInt64, "12"},
		{str("12.5"), tInt64, "13"},
		{str("3.14159"), decType(4, 2), "3.14"},
		{str("1e3"), tFloat64, "1000"},
		{dec("12.50", 4, 2), tString, "12.50"},
		{f64(0.1), tString, "0.1"},
		{NewLiteral(true, tBool), tInt64, "1"},
		{i64(0), tBool, "false"},
		{Null(tNull), tDate, "NULL"},
	} {
		e, err := NewCast(tc.x, tc.to)
		if err != nil {
			t.Errorf("cast %s to %s: %v", tc.x, tc.to, err)
			continue
		}
		if got := eval1(t, e); got != tc.want {
			t.Errorf("%s = %s, want %s", e, got, tc.want)
		}
	}
	for _, tc := range []struct {
		x   Expr
		to  arrow.DataType
		err error
	}{
		{str("abc"), tDate, ErrInvalidValue},
		{str("2001-02-29"), tDate, ErrInvalidValue},
		{str("x1"), tInt64, ErrInvalidValue},
		{dec("123.4", 4, 1), decType(3, 1), ErrOverflow},
		{i64(300), arrow.PrimitiveTypes.Int8, ErrOverflow},
	} {
		e, err := NewCast(tc.x, tc.to)
		if err == nil {
			_, err = evalRows(t, e, oneRow)
		}
		if !errors.Is(err, tc.err) {
			t.Errorf("cast %s to %s: %v, want %v", tc.x, tc.to, err, tc.err)
		} else if tc.err == ErrInvalidValue && !strings.Contains(err.Error(), tc.x.(*Literal).Value.(string)) {
			t.Errorf("error does not name the value: %v", err)
		}
	}
	// A number reads as a date the way MySQL reads YYYYMMDD; one that is
	// not a date is an error naming it.
	if got := eval1(t, mustCast(t, i64(20200229), tDate)); got != "2020-02-29" {
		t.Errorf("int to date: %s", got)
	}
	if _, err := evalRows(t, mustCast(t, i64(20200230), tDate), oneRow); !errors.Is(err, ErrInvalidValue) || !strings.Contains(err.Error(), "20200230") {
		t.Errorf("int 20200230 to date: %v", err)
	}
	if _, err := NewCast(NewLiteral(true, tBool), tDate); !errors.Is(err, ErrUnsupported) {
		t.Errorf("bool to date: %v", err)
	}
}

func TestDates(t *testing.T) {
	for _, tc := range []struct {
		e    Expr
		want string
	}{
		{call(t, "date_add", date("2000-02-28"), i64(2)), "2000-03-01"},
		{call(t, "date_sub", date("2000-03-01"), i64(1)), "2000-02-29"},
		{call(t, "date_add", str("1999-12-31"), i64(1)), "2000-01-01"},
		{call(t, "date_add_month", date("2000-01-31"), i64(1)), "2000-02-29"},
		{call(t, "date_add_month", date("2001-01-31"), i64(1)), "2001-02-28"},
		{call(t, "date_sub_month", date("2000-03-31"), i64(13)), "1999-02-28"},
		{call(t, "date_add_year", date("2000-02-29"), i64(1)), "2001-02-28"},
		{call(t, "date_add", date("2000-01-01"), Null(tInt64)), "NULL"},
		{call(t, "year", date("1998-07-15")), "1998"},
		{call(t, "month", date("1998-07-15")), "7"},
		{call(t, "day", date("1998-07-15")), "15"},
		{call(t, "quarter", date("1998-07-15")), "3"},
		{call(t, "dayofmonth", str("1969-12-31")), "31"},
	} {
		if got := eval1(t, tc.e); got != tc.want {
			t.Errorf("%s = %s, want %s", tc.e, got, tc.want)
		}
	}
	e, err := NewDateArith(date("2000-01-31"), i64(1), "QUARTER", false)
	if err != nil || eval1(t, e) != "2000-04-30" {
		t.Errorf("quarter: %v", err)
	}
	if _, err := NewDateArith(date("2000-01-31"), i64(1), "hour_minute", false); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "hour_minute") {
		t.Errorf("hour_minute: %v", err)
	}
	// Civil conversions round-trip over a wide range.
	for d := int64(-800000); d < 800000; d += 997 {
		y, m, dd := civilFromDays(d)
		if int64(dateFromCivil(int(y), time.Month(m), int(dd))) != d {
			t.Fatalf("round trip of %d", d)
		}
	}
}

func TestCommonType(t *testing.T) {
	for _, tc := range []struct {
		a, b arrow.DataType
		want string
	}{
		{tInt32, tInt64, "int64"},
		{arrow.PrimitiveTypes.Int8, tInt32, "int32"},
		{tInt64, decType(7, 2), "decimal(21, 2)"},
		{tInt32, decType(7, 2), "decimal(12, 2)"},
		{decType(7, 2), decType(10, 4), "decimal(10, 4)"},
		{decType(38, 2), decType(38, 10), "decimal(38, 10)"},
		{tFloat64, decType(7, 2), "float64"},
		{tString, tDate, "date32"},
		{tNull, tString, "utf8"},
		{tInt64, tNull, "int64"},
		{tString, tInt64, "float64"},
		{tString, tString, "utf8"},
	} {
		got, err := CommonType(tc.a, tc.b)
		if err != nil || got.String() != tc.want {
			t.Errorf("CommonType(%s, %s) = %v, %v; want %s", tc.a, tc.b, got, err, tc.want)
		}
	}
	if _, err := CommonType(tDate, tInt64); !errors.Is(err, ErrType) {
		t.Errorf("date vs int: %v", err)
	}
}

func TestAggregateType(t *testing.T) {
	for _, tc := range []struct {
		fn   string
		arg  arrow.DataType
		want string
	}{
		{"count", tString, "int64"},
		{"count_star", nil, "int64"},
		{"sum", tInt32, "decimal(38, 0)"},
		{"sum", decType(7, 2), "decimal(38, 2)"},
		{"sum", tFloat64, "float64"},
		{"avg", tInt64, "decimal(38, 4)"},
		{"avg", decType(7, 2), "decimal(38, 6)"},
		{"avg", decType(38, 36), "decimal(38, 38)"},
		{"avg", tFloat64, "float64"},
		{"min", tDate, "date32"},
		{"max", tString, "utf8"},
		{"stddev_samp", decType(7, 2), "float64"},
	} {
		got, err := AggregateType(tc.fn, tc.arg)
		if err != nil || got.String() != tc.want {
			t.Errorf("AggregateType(%s, %v) = %v, %v; want %s", tc.fn, tc.arg, got, err, tc.want)
		}
	}
	if _, err := AggregateType("median", tInt64); !errors.Is(err, ErrUnsupported) {
		t.Errorf("median: %v", err)
	}
}

func TestConditionals(t *testing.T) {
	b := batchOf(t, []any{int64(1), int64(2), nil, int64(4)})
	c := col(b, 0)
	e := call(t, "case", call(t, "=", c, i64(1)), str("one"), call(t, ">", c, i64(3)), c, Null(tNull))
	if e.DataType().ID() != arrow.STRING {
		t.Fatalf("case type %s", e.DataType())
	}
	got, err := evalRows(t, e, b)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ",") != "one,NULL,NULL,4" {
		t.Errorf("case: %v", got)
	}
	got, _ = evalRows(t, call(t, "coalesce", c, dec("9.5", 2, 1)), b)
	if strings.Join(got, ",") != "1.0,2.0,9.5,4.0" {
		t.Errorf("coalesce: %v", got)
	}
	got, _ = evalRows(t, call(t, "nullif", c, i64(2)), b)
	if strings.Join(got, ",") != "1,NULL,NULL,4" {
		t.Errorf("nullif: %v", got)
	}
	got, _ = evalRows(t, call(t, "if", call(t, "isnull", c), i64(0), c), b)
	if strings.Join(got, ",") != "1,2,0,4" {
		t.Errorf("if: %v", got)
	}
}

func TestConstantFoldAndRewrite(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	c := NewColumn(0, tInt64, "x")
	e := call(t, "and", call(t, ">", c, call(t, "+", i64(1), i64(2))), call(t, "=", call(t, "/", i64(1), i64(3)), dec("0.3333", 4, 4)))
	f, err := ConstantFold(e, mem)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.String(); got != "((x > 3) AND TRUE)" {
		t.Errorf("folded: %s", got)
	}
	lit, err := ConstantFold(call(t, "concat", str("a"), str("b")), mem)
	if err != nil || lit.String() != "'ab'" {
		t.Errorf("folded literal: %v %v", lit, err)
	}
	if cols := Columns(e); len(cols) != 1 || cols[0] != 0 {
		t.Errorf("columns %v", cols)
	}
	// Rewrite remaps the column to a new index and type; types re-derive.
	r, err := Rewrite(call(t, "+", c, dec("1.5", 2, 1)), func(x Expr) (Expr, error) {
		if col, ok := x.(*Column); ok {
			return NewColumn(3, tInt32, col.Name), nil
		}
		return x, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if Columns(r)[0] != 3 || r.DataType().String() != "decimal(12, 1)" {
		t.Errorf("rewrite: %s %s", r, r.DataType())
	}
	parts := SplitAnd(call(t, "and", call(t, "and", c, c), c))
	if len(parts) != 3 || JoinAnd(nil) != nil || JoinAnd(parts).String() != "((CAST(x AS BOOLEAN) AND CAST(x AS BOOLEAN)) AND CAST(x AS BOOLEAN))" {
		t.Errorf("split/join: %d %v", len(parts), JoinAnd(parts))
	}
	var n int
	Walk(e, func(Expr) bool { n++; return true })
	if n == 0 {
		t.Error("walk visited nothing")
	}
	for _, l := range []*Literal{str("it's"), dec("12.50", 4, 2), date("2000-01-01"), Null(tInt64)} {
		_ = l.String()
	}
	if s := date("2000-01-01").String(); s != "DATE '2000-01-01'" {
		t.Errorf("date literal %s", s)
	}
	if s := str("it's").String(); s != "'it''s'" {
		t.Errorf("string literal %s", s)
	}
}

func TestLiteralConversions(t *testing.T) {
	if got := eval1(t, NewLiteral("12.345", decType(5, 2))); got != "12.35" {
		t.Errorf("string decimal literal: %s", got)
	}
	if got := eval1(t, NewLiteral(2.5, decType(5, 2))); got != "2.50" {
		t.Errorf("float decimal literal: %s", got)
	}
	if got := eval1(t, NewLiteral("2001-02-03", tDate)); got != "2001-02-03" {
		t.Errorf("date literal: %s", got)
	}
	if got := eval1(t, NewLiteral(7, tInt32)); got != "7" {
		t.Errorf("int literal: %s", got)
	}
	// A value that does not match its type is an error, not a panic.
	l := &Literal{Value: "x", Type: tInt64}
	if _, err := evalRows(t, l, oneRow); !errors.Is(err, ErrType) {
		t.Errorf("mismatched literal: %v", err)
	}
}

func TestWrongColumnTypeIsAnError(t *testing.T) {
	b := batchOf(t, []any{int32(1)})
	e := call(t, "+", NewColumn(0, tInt64, "s"), i64(1)) // declared BIGINT, really INT
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	if _, err := e.Eval(&Context{Alloc: mem}, b); !errors.Is(err, ErrInternal) {
		t.Errorf("err %v", err)
	}
	e = call(t, "upper", NewColumn(0, tString, "s"))
	if _, err := e.Eval(&Context{Alloc: mem}, b); !errors.Is(err, ErrInternal) {
		t.Errorf("err %v", err)
	}
}

func mustCast(t *testing.T, x Expr, to arrow.DataType) Expr {
	t.Helper()
	e, err := NewCast(x, to)
	if err != nil {
		t.Fatalf("cast %s to %s: %v", x, to, err)
	}
	return e
}
