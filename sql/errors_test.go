package sql_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/fsql-dev/fsql/connectors/hive"
	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/internal/slt"
	"github.com/fsql-dev/fsql/sql"
)

// TestBindErrorConditions checks that the binder's errors carry the
// MySQL condition MySQL itself sends for the same statement (number,
// SQLSTATE, kind), a message naming the construct, and the position of
// the expression at fault where the parser records one: a sample of each
// family (argument counts, group functions, windows, frames, ORDER/GROUP
// BY positions, subquery widths, literals, DECIMAL bounds).
func TestBindErrorConditions(t *testing.T) {
	dir := t.TempDir()
	file, err := slt.Parse("tables", strings.NewReader(`
table t (a int, b bigint, s varchar, d date)
1	10	x	2000-01-01
`))
	if err != nil {
		t.Fatal(err)
	}
	if err := slt.WriteTables(dir, file.Tables()); err != nil {
		t.Fatal(err)
	}
	cat, err := hive.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		q    string
		want errs.Condition
		msg  string
		col  int // 1-based column of the expression at fault on line 1; 0: no position
	}{
		// Argument counts and values.
		{"select any_value(a, b) from t", errs.ErWrongParamcountToNativeFct, "ANY_VALUE takes one argument, got 2", 8},
		{"select now(1, 2)", errs.ErWrongParamcountToNativeFct, "now takes at most one argument", 8},
		{"select now(7)", errs.ErTooBigPrecision, "precision 7 in now(7) is out of range (0 to 6)", 8},
		{"select a, ntile(0) over (order by a) from t", errs.ErWrongArguments, "the number of buckets of NTILE must be an integer constant of at least 1, got 0", 11},
		{"select date '2020-13-01'", errs.ErWrongValue, "'2020-13-01' is not a valid DATE literal", 8},
		{"select now('a')", errs.ErWrongArguments, "now's precision must be an integer constant, got 'a'", 12},
		// Group functions.
		{"select sum(count(a)) from t", errs.ErInvalidGroupFuncUse, "aggregate count(a) nested in another aggregate", 12},
		{"select a from t where sum(a) > 1", errs.ErInvalidGroupFuncUse, "aggregate sum(a) is not allowed here", 0},
		{"select a, count(*) from t", errs.ErMixOfGroupFuncAndFields, "column 'a' is not aggregated in a query that aggregates without GROUP BY", 8},
		{"select a, b from t group by a", errs.ErWrongFieldWithGroup, "column 'b' is neither grouped nor aggregated", 11},
		{"select grouping(a) from t group by a", errs.ErInvalidGroupFuncUse, "grouping(a) is only allowed in a query with GROUP BY ... WITH ROLLUP", 8},
		{"select a, grouping(b) from t group by a with rollup", errs.ErFieldInGroupingNotGroupBy, "the argument of grouping(b) is not a GROUP BY expression", 11},
		{"select group_concat(s order by 3) from t", errs.ErBadFieldError, "ORDER BY position 3", 8},
		// Windows and frames.
		{"select group_concat(s) over () from t", errs.ErParseError, "group_concat cannot be a window function", 8},
		{"select sum(a) over w from t window w as (order by a), w as (order by b)", errs.ErWindowDuplicateName, "window w is defined twice", 8},
		{"select sum(a) over (w partition by b) from t window w as (order by a)", errs.ErWindowNoChildPartitioning, "cannot have its own PARTITION BY", 8},
		{"select sum(a) over (w order by b) from t window w as (order by a)", errs.ErWindowNoRedefineOrderBy, "cannot redefine its ORDER BY", 8},
		{"select sum(a) over (w) from t window w as (order by a rows 1 preceding)", errs.ErWindowNoInheritFrame, "window w has a frame", 8},
		{"select sum(a) over w from t window w as (v), v as (w)", errs.ErWindowCircularityInWindowGraph, "refer to each other in a cycle", 8},
		{"select sum(a) over (order by a rows between unbounded following and current row) from t", errs.ErWindowFrameStartIllegal, "cannot start at UNBOUNDED FOLLOWING", 8},
		{"select sum(a) over (order by a rows between current row and unbounded preceding) from t", errs.ErWindowFrameEndIllegal, "cannot end at UNBOUNDED PRECEDING", 8},
		{"select sum(a) over (order by a rows between 1 following and current row) from t", errs.ErWindowFrameIllegal, "the frame's start comes after its end", 8},
		{"select sum(a) over (order by a rows interval 1 day preceding) from t", errs.ErWindowRowsIntervalUse, "a ROWS frame counts rows, not an INTERVAL", 8},
		{"select sum(a) over (order by a rows 1.5 preceding) from t", errs.ErWindowFrameIllegal, "a ROWS frame offset must be a non-negative integer constant, got 1.5", 8},
		{"select sum(a) over (order by a, b range 1 preceding) from t", errs.ErWindowRangeFrameOrderType, "needs exactly one ORDER BY expression", 8},
		{"select sum(a) over (order by s range 1 preceding) from t", errs.ErWindowRangeFrameOrderType, "needs a numeric or date/time ORDER BY key", 8},
		{"select sum(a) over (order by d range 1 preceding) from t", errs.ErWindowRangeFrameTemporalType, "needs an INTERVAL offset", 8},
		{"select sum(a) over (order by a range interval 1 day preceding) from t", errs.ErWindowRangeFrameNumericType, "takes a number, not an INTERVAL", 8},
		// Positions, subqueries, derived tables, joins.
		{"select a from t order by 2", errs.ErBadFieldError, "ORDER BY position 2 is not in the select list (it has 1 columns)", 0},
		{"select a from t group by 3", errs.ErBadFieldError, "GROUP BY position 3 is not in the select list", 0},
		{"select a from t union select b from t order by 2", errs.ErBadFieldError, "ORDER BY position 2 is not in the select list", 0},
		{"select distinct a from t order by b + 1", errs.ErFieldInOrderNotSelect, "is not in the select list of a SELECT DISTINCT", 35},
		{"select a from t where a in (select a, b from t)", errs.ErOperandColumns, "the IN subquery returns 2 columns, expected 1", 23},
		{"select (select a, b from t) from t", errs.ErOperandColumns, "the scalar subquery returns 2 columns, expected 1", 8},
		{"with x (p, q) as (select a from t) select * from x", errs.ErViewWrongList, "x names 2 columns but its query returns 1", 0},
		// Literals and types.
		{"select cast(a as decimal(70, 2)) from t", errs.ErTooBigPrecision, "the precision is at most 65", 8},
		{"select cast(a as decimal(5, 6)) from t", errs.ErMBiggerThanD, "the scale must not exceed the precision", 8},
		{"select cast(a as decimal(50, 2)) from t", errs.ErNotSupportedYet, "fsql's DECIMAL holds at most 38 digits", 8},
		{"select 1234567890123456789012345678901234567890.5", errs.ErNotSupportedYet, "has more than 38 digits", 8},
		{"select timestampadd(day, 1)", errs.ErParseError, "", -1}, // the parser checks most argument counts itself
	} {
		stmts, err := sql.Parse(c.q)
		if err == nil {
			_, err = sql.NewBinder(cat).BindEnv(context.Background(), stmts[0], sql.Env{Source: c.q})
		}
		if err == nil {
			t.Errorf("%q: no error, want %s", c.q, c.want.Name)
			continue
		}
		if !errors.Is(err, c.want) || errs.KindOf(err) != c.want.Kind {
			code, state := errs.CodeOf(err)
			t.Errorf("%q: %v (%s %d %s), want %s (%d %s)", c.q, err, errs.KindOf(err), code, state, c.want.Name, c.want.Code, c.want.SQLState)
			continue
		}
		if code, state := errs.CodeOf(err); code != c.want.Code || state != c.want.SQLState {
			t.Errorf("%q: code %d %s, want %d %s", c.q, code, state, c.want.Code, c.want.SQLState)
		}
		if !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%q: message %q, want it to contain %q", c.q, err.Error(), c.msg)
		}
		if strings.Contains(err.Error(), "invalid query: ") {
			t.Errorf("%q: message %q has the generic prefix", c.q, err.Error())
		}
		p := errs.PositionOf(err)
		switch {
		case c.col < 0:
		case c.col == 0 && p != nil:
			t.Errorf("%q: position %v, want none", c.q, *p)
		case c.col > 0 && (p == nil || p.Line != 1 || p.Column != c.col):
			t.Errorf("%q: position %v, want line 1 column %d", c.q, p, c.col)
		case c.col > 0 && !strings.HasSuffix(err.Error(), " at "+p.String()):
			t.Errorf("%q: message %q does not end with its position", c.q, err.Error())
		}
	}
}
