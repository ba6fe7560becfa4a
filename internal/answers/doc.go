// Package answers reads, writes and compares golden query answers.
//
// The TPC-DS golden answers under testdata/tpcds/answers are produced by an
// independent engine (DuckDB, see tools/oracle) and checked against fsql's
// results. The format is a typed text file so a reviewer can read a diff, and
// so NULL, the empty string and the types survive the round trip:
//
//	# columns: c_customer_id:string, total:decimal(17,2), n:int64
//	# ordered: true
//	# order-keys: 0,2
//	AAAAAAAABAAAAAAA	12.50	3
//	\N		0
//
// One line per row, fields separated by a tab. NULL is \N; in strings a tab,
// newline, carriage return and backslash are escaped as \t, \n, \r and \\ (so
// an empty field is the empty string, never NULL). Decimals are written at
// their scale, floats with the shortest representation that reads back to
// the same float64, dates as YYYY-MM-DD, booleans as true/false.
//
// "ordered" says the query has a top-level ORDER BY. "order-keys" lists the
// output columns (0-based) the ORDER BY sorts on, as far as the oracle could
// map them; rows that are equal on those columns may legitimately come out in
// any order, so Compare treats each run of such rows as a multiset. An empty
// key list with ordered: true means the whole result is one run.
package answers
