package sql

import (
	"fmt"
	"strings"

	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/planner"
)

// scope is the set of columns a name can resolve to: the output columns of
// the plan built so far, positionally. outer is the enclosing query's scope
// (for correlated subqueries).
type scope struct {
	cols  planner.Schema
	outer *scope
	// outerRefs collects references this scope's query made to outer,
	// so subquery binding can tell correlated from uncorrelated.
	outerRefs []outerRef
}

type outerRef struct {
	index int // column index in outer.cols
	col   *expr.Column
}

func newScope(s planner.Schema, outer *scope) *scope { return &scope{cols: s, outer: outer} }

// resolve finds the column table.name. It returns the column's index in
// this scope, or -1 with found outer set when it lives in an outer scope.
func (s *scope) resolve(table, name string) (int, error) {
	idx := -1
	for i, c := range s.cols {
		if !strings.EqualFold(c.Name, name) {
			continue
		}
		if table != "" && !strings.EqualFold(c.Table, table) {
			continue
		}
		if idx >= 0 {
			return -1, fmt.Errorf("%w: column '%s' is ambiguous; qualify it with a table name", exec.ErrPlan, qualified(table, name))
		}
		idx = i
	}
	if idx >= 0 {
		return idx, nil
	}
	return -1, nil
}

func qualified(table, name string) string {
	if table == "" {
		return name
	}
	return table + "." + name
}

func (s *scope) column(i int) *expr.Column {
	c := s.cols[i]
	return expr.NewColumn(i, c.Type, qualified(c.Table, c.Name))
}
