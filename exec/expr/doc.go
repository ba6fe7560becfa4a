// Package expr holds fsql's bound scalar expressions and their vectorized
// evaluation over Arrow arrays, with MySQL semantics: SQL three-valued logic,
// exact decimal arithmetic (division raises the scale by 4, overflow past
// precision 38 is an error), rounding half away from zero, and NULL for
// division by zero.
//
// NewCall binds a function by name (one family per file: arith.go,
// compare.go, logic.go, cond.go, in.go, like.go, cast.go and
// cast_temporal.go, strings.go and strfuncs.go, dates.go, datefuncs.go and
// datefmt.go, math.go and mathfuncs.go, greatest.go, sortkey.go for
// GROUP_CONCAT's argument): it checks the arguments, inserts the implicit casts
// MySQL applies and fixes the result type, so kernels only ever see the
// types they were built for. Kernels work on whole arrays (typed value
// slices and validity bitmaps); a literal operand of a binary operator is
// read as a scalar, not copied per row.
//
// Where MySQL is lenient fsql is strict and says so: strings compare and
// match LIKE byte-wise unless an explicit COLLATE says otherwise
// (collation.go), and a string read as a number must be one (number.go):
// otherwise it is an error naming the value, not a silent 0 or NULL.
// CASE, COALESCE, AND and OR evaluate an argument only for the rows that
// reach it (lazy.go), so such an error counts only where it matters.
// Every NULL test goes through IsNull/Validity (nulls.go).
package expr
