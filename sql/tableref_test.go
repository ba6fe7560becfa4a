package sql

import "testing"

func TestTableOffset(t *testing.T) {
	for _, c := range []struct {
		src, name string
		want      int
	}{
		{"select * from t", "t", 14},
		{"select * from T", "t", 14},
		{"select * from `t`", "t", 14},
		{"select t.a from t", "t", 16},              // t.a qualifies a column
		{"select 'from t' from x, t", "t", 24},      // a string is skipped
		{"select 1 -- from t\nfrom t", "t", 24},     // a comment is skipped
		{"select 1 # from t\nfrom t", "t", 23},      // so is MySQL's #
		{"select /* from t */ 1 from t", "t", 27},   // and a block comment
		{"select a from x join\n  t on 1", "t", 23}, // JOIN, on a later line
		{"select 'it''s' from t", "t", 20},          // a doubled quote
		{`select 'a\'b' from t`, "t", 19},           // a backslash escape
		{"select 1 from `a``b`", "a`b", 14},         // a doubled backquote
		{"describe t", "t", 9},
		{"show create table t", "t", 18},
		{"select t from x", "t", -1}, // a column, not a table
		{"select * from tt", "t", -1},
		{"select 1 from db.t", "db", -1}, // db qualifies t
	} {
		if got := tableOffset(c.src, c.name); got != c.want {
			t.Errorf("tableOffset(%q, %q) = %d, want %d", c.src, c.name, got, c.want)
		}
	}
}
