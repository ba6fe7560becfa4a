package sql

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	_ "github.com/pingcap/tidb/pkg/parser/test_driver" // literal values

	"github.com/fsql-dev/fsql/exec"
)

// Parse parses a script of one or more statements.
func Parse(text string) ([]ast.StmtNode, error) {
	p := parser.New()
	p.SetSQLMode(mysql.ModePipesAsConcat | mysql.ModeIgnoreSpace)
	stmts, _, err := p.Parse(text, "", "")
	if err != nil {
		// The TiDB message already says "line L column C near ...".
		msg := strings.TrimSpace(strings.TrimPrefix(err.Error(), "[parser:1064]"))
		if at, ok := fullOuterJoinAt(msg); ok {
			return nil, fmt.Errorf("%w: FULL OUTER JOIN (%s): it is not MySQL syntax and fsql does not run it; write the LEFT JOIN plus the right side's unmatched rows: "+
				"SELECT ... FROM a LEFT JOIN b ON a.k = b.k UNION ALL SELECT ... FROM b WHERE NOT EXISTS (SELECT 1 FROM a WHERE a.k = b.k) "+
				"(or, when rows are distinct, ... LEFT JOIN ... UNION ... RIGHT JOIN ...)", exec.ErrNotImplemented, at)
		}
		if key := dashedSetKey(text); key != "" {
			msg += fmt.Sprintf("; a key with '-' is written in backquotes: SET `%s` = ...", key)
		}
		return nil, fmt.Errorf("%w: syntax error: %s", exec.ErrPlan, msg)
	}
	if len(stmts) == 0 {
		return nil, fmt.Errorf("%w: empty statement", exec.ErrPlan)
	}
	return stmts, nil
}

// The parser stops at OUTER in `a FULL OUTER JOIN b` (FULL is read as an
// alias of a); its message is then "line L column C near "outer join ...".
var nearOuterJoin = regexp.MustCompile(`(?is)^.*?(line \d+ column \d+) near "outer\s+join\b`)

// fullOuterJoinAt recognises that syntax error and returns its position.
// (Without OUTER, `a FULL JOIN b` parses; the binder rejects the alias.)
func fullOuterJoinAt(msg string) (string, bool) {
	m := nearOuterJoin.FindStringSubmatch(msg)
	if m == nil {
		return "", false
	}
	return m[1], true
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
