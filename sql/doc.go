// Package sql parses MySQL-dialect SQL with the TiDB parser (modes
// PIPES_AS_CONCAT and IGNORE_SPACE), binds every name and type against the
// catalog, and builds the logical plan the planner optimizes.
//
// Binding follows MySQL: names resolve innermost scope first, GROUP BY and
// ORDER BY may name select-list aliases or positions, NULL sorts first
// ascending, and anything the engine cannot run fails with an error that
// names the construct (wrapping exec.ErrNotImplemented) rather than being
// approximated.
package sql
