package expr

import (
	"bytes"
	"errors"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

func dt(s string) *Literal {
	us, ok := parseDatetime(s)
	if !ok {
		panic("bad datetime " + s)
	}
	return NewLiteral(arrow.Timestamp(us), DatetimeType)
}

// evalCase is one expression and the rendering of its value.
type evalCase struct {
	e    Expr
	want string
}

func runCases(t *testing.T, cases []evalCase) {
	t.Helper()
	for _, c := range cases {
		if got := eval1(t, c.e); got != c.want {
			t.Errorf("%s = %s, want %s", c.e, got, c.want)
		}
	}
}

func TestMathFunctions(t *testing.T) {
	null := Null(tInt64)
	runCases(t, []evalCase{
		{call(t, "sqrt", i64(16)), "4"},
		{call(t, "sqrt", i64(-1)), "NULL"},
		{call(t, "sqrt", null), "NULL"},
		{call(t, "ln", i64(0)), "NULL"},
		{call(t, "log", i64(-1)), "NULL"},
		{call(t, "log", i64(2), i64(1024)), "10"},
		{call(t, "log", i64(1), i64(8)), "NULL"},
		{call(t, "log", f64(0.5), i64(4)), "-2"},
		{call(t, "log2", i64(8)), "3"},
		{call(t, "log10", i64(1000)), "3"},
		{call(t, "pow", i64(2), i64(-2)), "0.25"},
		{call(t, "power", str("3"), i64(2)), "9"},
		{call(t, "sign", dec("-0.01", 3, 2)), "-1"},
		{call(t, "sign", f64(0)), "0"},
		{call(t, "truncate", dec("1.2345", 5, 4), i64(2)), "1.23"},
		{call(t, "truncate", dec("-1.2345", 5, 4), i64(0)), "-1"},
		{call(t, "truncate", dec("1.5", 2, 1), i64(3)), "1.500"},
		{call(t, "truncate", dec("1234.5", 5, 1), i64(-2)), "1200"},
		{call(t, "truncate", i64(-129), i64(-1)), "-120"},
		{call(t, "truncate", i64(5), i64(-19)), "0"},
		{call(t, "truncate", f64(-1.99), i64(1)), "-1.9"},
		{call(t, "truncate", f64(-0.5), i64(0)), "0"},
		{call(t, "greatest", i64(1), i64(3), i64(2)), "3"},
		{call(t, "least", i64(1), null), "NULL"},
		{call(t, "greatest", i64(2), str("10")), "2"},
		{call(t, "greatest", i64(1), dec("2.50", 3, 2)), "2.50"},
		{call(t, "least", date("2020-01-02"), dt("2020-01-01 10:00:00")), "2020-01-01 10:00:00"},
		{call(t, "pi"), "3.141592653589793"},
	})
	for _, e := range []Expr{call(t, "exp", i64(1000)), call(t, "pow", i64(10), i64(400)), call(t, "pow", i64(-8), f64(0.5))} {
		if _, err := evalRows(t, e, oneRow); !errors.Is(err, ErrOverflow) || !strings.Contains(err.Error(), "out of range") {
			t.Errorf("%s: %v, want an out-of-range error", e, err)
		}
	}
	// Digits from a column keep the DECIMAL's type (MariaDB's rule).
	if e, err := NewCall("truncate", dec("1.5", 2, 1), NewColumn(0, tInt64, "d")); err != nil || !arrow.TypeEqual(e.DataType(), decType(2, 1)) {
		t.Errorf("truncate with a column of digits: %v, %v", e, err)
	}
	if _, err := NewCall("greatest", date("2020-01-01"), i64(1)); !errors.Is(err, ErrType) {
		t.Errorf("greatest(date, int): %v", err)
	}
}

func TestStringFunctions(t *testing.T) {
	null := Null(tString)
	runCases(t, []evalCase{
		{call(t, "replace", str("aXbX"), str("X"), str("yy")), "ayybyy"},
		{call(t, "replace", str("abc"), str(""), str("x")), "abc"},
		{call(t, "replace", str("abc"), str("b"), null), "NULL"},
		{call(t, "lpad", str("hi"), i64(5), str("xy")), "xyxhi"},
		{call(t, "lpad", str("héllo"), i64(2), str("x")), "hé"},
		{call(t, "lpad", str("hi"), i64(-1), str("x")), "NULL"},
		{call(t, "lpad", str("hi"), i64(3), str("")), "NULL"},
		{call(t, "rpad", str("é"), i64(3), str("ab")), "éab"},
		{call(t, "left", str("héllo"), i64(2)), "hé"},
		{call(t, "left", str("abc"), i64(-1)), ""},
		{call(t, "right", str("héllo"), i64(4)), "éllo"},
		{call(t, "right", str("abc"), i64(9)), "abc"},
		{call(t, "locate", str("l"), str("héllo")), "3"},
		{call(t, "locate", str("l"), str("héllo"), i64(4)), "4"},
		{call(t, "locate", str("l"), str("hello"), i64(0)), "0"},
		{call(t, "locate", str(""), str("abc"), i64(4)), "4"},
		{call(t, "locate", str(""), str("abc"), i64(5)), "0"},
		{call(t, "instr", str("foobar"), str("bar")), "4"},
		{call(t, "position", str("x"), str("abc")), "0"},
		{call(t, "reverse", str("héllo")), "olléh"},
		{call(t, "repeat", str("ab"), i64(3)), "ababab"},
		{call(t, "repeat", str("ab"), i64(0)), ""},
		{call(t, "space", i64(2)), "  "},
		{call(t, "concat_ws", str(","), str("a"), null, str(""), str("b")), "a,,b"},
		{call(t, "concat_ws", null, str("a")), "NULL"},
		{call(t, "ascii", str("")), "0"},
		{call(t, "ascii", str("é")), "195"},
		{call(t, "strcmp", str("a"), str("b")), "-1"},
		{call(t, "substring_index", str("www.mysql.com"), str("."), i64(2)), "www.mysql"},
		{call(t, "substring_index", str("www.mysql.com"), str("."), i64(-2)), "mysql.com"},
		{call(t, "substring_index", str("abc"), str("."), i64(-1)), "abc"},
	})
	if _, err := evalRows(t, call(t, "repeat", str("x"), i64(1<<40)), oneRow); !errors.Is(err, ErrOverflow) {
		t.Errorf("repeat past max_allowed_packet: %v", err)
	}
}

func TestDatetimeParseFormat(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"2020-01-02 03:04:05", "2020-01-02 03:04:05"},
		{"2020-1-2 3:4:5", "2020-01-02 03:04:05"},
		{"2020-01-02T03:04:05.5", "2020-01-02 03:04:05.500000"},
		{"2020-01-02", "2020-01-02 00:00:00"},
		{"2020-01-02 03:04", "2020-01-02 03:04:00"},
		{"2020-01-02 03:04:05.1234565", "2020-01-02 03:04:05.123457"},
		{"0001-01-01 00:00:00", "0001-01-01 00:00:00"},
		{"1969-12-31 23:59:59.999999", "1969-12-31 23:59:59.999999"},
	} {
		us, ok := parseDatetime(c.in)
		if !ok || formatDatetime(us) != c.want {
			t.Errorf("parseDatetime(%q) = %s %v, want %s", c.in, formatDatetime(us), ok, c.want)
		}
	}
	for _, bad := range []string{"", "2020-13-01", "2020-02-30 00:00:00", "2020-01-01 24:00:00", "2020-01-01 10:60", "2020-01-01 10:00:00.", "2020-01-01 23:59:59.9999999", "x"} {
		if _, ok := parseDatetime(bad); ok {
			t.Errorf("parseDatetime(%q) accepted", bad)
		}
	}
	// Civil conversions agree with the time package on a wide range.
	r := rand.New(rand.NewSource(1))
	for k := 0; k < 2000; k++ {
		us := r.Int63n(maxDatetime-minDatetime) + minDatetime
		want := time.UnixMicro(us).UTC().Format("2006-01-02 15:04:05.000000")
		want = strings.TrimSuffix(want, ".000000")
		if got := formatDatetime(us); got != want {
			t.Fatalf("formatDatetime(%d) = %s, want %s", us, got, want)
		}
	}
}

