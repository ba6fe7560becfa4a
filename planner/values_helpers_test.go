package planner

import (
	"testing"

	"github.com/fsql-dev/fsql/exec/expr"
)

// nullValues is a Values input of rows rows of NULLs: a relation whose
// size the estimates read, for rules tested on hand-built plans.
func nullValues(rows int, cols ...Column) *Values {
	v := &Values{Cols: cols}
	for range rows {
		row := make([]expr.Expr, len(cols))
		for i, c := range cols {
			row[i] = expr.Null(c.Type)
		}
		v.Rows = append(v.Rows, row)
	}
	return v
}

// colNamed is the column of p's output named name.
func colNamed(t *testing.T, p Plan, name string) *expr.Column {
	t.Helper()
	for i, c := range p.Schema() {
		if c.Name == name {
			return expr.NewColumn(i, c.Type, c.Name)
		}
	}
	t.Fatalf("no column %s", name)
	return nil
}

// callOf is the call fn(args...), failing the test when it does not bind.
func callOf(t *testing.T, fn string, args ...expr.Expr) expr.Expr {
	t.Helper()
	e, err := expr.NewCall(fn, args...)
	if err != nil {
		t.Fatal(err)
	}
	return e
}
