package sql

import (
	"fmt"
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
		return nil, fmt.Errorf("%w: syntax error: %s", exec.ErrPlan, strings.TrimPrefix(err.Error(), "[parser:1064]"))
	}
	if len(stmts) == 0 {
		return nil, fmt.Errorf("%w: empty statement", exec.ErrPlan)
	}
	return stmts, nil
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
