// Package pruning decides what a scan may skip before it reads a byte.
//
// Static pruning works from the query alone: StaticPartitions evaluates the
// partition-only conjuncts of a WHERE clause against the partition folder
// values, and RowGroupFilter proves conjuncts false from the min/max and
// null-count statistics in Parquet footers. Both are conservative: when in
// doubt they keep.
//
// Dynamic partition pruning works from the data: a Coordinator (one per
// run of a plan, created by the runtime) gathers, by collector ID, the
// join keys that exec.DynamicFilterDataCollector nodes see on the
// dimension side of a join, exactly while they are few and as a bloom
// filter plus min/max past CoordinatorConfig.MaxValues, and Prune turns
// them into the Decision of a fact scan: the partitions, row groups and
// rows it may skip. Plans hold only the IDs and Targets; everything with
// state lives in the coordinator. An incomplete filter is an error, never
// a guess.
//
// The package sits below exec (exec's scans and collectors call it) and
// has its own sentinel errors, which exec maps onto its own.
package pruning
