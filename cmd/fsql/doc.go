// Command fsql runs SQL over a folder of Hive-partitioned Parquet tables.
//
//	fsql -e "select count(*) from store_sales"     run statements given inline
//	fsql -f script.sql                             run a file of ;-separated statements
//	fsql                                           interactive prompt (.help)
//	fsql gen tpcds ...                             write a TPC-DS data set
//	fsql bench tpcds --scale 1                     time TPC-DS queries
//
// Without --data, fsql uses a scale-0.01 TPC-DS data set in the user cache
// folder and writes it the first time, so a fresh machine can run a query
// with no setup. Results print as an aligned table, CSV or JSON Lines
// (--format); EXPLAIN output prints as its raw text. Errors print one line
// and exit with status 1: "fsql: ERROR <number> (<SQLSTATE>) <kind>:
// <message>" for the engine's (the MySQL number and kind of package fsql;
// the message names the statement and its line and column), "fsql:
// <message>" for a mistake on the command line; Ctrl-C exits with 130.
//
// On a terminal the prompt edits lines (liner: history file, Tab
// completion of keywords, tables and columns), Ctrl-C clears the line or
// cancels the running statement, and meta-commands (meta.go) list tables
// and change the output. Results on a terminal are bounded (the first and
// last rows), cut to its width and followed by their time; a query running
// over a second draws a progress bar on stderr (progress.go) from
// fsql.Rows.Progress. Pipes and files get complete, plain output.
package main