func TestDateFunctions(t *testing.T) {
	runCases(t, []evalCase{
		{call(t, "hour", dt("2020-01-02 23:04:05")), "23"},
		{call(t, "hour", str("100:05:03")), "100"},
		{call(t, "microsecond", dt("2020-01-02 03:04:05.000007")), "7"},
		{call(t, "dayofweek", date("2020-01-05")), "1"},
		{call(t, "weekday", date("2020-01-05")), "6"},
		{call(t, "dayofyear", date("2020-12-31")), "366"},
		{call(t, "last_day", date("2019-02-03")), "2019-02-28"},
		{call(t, "datediff", dt("2020-03-01 00:00:01"), date("2020-02-01")), "29"},
		{call(t, "timestampdiff", str("month"), date("2020-01-31"), date("2020-02-29")), "0"},
		{call(t, "timestampdiff", str("month"), date("2020-02-29"), date("2020-01-31")), "0"},
		{call(t, "timestampdiff", str("month"), date("2020-03-31"), date("2020-02-29")), "-1"},
		{call(t, "timestampdiff", str("year"), date("2000-02-29"), date("2001-02-28")), "0"},
		{call(t, "timestampdiff", str("second"), dt("2020-01-01 00:00:01.9"), dt("2020-01-01 00:00:00")), "-1"},
		{call(t, "unix_timestamp", dt("2020-01-01 00:00:00")), "1577836800"},
		{call(t, "unix_timestamp", date("1960-01-01")), "0"},
		{call(t, "from_unixtime", i64(86400)), "1970-01-02 00:00:00"},
		{call(t, "from_unixtime", i64(-1)), "NULL"},
		{call(t, "date_format", dt("2020-01-02 13:04:05.000123"), str("%Y-%m-%d %H:%i:%s.%f %W %M %D %j %p %r")), "2020-01-02 13:04:05.000123 Thursday January 2nd 002 PM 01:04:05 PM"},
		{call(t, "date_format", date("2020-01-11"), str("%D %e %c %y %%x")), "11th 11 1 20 %x"},
		{call(t, "str_to_date", str("May 1, 2013"), str("%M %d,%Y")), "2013-05-01"},
		{call(t, "str_to_date", str("2013-05-01 9:30:17 am"), str("%Y-%m-%d %h:%i:%s %p")), "2013-05-01 09:30:17"},
		{call(t, "str_to_date", str("12 AM 2013-05-01"), str("%h %p %Y-%m-%d")), "2013-05-01 00:00:00"},
		{call(t, "round_fsp", dt("2020-01-01 23:59:59.5"), i64(0)), "2020-01-02 00:00:00"},
		{call(t, "round_fsp", dt("2020-01-01 00:00:00.449"), i64(1)), "2020-01-01 00:00:00.400000"},
	})
	if _, err := evalRows(t, call(t, "str_to_date", str("2020-02-30"), str("%Y-%m-%d")), oneRow); !errors.Is(err, ErrInvalidValue) || !strings.Contains(err.Error(), "2020-02-30") {
		t.Errorf("str_to_date of a day that does not exist: %v", err)
	}
	d, err := NewDateArith(date("2020-01-31"), i64(1), "HOUR", false)
	if err != nil || eval1(t, d) != "2020-01-31 01:00:00" || !isDatetime(d.DataType()) {
		t.Errorf("date + 1 hour: %v %v", d, err)
	}
	d, err = NewDateArith(dt("2020-01-31 10:00:00"), dec("1.5", 2, 1), "second", true)
	if err != nil || eval1(t, d) != "2020-01-31 09:59:58.500000" {
		t.Errorf("datetime - 1.5 second: %v %v", d, err)
	}
}

