// Package querygen generates random SQL queries over a described schema,
// and the metamorphic variants of a query that must return the same rows.
//
// A query is built as a small syntax tree (Select, SetOp, Expr) and
// rendered in one of two dialects: MySQL, the language fsql speaks, and
// DuckDB, the differential oracle's (tools/oracle). The generator only
// builds constructs on which the two engines' semantics agree, and the
// DuckDB rendering normalises the few that are spelt or typed differently:
// division and modulo by zero (NULL in MySQL, infinity in DuckDB: the
// divisor is wrapped in nullif), integer arithmetic (MySQL computes in
// BIGINT, DuckDB in the operands' width and overflows), date plus interval
// (DuckDB returns a timestamp), CONCAT with a NULL (DuckDB skips it), the
// null-safe equality <=>, DIV, casts, ROLLUP, DATEDIFF's argument order,
// COLLATE utf8mb4_general_ci (NOCASE over the text without trailing
// spaces) and a set operation's decimal arms (one wide type, where DuckDB
// would round one arm to the other's scale). NULL order is the session's
// business (the oracle sets MySQL's). What cannot be normalised
// is not generated, or only where it cannot change which rows come back:
// inexact values (`/`, AVG, STDDEV_SAMP: decimals with 4 more digits of
// scale in MySQL, doubles in DuckDB) appear only as output columns of
// aggregate queries, never under a filter, an ORDER BY, a window or
// another aggregate; ROW_NUMBER, lag/lead, first/last_value, ntile and
// ROWS frames only order on a unique key, so ties cannot make an answer
// ambiguous (RANGE frames and ranks treat peers alike); every LIMIT and
// OFFSET sits under an ORDER BY that is total on the output;
// case-insensitive values are compared, never sorted or grouped; a
// derived table's LIMIT (like a scalar subquery's ORDER BY ... LIMIT 1)
// sits under an ORDER BY on every column it returns; PERCENT_RANK and
// CUME_DIST (doubles) are output columns of the statement only.
//
// Besides joins along foreign keys, filters and aggregates, it writes
// outer joins whose ON tests either side alone or compares the sides
// beside the key, derived tables of rows (a window, DISTINCT, a top-N) or
// of set operations filtered from outside, set operations of three blocks
// and inside IN, EXISTS and IN over grouped subqueries with HAVING and
// EXISTS over an aggregate, simple and many-branch CASE with NULL
// branches, IS [NOT] TRUE/FALSE, integers compared with decimals,
// COUNT(DISTINCT a, b) (DuckDB: DISTINCT rows of the non-NULL
// combinations), GROUPING() under ROLLUP (and a LIMIT over ROLLUP's
// rows, ordered by the keys and GROUPING() of each), NTH_VALUE,
// PERCENT_RANK, CUME_DIST, RANGE frames over dates, any window over
// grouped rows (SUM(SUM(x)) OVER, LAG ordered on the group keys), typed
// NULL arguments (CAST(NULL AS ...)) inside expressions, and date
// arithmetic in its four spellings.
//
// Metamorphic relations (metamorphic.go) need no second engine: ternary
// logic partitioning (TLP, after SQLancer: a query's rows are the union of
// its rows under p, NOT p and p IS NULL) in four forms, and the
// non-optimizing reference engine construction (NoREC: a filter's row
// count equals a sum over CASE WHEN of the same predicate).
//
// Everything is driven by a Source: a seeded generator for reproducible
// runs, or the fuzzer's bytes (BytesSource), so one grammar serves the
// differential run, the metamorphic tests and the fuzz target. Small
// (small.go) writes a NULL-rich star schema with small tables for tests
// that run the queries.
package querygen
