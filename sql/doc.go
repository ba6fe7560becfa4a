// Package sql parses MySQL-dialect SQL with the TiDB parser (modes
// PIPES_AS_CONCAT and IGNORE_SPACE), binds every name and type against the
// catalog, and builds the logical plan the planner optimizes.
//
// Binding follows MySQL: names resolve innermost scope first, GROUP BY and
// ORDER BY may name select-list aliases or positions, NULL sorts first
// ascending, and anything the engine cannot run fails with an error that
// names the construct and what to write instead (errs.Unsupported, MySQL's
// 1235) rather than being approximated. Errors about the statement carry
// its line and column: an expression's start, which the parser records;
// for a clause, whose position the parser does not keep, the keyword that
// starts it (keywordOffset), else the innermost enclosing expression; for
// a table, its name (tableOffset).
package sql