// TestWeekModes checks calc_week against an independent reading of
// MySQL's definitions: the week of a date is the number of the week that
// holds it, counted from the year's first week, which in modes 1/3/4/6
// is the first with 4 or more days in the year and in the others the one
// holding the first Sunday/Monday; modes 2, 3, 6, 7 count a date before
// week 1 in the previous year's last week.
func TestWeekModes(t *testing.T) {
	for mode := int64(0); mode < 8; mode++ {
		for day := int64(dateFromCivil(1999, time.December, 20)); day < int64(dateFromCivil(2030, time.January, 10)); day++ {
			got, _ := calcWeek(day, weekMode(mode))
			if want := referenceWeek(day, mode); got != want {
				y, m, d := civilFromDays(day)
				t.Fatalf("week(%d-%02d-%02d, %d) = %d, want %d", y, m, d, mode, got, want)
			}
		}
	}
}

func referenceWeek(day, mode int64) int64 {
	monday := mode&1 == 1
	fourDays := mode == 1 || mode == 3 || mode == 4 || mode == 6
	wrap := mode&2 == 2
	firstWeekStart := func(y int64) int64 {
		jan1 := int64(dateFromCivil(int(y), time.January, 1))
		dow := floorMod(jan1+4, 7) // Sunday = 0
		if monday {
			dow = floorMod(jan1+3, 7)
		}
		if fourDays {
			if dow <= 3 {
				return jan1 - dow
			}
			return jan1 + 7 - dow
		}
		if dow == 0 {
			return jan1
		}
		return jan1 + 7 - dow
	}
	y, _, _ := civilFromDays(day)
	start := firstWeekStart(y)
	if day < start {
		if !wrap {
			return 0
		}
		return (day-firstWeekStart(y-1))/7 + 1
	}
	w := (day-start)/7 + 1
	if wrap && w >= 53 && day >= firstWeekStart(y+1) {
		return 1
	}
	return w
}

