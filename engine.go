package fsql

import (
	"context"
	"fmt"

	"github.com/fsql-dev/fsql/exec"
)

// Open returns an engine over dir, a folder with one sub-folder per table.
func Open(dir string, cfg Config) (*Engine, error) {
	return &Engine{dir: dir, cfg: cfg}, nil
}

// Query parses, plans and starts one SQL statement (SELECT, WITH, or
// EXPLAIN [ANALYZE] of one of those) and returns its rows. EXPLAIN returns
// one string column named "plan".
func (e *Engine) Query(ctx context.Context, query string) (*Rows, error) {
	return nil, fmt.Errorf("%w: query planning is not wired yet", exec.ErrNotImplemented)
}

// SplitStatements splits a script into its ';'-separated statements,
// honouring quotes and comments.
func SplitStatements(script string) ([]string, error) {
	return nil, fmt.Errorf("%w: statement splitting is not wired yet", exec.ErrNotImplemented)
}
