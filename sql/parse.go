package sql

import (
	"regexp"
	"strings"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	_ "github.com/pingcap/tidb/pkg/parser/test_driver" // literal values

	"github.com/fsql-dev/fsql/errs"
)

// Parse parses a script of one or more statements.
func Parse(text string) ([]ast.StmtNode, error) {
	p := parser.New()
	p.SetSQLMode(mysql.ModePipesAsConcat | mysql.ModeIgnoreSpace)
	stmts, _, err := p.Parse(text, "", "")
	if err != nil {
		return nil, parseError(text, err)
	}
	if len(stmts) == 0 {
		return nil, errs.New(errs.ErEmptyQuery, "empty statement")
	}
	return stmts, nil
}

// setDashed finds SET key = ... with an unquoted '-' in the key, which
// MySQL's grammar reads as a minus: SET execution.memory.query-budget,
// also as a later assignment (SET a = 1, csv.field-delimiter = ';').
var (
	setStatement = regexp.MustCompile(`(?is)^\s*set\s`)
	setDashed    = regexp.MustCompile(`(?is)^\s*(?:session\s+|local\s+|@@(?:session\.|local\.)?)?([a-z_][\w.]*-[\w.-]*)\s*(?::=|=)`)
)

// dashedSetKey returns the first such key in a script that failed to
// parse, or "". It splits the script at every ';' and a SET at every ','
// (quotes are not tracked: a hint, not a parse).
func dashedSetKey(text string) string {
	for _, stmt := range strings.Split(text, ";") {
		loc := setStatement.FindStringIndex(stmt)
		if loc == nil {
			continue
		}
		for _, a := range strings.Split(stmt[loc[1]:], ",") {
			if m := setDashed.FindStringSubmatch(a); m != nil {
				return m[1]
			}
		}
	}
	return ""
}

// Split splits a script into the text of its statements.
func Split(text string) ([]string, error) {
	stmts, err := Parse(text)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(stmts))
	for i, s := range stmts {
		out[i] = strings.TrimSpace(s.Text())
	}
	return out, nil
}
