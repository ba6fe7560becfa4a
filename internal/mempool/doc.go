// Package mempool is a memory.Allocator that recycles Arrow buffers.
//
// The Go allocator hands every Arrow buffer fresh memory: it is zeroed,
// often page-faulted in, and later traced and freed by the garbage
// collector. A scan that builds batch after batch of the same shape pays
// that for every batch although the previous batch's buffers were released
// moments before. Pool keeps released buffers in power-of-two size classes
// (one sync.Pool each) and hands them out again, cleared.
//
// A pooled buffer is reused as soon as its last reference is released, so a
// caller that keeps reading a buffer (or a string aliasing it) after
// releasing it sees another batch's bytes instead of stale but intact ones.
// Pool.Poison makes such bugs loud in tests.
package mempool
