// Package shuffle moves rows between stages: the Exchange plan node that
// marks a stage boundary, key groups (package keygroup), the subpartition
// store that holds what producer tasks wrote, the writer that routes a
// producer's rows to key groups, and the readers that hand a consumer task
// its share.
//
// The runtime (package runtime) cuts plans at Exchange nodes and drives
// both sides: a producer task writes through a Writer into the exchange's
// Buffer, and a consumer task reads its key-group slices through
// OpenReader: once every producer finished (blocking shuffle), or while
// they run, each producer task's output as it is committed (hybrid). Operators never see an Exchange:
// to them a reader is one more input Stream.
//
// Output waiting for its consumers is charged to the query's memory
// budget and, with spilling on, written to spill files when the budget is
// tight and read back per key-group range (spill.go).
package shuffle
