// Package kernels holds fsql's own typed gather (Take) and filter kernels
// over Arrow arrays: one typed loop per physical layout (bit-packed
// booleans, fixed-width values of 1 to 32 bytes, strings and binaries with
// 32- or 64-bit offsets, NULL-typed arrays, extension arrays by their
// storage) and the validity bitmaps beside them.
//
// Why not arrow-go's compute package: its executor starts a goroutine, a
// context and a channel for every column of every batch, and allocates an
// index array per call; on the batch sizes fsql moves (about a thousand to
// a few thousand rows) that overhead costs several times the copy itself
// (BenchmarkTake and BenchmarkFilter in this package measure both paths in
// one run). The kernels here are plain loops on the caller's goroutine,
// take their indexes as a []int32 (a selection vector) and allocate every
// output buffer from the caller's allocator, so memory accounting sees it.
//
// Conventions shared by every kernel:
//   - An index below zero yields a NULL row (outer joins' unmatched side);
//     indexes must otherwise be below the input's length (callers build
//     them from the input), so no bounds are checked per row.
//   - Inputs may be slices (a non-zero array offset); outputs never are.
//   - A mask row that is NULL counts as false, as in SQL's WHERE.
//   - Outputs own new buffers, except where a filter can return its input
//     or a slice of it without copying (FilterBatch says when).
//   - A gathered string or binary column's data buffer has 16 bytes of
//     slack past its last value: short values move as two 8-byte words
//     rather than through a call to memmove, and a run of consecutive
//     source rows (a probe side most of whose rows matched) moves in one
//     copy (take_binary.go).
//
// Types fsql never produces (dictionaries, nested types) fall back to the
// compute package, so a kernel never fails on a valid input.
package kernels
