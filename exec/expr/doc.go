// Package expr holds fsql's bound scalar expressions and their vectorized
// evaluation over Arrow arrays, with MySQL semantics: SQL three-valued logic,
// exact decimal arithmetic (division raises the scale by 4, overflow past
// precision 38 is an error), rounding half away from zero, and NULL for
// division by zero.
package expr
