package expr

import (
	"errors"
	"testing"
)

func TestNumberText(t *testing.T) {
	for _, c := range []struct {
		in, out string
		ok      bool
	}{
		{"12", "12", true}, {" 12 ", "12", true}, {"\t-3.5\n", "-3.5", true}, {"+.5", "+.5", true},
		{"12.", "12.", true}, {"1e3", "1e3", true}, {"1E-3", "1E-3", true}, {"-0", "-0", true},
		{"", "", false}, {" ", "", false}, {"abc", "", false}, {"12abc", "", false}, {"1 2", "", false},
		{".", "", false}, {"e5", "", false}, {"1e", "", false}, {"1e+", "", false}, {"0x10", "", false},
		{"1_000", "", false}, {"inf", "", false}, {"NaN", "", false}, {"--1", "", false}, {"1.2.3", "", false},
		{"\u00a012", "", false}, // only ASCII whitespace is skipped
	} {
		out, ok := numberText(c.in)
		if ok != c.ok || (ok && out != c.out) {
			t.Errorf("numberText(%q) = %q, %v; want %q, %v", c.in, out, ok, c.out, c.ok)
		}
	}
}

// Every path that reads a string as a number follows the rule: casts to
// each numeric type, arithmetic and comparison with a number.
func TestStringAsNumberEverywhere(t *testing.T) {
	good := map[string]Expr{
		"bigint":  cast(t, str(" 12 "), tInt64),
		"double":  cast(t, str(" 12 "), tFloat64),
		"decimal": cast(t, str(" 12 "), decType(5, 1)),
		"+":       call(t, "+", str(" 12 "), i64(0)),
	}
	want := map[string]string{"bigint": "12", "double": "12", "decimal": "12.0", "+": "12"}
	for name, e := range good {
		if got := eval1(t, e); got != want[name] {
			t.Errorf("%s: %s = %s, want %s", name, e, got, want[name])
		}
	}
	for _, e := range []Expr{
		cast(t, str("12abc"), tInt64), cast(t, str("12abc"), tFloat64), cast(t, str("12abc"), decType(5, 1)),
		cast(t, str("1/2"), decType(5, 1)), call(t, "+", str("12abc"), i64(0)), call(t, "=", str("12abc"), i64(12)),
		call(t, "<", str(""), f64(1)),
	} {
		if _, err := evalRows(t, e, oneRow); !errors.Is(err, ErrInvalidValue) {
			t.Errorf("%s: want ErrInvalidValue, got %v", e, err)
		}
	}
}

func TestAggregateArg(t *testing.T) {
	s := str("12")
	for fn, want := range map[string]string{"sum": "float64", "avg": "float64", "var_pop": "float64", "min": "utf8", "max": "utf8", "count": "utf8"} {
		a, err := AggregateArg(fn, s)
		if err != nil {
			t.Fatal(err)
		}
		if got := a.DataType().String(); got != want {
			t.Errorf("AggregateArg(%s, VARCHAR) is %s, want %s", fn, got, want)
		}
	}
	a, err := AggregateArg("sum", str("abc"))
	if err != nil {
		t.Fatalf("binding must not fail: %v", err)
	}
	if _, err := evalRows(t, a, oneRow); !errors.Is(err, ErrInvalidValue) {
		t.Fatalf("sum('abc'): want ErrInvalidValue, got %v", err)
	}
	if _, err := AggregateType("sum", tString); err == nil {
		t.Fatal("AggregateType(sum, VARCHAR) must fail: strings are converted by AggregateArg first")
	}
}
