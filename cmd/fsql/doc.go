// Command fsql runs SQL over a folder of Hive-partitioned Parquet tables.
//
//	fsql -e "select count(*) from store_sales"     run statements given inline
//	fsql -f script.sql                             run a file of ;-separated statements
//	fsql                                           interactive prompt
//	fsql gen tpcds ...                             write a TPC-DS data set
//	fsql bench tpcds --scale 1                     time TPC-DS queries
//
// Without --data, fsql uses a scale-0.01 TPC-DS data set in the user cache
// folder and writes it the first time, so a fresh machine can run a query
// with no setup. Results print as an aligned table, CSV or JSON Lines
// (--format); EXPLAIN output prints as its raw text. Errors print one line,
// "fsql: <message>", and exit with status 1. Ctrl-C cancels the running
// query.
package main
