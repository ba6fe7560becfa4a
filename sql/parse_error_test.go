package sql

import (
	"errors"
	"strings"
	"testing"

	"github.com/fsql-dev/fsql/errs"
)

// A syntax error carries MySQL's ER_PARSE_ERROR and the line and column
// of the token the parser stopped at, also in its message.
func TestParseErrorPosition(t *testing.T) {
	long := "select 1 from t where " + strings.Repeat("a = 1 and ", 300) + "and"
	for _, c := range []struct {
		text         string
		line, column int
		near         string
	}{
		{"select 1 frm t", 1, 14, `near "t"`}, // frm is an alias of 1
		{"select k\nfrom small\nwhere k = = 1", 3, 11, `near "= 1"`},
		{"select 1 from\n  where", 2, 3, `near "where"`},
		{"select k from t where (k > 1", 1, 29, "at the end of the statement"},
		{"select 'abc", 1, 8, `near "'abc"`},
		{"select 1;\nselect 2 ,, 3", 2, 11, `near ", 3"`},
		{"select 'é' frm t", 1, 16, `near "t"`}, // columns count characters
		{long, 1, len(long) - 2, `near "and"`},
	} {
		_, err := Parse(c.text)
		var e *errs.Error
		if !errors.As(err, &e) {
			t.Errorf("%q: %v is not an *errs.Error", c.text, err)
			continue
		}
		if !errors.Is(err, errs.ErParseError) || e.Code != 1064 || e.SQLState != "42000" || e.Kind != errs.Syntax {
			t.Errorf("%q: %v is %v %d (%s), want a syntax error 1064 (42000)", c.text, err, e.Kind, e.Code, e.SQLState)
		}
		p := errs.PositionOf(err)
		if p == nil || p.Line != c.line || p.Column != c.column {
			t.Errorf("%q: position %v, want line %d column %d", c.text, p, c.line, c.column)
			continue
		}
		if !strings.Contains(err.Error(), p.String()) || !strings.Contains(err.Error(), c.near) {
			t.Errorf("%q: message %q does not say %s %s", c.text, err, p, c.near)
		}
	}
}

// An error the parser numbers itself keeps its number.
func TestParseErrorKeepsTheParsersNumber(t *testing.T) {
	_, err := Parse("select 'a' collate nosuchcollation")
	if code, state := errs.CodeOf(err); code != 1273 || state != "HY000" {
		t.Errorf("%v: code %d (%s), want 1273 (HY000)", err, code, state)
	}
	if strings.Contains(err.Error(), "[ddl:") {
		t.Errorf("%q keeps the parser's prefix", err)
	}
	_, err = Parse("  ")
	if !errors.Is(err, errs.ErEmptyQuery) {
		t.Errorf("empty: %v", err)
	}
	_, err = Parse("select * from a full\nouter join b on true")
	if !errors.Is(err, errs.Unsupported) || !strings.Contains(err.Error(), "FULL OUTER JOIN (line 2 column 1)") {
		t.Errorf("full outer join: %v", err)
	}
}
