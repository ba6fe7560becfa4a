// Package fsql is the embedding API of the fsql query engine: open an
// Engine over a directory of Hive-partitioned Parquet tables, run
// MySQL-dialect SQL with a context, and stream the answer as Arrow record
// batches. Cancelling the context stops every task of the query.
package fsql
