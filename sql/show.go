package sql

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/planner"
)

// bindShow binds a SHOW statement to a constant relation. Each form is one
// case returning its rows; SHOW BUILTINS reads the function registry.
func (b *Binder) bindShow(s *ast.ShowStmt) (*Statement, error) {
	switch s.Tp {
	case ast.ShowBuiltins:
		rows := Builtins()
		out := make([][]string, len(rows))
		for i, r := range rows {
			out[i] = []string{r[0], r[1]}
		}
		return textRelation([]string{"name", "kind"}, out), nil
	}
	return nil, fmt.Errorf("%w: SHOW statement %q (supported: SHOW BUILTINS)", exec.ErrNotImplemented, restore(s))
}

// textRelation is a statement yielding rows of VARCHAR columns.
func textRelation(names []string, rows [][]string) *Statement {
	cols := make(planner.Schema, len(names))
	for i, n := range names {
		cols[i] = planner.Column{Name: n, Type: arrow.BinaryTypes.String}
	}
	vals := make([][]expr.Expr, len(rows))
	for i, r := range rows {
		vals[i] = make([]expr.Expr, len(r))
		for j, v := range r {
			vals[i][j] = expr.NewLiteral(v, arrow.BinaryTypes.String)
		}
	}
	return &Statement{Plan: &planner.Values{Rows: vals, Cols: cols}, Names: names}
}
