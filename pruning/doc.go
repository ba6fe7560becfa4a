// Package pruning decides what a scan may skip before it reads a byte.
//
// Static pruning works from the query alone: StaticPartitions evaluates the
// partition-only conjuncts of a WHERE clause against the partition folder
// values, and RowGroupFilter proves conjuncts false from the min/max and
// null-count statistics in Parquet footers. Both are conservative: when in
// doubt they keep. Dynamic partition pruning (values collected from the
// dimension side of a join at run time) lives here too, later.
package pruning
