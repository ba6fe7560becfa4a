package expr

import (
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

func TestArithTypes(t *testing.T) {
	d72 := NewColumn(0, decType(7, 2), "d72")
	d150 := NewColumn(0, decType(15, 0), "d150")
	i32 := NewColumn(0, tInt32, "i32")
	i64c := NewColumn(0, tInt64, "i64")
	fl := NewColumn(0, tFloat64, "f")
	s := NewColumn(0, tString, "s")
	for _, tc := range []struct {
		fn   string
		a, b Expr
		want string
	}{
		{"+", i32, i32, "int64"},
		{"*", i64c, i32, "int64"},
		{"/", i64c, i64c, "decimal(23, 4)"},
		{"/", i32, i32, "decimal(14, 4)"},
		{"/", d72, i32, "decimal(11, 6)"},
		{"/", d72, d150, "decimal(11, 6)"},
		{"+", d72, d72, "decimal(8, 2)"},
		{"+", d72, i64c, "decimal(22, 2)"},
		{"-", d72, d150, "decimal(18, 2)"},
		{"*", d72, d72, "decimal(14, 4)"},
		{"*", d72, i32, "decimal(17, 2)"},
		{"%", d72, i32, "decimal(12, 2)"},
		{"+", d72, fl, "float64"},
		{"/", fl, i32, "float64"},
		{"+", s, i32, "float64"},
		{"=", d72, i32, "bool"},
		{"and", i32, fl, "bool"},
		{"concat", s, i32, "utf8"},
		{"coalesce", i32, d72, "decimal(12, 2)"},
		{"coalesce", i32, s, "utf8"},
		{"round", d72, NewLiteral(int64(1), tInt64), "decimal(7, 1)"},
		{"floor", d72, nil, "decimal(6, 0)"},
		{"year", s, nil, "int64"},
	} {
		args := []Expr{tc.a}
		if tc.b != nil {
			args = append(args, tc.b)
		}
		e, err := NewCall(tc.fn, args...)
		if err != nil {
			t.Errorf("%s%v: %v", tc.fn, args, err)
			continue
		}
		if got := e.DataType().String(); got != tc.want {
			t.Errorf("%s: type %s, want %s", e, got, tc.want)
		}
	}
}

func TestArithErrors(t *testing.T) {
	d := NewColumn(0, tDate, "d")
	_, err := NewCall("+", d, i64(1))
	if !errors.Is(err, ErrType) || !strings.Contains(err.Error(), "DATE") {
		t.Errorf("date + int: %v", err)
	}
	if _, err := NewCall("frobnicate", i64(1)); !errors.Is(err, ErrUnsupported) {
		t.Errorf("unknown function: %v", err)
	}
	if _, err := NewCall("+", i64(1)); !errors.Is(err, ErrType) {
		t.Errorf("arity: %v", err)
	}
}

func TestDecimalDivision(t *testing.T) {
	for _, tc := range []struct {
		a, b Expr
		want string
	}{
		{i64(1), i64(3), "0.3333"},
		{i64(2), i64(3), "0.6667"},
		{i64(-2), i64(3), "-0.6667"},
		{i64(2), i64(-3), "-0.6667"},
		{dec("10.00", 4, 2), i64(4), "2.500000"},
		{dec("1.00", 3, 2), dec("0.03", 3, 2), "33.333333"},
		{dec("-5", 1, 0), i64(2), "-2.5000"},
		{i64(1), i64(0), "NULL"},
		{dec("1.5", 2, 1), dec("0.0", 2, 1), "NULL"},
		{Null(tInt64), i64(2), "NULL"},
		{f64(1), i64(4), "0.25"},
		{f64(1), f64(0), "NULL"},
		{dec("100000000000000000000000000000000000", 36, 0), dec("1000.00", 6, 2), "100000000000000000000000000000000.0000"},
		{dec("20000000000000000000000000000000000", 35, 0), i64(3), "6666666666666666666666666666666666.6667"},
	} {
		e := call(t, "/", tc.a, tc.b)
		if got := eval1(t, e); got != tc.want {
			t.Errorf("%s = %s, want %s", e, got, tc.want)
		}
	}
}

func TestArithValues(t *testing.T) {
	for _, tc := range []struct {
		fn   string
		a, b Expr
		want string
	}{
		{"+", i64(2), i64(3), "5"},
		{"-", dec("1.5", 2, 1), dec("0.25", 3, 2), "1.25"},
		{"*", dec("1.5", 2, 1), dec("-0.25", 3, 2), "-0.375"},
		{"*", dec("12345678901234567.89", 19, 2), i64(1000), "12345678901234567890.00"},
		{"%", i64(7), i64(-3), "1"},
		{"%", i64(-7), i64(3), "-1"},
		{"%", i64(7), i64(0), "NULL"},
		{"%", dec("7.5", 2, 1), i64(2), "1.5"},
		{"+", str("1.5"), i64(1), "2.5"},
		{"div", i64(7), i64(2), "3"},
	} {
		e := call(t, tc.fn, tc.a, tc.b)
		if got := eval1(t, e); got != tc.want {
			t.Errorf("%s = %s, want %s", e, got, tc.want)
		}
	}
	if got := eval1(t, call(t, "neg", dec("1.50", 3, 2))); got != "-1.50" {
		t.Errorf("neg = %s", got)
	}
}

func TestOverflow(t *testing.T) {
	big := dec("99999999999999999999999999999999999999", 38, 0)
	for _, tc := range []struct {
		fn   string
		a, b Expr
	}{
		{"+", i64(1 << 62), i64(1 << 62)},
		{"*", i64(1 << 40), i64(1 << 40)},
		{"-", i64(-1 << 63), i64(1)},
		{"+", big, i64(1)},
		{"*", big, i64(10)},
	} {
		e := call(t, tc.fn, tc.a, tc.b)
		_, err := evalRows(t, e, oneRow)
		if !errors.Is(err, ErrOverflow) {
			t.Errorf("%s: err %v, want ErrOverflow", e, err)
		}
	}
	// The largest product that fits does not error.
	if got := eval1(t, call(t, "*", i64(3037000499), i64(3037000499))); got != "9223372030926249001" {
		t.Errorf("got %s", got)
	}
	if got := eval1(t, call(t, "*", i64(-1<<62), i64(2))); got != "-9223372036854775808" {
		t.Errorf("got %s", got)
	}
}

func TestArithColumnsWithNulls(t *testing.T) {
	b := batchOf(t, []any{int64(1), nil, int64(3), int64(4)}, []any{int64(10), int64(20), nil, int64(0)})
	e := call(t, "+", col(b, 0), col(b, 1))
	got, err := evalRows(t, e, b)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ",") != "11,NULL,NULL,4" {
		t.Errorf("got %v", got)
	}
	e = call(t, "/", col(b, 0), col(b, 1))
	got, _ = evalRows(t, e, b)
	if strings.Join(got, ",") != "0.1000,NULL,NULL,NULL" {
		t.Errorf("got %v", got)
	}
	// Overflow in a NULL row is not an error.
	b2 := batchOf(t, []any{int64(1 << 62), nil}, []any{nil, int64(1 << 62)})
	e = call(t, "+", call(t, "+", col(b2, 0), i64(1<<62)), col(b2, 1))
	if _, err := evalRows(t, e, b2); !errors.Is(err, ErrOverflow) {
		t.Errorf("row 0 overflows before the NULL is added: %v", err)
	}
	_ = arrow.Null
}
