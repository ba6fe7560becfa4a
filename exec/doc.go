// Package exec is fsql's vectorized executor: physical operators over Arrow
// record batches, exchanges that shuffle rows by key group, and the scheduler
// that cuts a plan into stages and runs their tasks on worker slots.
//
// A physical plan is a tree of immutable Nodes. A task opens the nodes of
// its stage into Streams and pulls batches from the root; all per-task
// state lives in the streams.
package exec
