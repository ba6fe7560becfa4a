package fsql

import (
	"github.com/fsql-dev/fsql/connectors/hive"
	"github.com/fsql-dev/fsql/exec"
)

// WithPlanHook returns a copy of the engine whose physical plans pass
// through hook before they run (or EXPLAIN prints them). hook gets the
// engine's catalog, to resolve the tables of a decoded plan from.
func (e *Engine) WithPlanHook(hook func(root exec.Node, cat *hive.Catalog) (exec.Node, error)) *Engine {
	c := *e
	c.planHook = hook
	return &c
}