// TestGroupConcatKeys checks that the ORDER BY key bytes sort as the SQL
// values do, NULL first, and in reverse for DESC.
func TestGroupConcatKeys(t *testing.T) {
	vals := []Expr{i64(-5), i64(0), i64(3), Null(tInt64)}
	floats := []Expr{f64(-2.5), f64(-0.1), f64(0), f64(7), Null(tFloat64)}
	strs := []Expr{str(""), str("a"), str("a\x00"), str("ab"), str("b"), Null(tString)}
	decs := []Expr{dec("-1.50", 3, 2), dec("0.01", 3, 2), dec("2.00", 3, 2), Null(decType(3, 2))}
	for _, list := range [][]Expr{vals, floats, strs, decs} {
		for _, desc := range []bool{false, true} {
			var keys [][]byte
			for _, v := range list {
				e, err := NewGroupConcatArg(",", false, []Expr{str("v")}, []Expr{v}, []bool{desc})
				if err != nil {
					t.Fatal(err)
				}
				a, err := e.Eval(&Context{}, oneRow)
				if err != nil {
					t.Fatal(err)
				}
				b := []byte(ScalarFromArray(a, 0).(string))
				a.Release()
				key, _, val, rest, ok := NextGroupConcatEntry(b)
				if !ok || len(rest) != 0 || string(val) != "v" {
					t.Fatalf("entry %q", b)
				}
				keys = append(keys, key)
			}
			// list is ascending with NULL last; NULL sorts first ascending.
			want := append([][]byte{keys[len(keys)-1]}, keys[:len(keys)-1]...)
			if desc {
				want = slices.Clone(keys[:len(keys)-1])
				slices.Reverse(want)
				want = append(want, keys[len(keys)-1])
			}
			got := slices.Clone(keys)
			slices.SortFunc(got, bytes.Compare)
			for i := range got {
				if !bytes.Equal(got[i], want[i]) {
					t.Fatalf("%v desc=%v: keys do not sort as the values", list, desc)
				}
			}
		}
	}
}
