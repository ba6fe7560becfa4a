// Package pruning decides what a scan may skip before it reads a byte.
//
// Static pruning works from the query alone: StaticPartitions evaluates the
// partition-only conjuncts of a WHERE clause against the partition folder
// values, and RowGroupFilter proves conjuncts false from the min/max and
// null-count statistics in Parquet footers. Both are conservative: when in
// doubt they keep.
//
// Dynamic partition pruning works from the data: a Coordinator (one per
// query) gathers the join keys that exec.DynamicFilterDataCollector nodes
// see on the dimension side of a join, exactly while they are few and as
// a bloom filter plus min/max past CoordinatorConfig.MaxValues, and its
// Pruner turns them into the partitions, row groups and rows a fact scan
// may skip. An incomplete filter is an error, never a guess.
package pruning
