package expr

import (
	"strings"
	"testing"
)

func TestComparisonKeepsColumnType(t *testing.T) {
	b := batchOf(t, []any{int32(1), int32(5), nil})
	c := col(b, 0)
	e := call(t, "=", c, i64(5))
	if s := e.String(); s != "(c0 = 5)" {
		t.Errorf("int32 column vs int literal: %s", s)
	}
	got, _ := evalRows(t, e, b)
	if strings.Join(got, ",") != "false,true,NULL" {
		t.Errorf("got %v", got)
	}
	// A literal that does not fit the column widens the comparison.
	e = call(t, "<", c, i64(1<<40))
	if s := e.String(); !strings.Contains(s, "CAST") {
		t.Errorf("wide literal: %s", s)
	}
	got, _ = evalRows(t, e, b)
	if strings.Join(got, ",") != "true,true,NULL" {
		t.Errorf("got %v", got)
	}
	d := NewColumn(0, decType(7, 2), "d")
	if s := call(t, ">=", d, dec("1.5", 2, 1)).String(); s != "(d >= 1.50)" {
		t.Errorf("decimal column: %s", s)
	}
	if s := call(t, ">=", d, dec("1.505", 4, 3)).String(); !strings.Contains(s, "CAST(d AS DECIMAL(8,3))") {
		t.Errorf("finer literal: %s", s)
	}
	got, _ = evalRows(t, call(t, "in", c, i64(5), i64(7)), b)
	if strings.Join(got, ",") != "false,true,NULL" {
		t.Errorf("in: %v", got)
	}
}
