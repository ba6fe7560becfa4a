// Package slt reads sqllogictest-style test files (.slt) and writes the
// tables they declare as Parquet, so a test can run the file's queries
// against a real data directory.
//
// A file is a sequence of records separated by blank lines. Lines starting
// with # are comments. The records:
//
//	table t (a int, b bigint, c decimal(7,2), d varchar, e date, f double, g boolean)
//	1	10	1.50	x	2000-01-01	1.5	true
//	NULL	NULL	NULL	NULL	NULL	NULL	NULL
//
// declares table t and its rows, one per line, values separated by tabs.
// The block ends at a blank line or a line "----". NULL is NULL and
// (empty) is the empty string. Types: int (INT32), bigint (INT64),
// decimal(p,s) with p <= 18 (DECIMAL stored as INT32 up to 9 digits, INT64
// up to 18), varchar (STRING), date (DATE, written YYYY-MM-DD), double
// (DOUBLE), boolean (BOOLEAN, true/false). Every column is optional.
//
//	partitioned table p (k int, v varchar) by (k)
//
// declares a table written Hive-partitioned: one folder k=<value> per
// distinct value of the by-columns (NULL goes to
// __HIVE_DEFAULT_PARTITION__), the by-columns left out of the files. The
// reader types partition columns from the folder names, so an int column
// there comes back as int and a date as date.
//
//	query ITR rowsort
//	SELECT a, d, c FROM t
//	----
//	1	x	1.50
//
// runs a query and compares its rows with the lines after "----" (up to
// the next blank line; none means an empty result). The letters give one
// type per result column: I integer, R float or decimal, T text, D date,
// B boolean; the runner checks both the count and the kinds. Values are
// rendered as the CLI's table format renders them (internal/format):
// decimals at their scale, dates YYYY-MM-DD, NULL as NULL, (empty) for the
// empty string, columns separated by tabs. The optional sort mode is
// nosort (the default: compare in the order returned; use it only with a
// total ORDER BY) or rowsort (sort the rendered lines before comparing).
//
//	statement ok
//	SELECT ...
//
// runs a statement and expects it to succeed, ignoring its rows.
//
//	statement error more than one row
//	SELECT ...
//
// runs a statement and expects an error whose message contains the text
// after "error" (case-insensitive); with no text, any error will do.
//
// Tables are written before any query runs, whatever their place in the
// file. File.Rewrite renders a file again with new expected results, for
// test runners' -rewrite flags.
package slt
