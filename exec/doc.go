// Package exec is fsql's vectorized executor: physical operators over Arrow
// record batches (one per file), the Node and Stream contracts, the
// TaskContext a running task gives its streams, per-operator statistics
// and the query's memory budget.
//
// A physical plan is a tree of immutable Nodes. A task opens the nodes of
// its stage into Streams and pulls batches from the root; all per-task
// state lives in the streams. Cutting plans into stages, shuffling rows
// between them and scheduling tasks belong to packages runtime and
// shuffle, which learn what they need of a node from the small
// declaration interfaces in declarations.go, never from its concrete
// type.
package exec
