// Package suggest finds the known names closest to a mistyped one, for
// the "did you mean ...?" of error messages: unknown columns and tables
// (sql), functions (the function registry) and configuration keys (fsql).
//
// Closeness is the optimal-string-alignment distance over lower-cased
// runes (an insertion, deletion, substitution or swap of two adjacent
// characters costs 1). A name is suggested only when the distance is small
// for its length (1 up to 3 characters, 2 up to 8, 3 beyond), so short
// names do not attract unrelated ones, and only the nearest candidates are
// named. A known dotted name whose last segments are the typed name
// (query-budget for execution.memory.query-budget) counts as one edit
// away.
package suggest
