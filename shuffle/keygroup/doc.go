// Package keygroup maps key hashes to key groups and key groups to tasks,
// following Flink's KeyGroupRangeAssignment.
//
// A key group is the unit of shuffle: every producer task writes one
// subpartition per key group, and consumer task i of p reads the contiguous
// key-group range Range(maxParallelism, p, i). The number of key groups
// (maxParallelism) is fixed when the plan is made, which is what lets the
// scheduler pick a consumer stage's parallelism after its producers ran.
package keygroup
