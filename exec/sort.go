package exec

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/spill"
)

// SortKey is one ORDER BY item. The planner passes NullsFirst = !Desc, which
// is MySQL's order (NULL is the smallest value).
type SortKey struct {
	Expr       expr.Expr
	Desc       bool
	NullsFirst bool
}

func (k SortKey) String() string {
	s := k.Expr.String()
	if k.Desc {
		s += " DESC"
	}
	if k.NullsFirst {
		s += " NULLS FIRST"
	} else {
		s += " NULLS LAST"
	}
	return s
}

func sortKeyList(keys []SortKey) string {
	s := make([]string, len(keys))
	for i, k := range keys {
		s[i] = k.String()
	}
	return strings.Join(s, ", ")
}

// Sort orders all rows of its input by Keys. It buffers its input
// (reserved as "sort" in the memory budget), sorts a permutation of row
// indexes with comparators specialised per key type, and gathers the
// output in batches. Past its share of the budget it becomes an external
// sort: the buffer is sorted and written to disk as a run, and at the end
// the runs (and what is left in memory) are merged k-way, in rounds when
// there are more runs than its share can hold a batch of at once.
type Sort struct {
	Child Node
	Keys  []SortKey
}

// Schema implements Node.
func (s *Sort) Schema() *arrow.Schema { return s.Child.Schema() }

// Children implements Node.
func (s *Sort) Children() []Node { return []Node{s.Child} }

// String implements Node.
func (s *Sort) String() string { return "Sort(" + sortKeyList(s.Keys) + ")" }

// Open implements Node.
func (s *Sort) Open(tc *TaskContext, inputs []Stream) (Stream, error) {
	if len(inputs) != 1 {
		return nil, fmt.Errorf("%w: Sort wants 1 input, got %d", ErrInternal, len(inputs))
	}
	return &sortStream{buf: newSortBuffer(tc, s.Child.Schema(), s.Keys, "sort", -1), in: inputs[0]}, nil
}

type sortStream struct {
	buf    *sortBuffer
	in     Stream
	sorted bool
}

func (s *sortStream) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !s.sorted {
		if err := s.buf.drain(ctx, s.in); err != nil {
			return nil, err
		}
		s.in.Close()
		s.in = nil
		if err := s.buf.finish(ctx, 0); err != nil {
			return nil, err
		}
		s.sorted = true
	}
	return s.buf.next(ctx)
}

func (s *sortStream) Close() {
	if s.in != nil {
		s.in.Close()
		s.in = nil
	}
	s.buf.release()
}

// sortBuffer collects batches, sorts them and hands out sorted batches;
// Sort, TopN and Window share it. In memory it holds the input batches
// and, once sorted, the sorted columns. Past its reservation's share it
// spills sorted runs and merges them at the end.
type sortBuffer struct {
	tc     *TaskContext
	ec     *expr.Context
	schema *arrow.Schema
	keys   []SortKey
	who    string
	limit  int // rows to keep (top-N); < 0 all
	// spillRest writes the rows still in memory at the end as a last run
	// when the buffer spilled, so its consumer (a window) has the share
	// for itself rather than for rows waiting to be merged.
	spillRest bool
	// keep, when set, filters the sorted permutation before rows are
	// gathered (a window's RankLimit); the buffer then compacts itself
	// as a top-N buffer does, at twice the rows it kept last time
	// (keptRows) and before it would spill, counting the rows its
	// compactions read and kept.
	keep                      func(keys []arrow.Array, perm []int32) ([]int32, error)
	keptRows                  int
	compactedIn, compactedOut int
	res                       *Reservation
	batches                   []arrow.RecordBatch
	rows                      int
	// after sort: the sorted columns
	cols []arrow.Array
	n    int
	// spilled runs, in input order, and the largest record written
	runs   []*spill.File
	maxRec int64
	passes int
	// output: the position in cols, or the merge of the runs
	pos     int
	merged  *merger
	pending arrow.RecordBatch // the rest of a batch cut by OFFSET
}

func newSortBuffer(tc *TaskContext, schema *arrow.Schema, keys []SortKey, who string, limit int) *sortBuffer {
	return &sortBuffer{tc: tc, ec: exprContext(tc), schema: schema, keys: keys, who: who, limit: limit, res: tc.reservation(who, true)}
}

// sortCost is what a buffered batch is charged: its bytes, as much again
// for the sorted copy sorting makes before the input is released, and the
// permutation.
func sortCost(b arrow.RecordBatch) int64 { return 2*recordBytes(b) + 8*b.NumRows() }

// drain reads the whole input. A top-N buffer (limit >= 0) is sorted and
// cut to limit rows whenever it holds twice that many.
func (b *sortBuffer) drain(ctx context.Context, in Stream) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		batch, err := in.Next(ctx)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := b.add(ctx, batch); err != nil {
			return err
		}
	}
}

// add buffers one batch, which it owns, spilling a run first when the
// reservation refuses it.
func (b *sortBuffer) add(ctx context.Context, batch arrow.RecordBatch) error {
	if batch.NumRows() == 0 {
		batch.Release()
		return nil
	}
	cost := sortCost(batch)
	for {
		err := b.res.Grow(cost)
		if err == nil {
			break
		}
		if !b.tc.canSpill(err) {
			batch.Release()
			return err
		}
		if b.keep != nil && b.rows > b.keptRows {
			// A rank-limited buffer first drops the rows its limit
			// drops: usually most of them, and no file is written.
			if err := b.compactRanked(); err != nil {
				batch.Release()
				return err
			}
			continue
		}
		if len(b.batches) == 0 {
			// Not even this batch fits: it is a run of its own, sorted
			// with no more memory than the batch in flight.
			b.batches = []arrow.RecordBatch{batch}
			b.rows = int(batch.NumRows())
			return b.spillRun(ctx)
		}
		if err := b.spillRun(ctx); err != nil {
			batch.Release()
			return err
		}
	}
	b.batches = append(b.batches, batch)
	b.rows += int(batch.NumRows())
	if b.limit >= 0 && b.rows >= max(2*b.limit, BatchSize) {
		return b.compact()
	}
	if b.keep != nil && b.rows >= max(2*b.keptRows, rankCompactRows) {
		return b.compactRanked()
	}
	return nil
}

// compactRanked compacts a rank-limited buffer and counts what it read and
// kept.
func (b *sortBuffer) compactRanked() error {
	in := b.rows
	if err := b.compact(); err != nil {
		return err
	}
	b.compactedIn += in
	b.compactedOut += b.rows
	b.keptRows = b.rows
	return nil
}

// compact sorts a top-N buffer and keeps its first limit rows (or a
// rank-limited one and keeps the rows its limit keeps) as the one
// buffered batch. What it keeps is never released first, so no other
// reserver can take it in between.
func (b *sortBuffer) compact() error {
	if err := b.sort(b.limit); err != nil {
		return err
	}
	kept := array.NewRecordBatch(b.schema, b.cols, int64(b.n))
	releaseArrays(b.cols)
	b.cols, b.n = nil, 0
	b.batches = []arrow.RecordBatch{kept}
	b.rows = int(kept.NumRows())
	return b.res.Resize(sortCost(kept))
}

// spillRun sorts what is buffered and writes it to disk as one run (cut
// to limit rows for a top-N), freeing the buffer's memory.
func (b *sortBuffer) spillRun(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := b.sort(b.limit); err != nil {
		return err
	}
	defer func() {
		releaseArrays(b.cols)
		b.cols, b.n = nil, 0
		b.res.Resize(0)
	}()
	if b.n == 0 {
		return nil
	}
	f, err := b.writeRun(b.cols, b.n)
	if err != nil {
		return err
	}
	b.runs = append(b.runs, f)
	b.passes = max(b.passes, 1)
	return nil
}

// writeRun writes sorted columns to a new run file.
func (b *sortBuffer) writeRun(cols []arrow.Array, n int) (*spill.File, error) {
	w, err := b.tc.createSpill(b.who, b.who+"-run", b.schema)
	if err != nil {
		return nil, err
	}
	for start := 0; start < n; start += BatchSize {
		end := min(start+BatchSize, n)
		rb := newBatch(b.schema, sliceArrays(cols, start, end), end-start)
		b.maxRec = max(b.maxRec, recordBytes(rb))
		err := w.write(rb)
		rb.Release()
		if err != nil {
			w.abort()
			return nil, err
		}
	}
	return w.finish()
}

// sort orders the buffered rows into b.cols, keeping the first limit rows
// (all when limit < 0).
func (b *sortBuffer) sort(limit int) error {
	all, err := concatColumns(b.ec.Alloc, b.schema, b.batches)
	if err != nil {
		return err
	}
	defer releaseArrays(all)
	releaseBatches(b.batches)
	b.batches = nil
	rows := b.rows
	b.rows = 0
	if rows == 0 {
		b.cols, b.n = nil, 0
		return nil
	}
	rb := array.NewRecordBatch(b.schema, all, int64(rows))
	exprs := make([]expr.Expr, len(b.keys))
	for i, k := range b.keys {
		exprs[i] = k.Expr
	}
	keys, err := evalExprs(b.ec, exprs, rb)
	rb.Release()
	if err != nil {
		return err
	}
	perm, err := sortPermutation(keys, b.keys, rows)
	if err == nil && b.keep != nil {
		perm, err = b.keep(keys, perm)
	}
	releaseArrays(keys)
	if err != nil {
		return err
	}
	if limit >= 0 && len(perm) > limit {
		perm = perm[:limit]
	}
	cols, err := takeArrays(b.ec.Alloc, all, perm)
	if err != nil {
		return err
	}
	b.cols, b.n = cols, len(perm)
	return nil
}

// spilled reports whether the buffer wrote runs (its output is then a
// merge of them, once finish opened them).
func (b *sortBuffer) spilled() bool { return len(b.runs) > 0 || b.merged != nil }

// finish sorts what is buffered after the input ended; the output then
// starts after skip rows. Without runs the rows are sorted in memory;
// with runs the rest is the last run, kept in memory, and the runs are
// merged, in rounds when the share cannot hold a batch of every run.
func (b *sortBuffer) finish(ctx context.Context, skip int) error {
	if b.spillRest && b.spilled() {
		if err := b.spillRun(ctx); err != nil {
			return err
		}
	}
	if err := b.sort(b.limit); err != nil {
		return err
	}
	// The sorted copy replaced the input: keep what it holds.
	if err := b.res.Resize(arraysBytes(b.cols)); err != nil {
		return err
	}
	b.res.Seal()
	b.pos = skip
	if !b.spilled() {
		return nil
	}
	srcs, err := b.mergeSources(ctx)
	if err != nil {
		return err
	}
	b.tc.notePasses(b.passes)
	limit := -1
	if b.limit >= 0 {
		limit = b.limit
	}
	m, err := newMerger(ctx, b.ec, b.schema, b.keys, srcs, limit, b.chargeMerge)
	if err != nil {
		return err
	}
	b.merged = m
	return b.skipRows(ctx, skip)
}

// chargeMerge keeps the batches the merge holds in the reservation. The
// fan-in was sized to the share, so a refusal (the task's division moved)
// leaves the batch in flight rather than failing the query.
func (b *sortBuffer) chargeMerge(delta int64) {
	if delta < 0 {
		b.res.Shrink(-delta)
		return
	}
	_ = b.res.Grow(delta)
}

// mergeSources returns the sources of the final merge: the runs, merged
// in passes down to a fan-in the share can hold, then the sorted rest in
// memory (last: it holds the latest input rows, which keeps the merge
// stable). A pass merges consecutive groups of fan-in runs, each into
// one, in input order: every row is written once a pass, log(runs) times
// in all (merging the merged run again with the next runs, as a cascade
// does, wrote the first runs' rows once per round, quadratic under a
// tiny share's fan-in of 2).
func (b *sortBuffer) mergeSources(ctx context.Context) ([]mergeSource, error) {
	for fanIn := b.fanIn(); len(b.runs)+1 > fanIn && len(b.runs) > 1; fanIn = b.fanIn() {
		runs := b.runs
		var merged []*spill.File
		for i := 0; i < len(runs); i += fanIn {
			group := runs[i:min(i+fanIn, len(runs))]
			if len(group) == 1 {
				merged = append(merged, group[0])
				continue
			}
			f, err := b.mergeToRun(ctx, group)
			if err != nil {
				// Close removes what is left (removing twice is harmless).
				b.runs = append(merged, runs[i:]...)
				return nil, err
			}
			merged = append(merged, f)
		}
		b.runs = merged
		b.passes++
	}
	var srcs []mergeSource
	closeAll := func() {
		for _, s := range srcs {
			s.close()
		}
	}
	for _, f := range b.runs {
		fs, err := b.tc.openSpill(b.who, f, true)
		if err != nil {
			closeAll()
			return nil, err
		}
		srcs = append(srcs, fs)
	}
	b.runs = nil
	if b.n > 0 {
		srcs = append(srcs, &colsSource{schema: b.schema, cols: b.cols, n: b.n})
		b.cols, b.n = nil, 0
	}
	return srcs, nil
}

// fanIn is how many sources a merge may read at once: a batch of each in
// what the share leaves beside the rows kept in memory, at least 2.
func (b *sortBuffer) fanIn() int {
	share := b.res.Share()
	if share < 0 || b.maxRec == 0 {
		return 64
	}
	free := share - b.res.Size()
	return min(max(int(free/(2*b.maxRec)), 2), 64)
}

// mergeToRun merges runs into one new run, removing them.
func (b *sortBuffer) mergeToRun(ctx context.Context, runs []*spill.File) (*spill.File, error) {
	var srcs []mergeSource
	for _, f := range runs {
		fs, err := b.tc.openSpill(b.who, f, true)
		if err != nil {
			for _, s := range srcs {
				s.close()
			}
			return nil, err
		}
		srcs = append(srcs, fs)
	}
	limit := -1
	if b.limit >= 0 {
		limit = b.limit
	}
	m, err := newMerger(ctx, b.ec, b.schema, b.keys, srcs, limit, b.chargeMerge)
	if err != nil {
		return nil, err
	}
	defer m.close()
	w, err := b.tc.createSpill(b.who, b.who+"-run", b.schema)
	if err != nil {
		return nil, err
	}
	for {
		rb, err := m.next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			w.abort()
			return nil, err
		}
		b.maxRec = max(b.maxRec, recordBytes(rb))
		err = w.write(rb)
		rb.Release()
		if err != nil {
			w.abort()
			return nil, err
		}
	}
	return w.finish()
}

// skipRows drops the first n rows of a merged output (OFFSET).
func (b *sortBuffer) skipRows(ctx context.Context, n int) error {
	for n > 0 {
		rb, err := b.merged.next(ctx)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if int(rb.NumRows()) > n {
			b.pending = rb.NewSlice(int64(n), rb.NumRows())
			rb.Release()
			return nil
		}
		n -= int(rb.NumRows())
		rb.Release()
	}
	return nil
}

// next returns the next sorted batch, or io.EOF.
func (b *sortBuffer) next(ctx context.Context) (arrow.RecordBatch, error) {
	if b.merged != nil {
		if p := b.pending; p != nil {
			b.pending = nil
			return p, nil
		}
		return b.merged.next(ctx)
	}
	return b.emit(&b.pos, b.n)
}

// emit returns the sorted rows [*pos, end) one batch at a time.
func (b *sortBuffer) emit(pos *int, end int) (arrow.RecordBatch, error) {
	if *pos >= end || b.cols == nil {
		return nil, io.EOF
	}
	to := min(*pos+BatchSize, end)
	cols := sliceArrays(b.cols, *pos, to)
	n := to - *pos
	*pos = to
	return newBatch(b.schema, cols, n), nil
}

func (b *sortBuffer) release() {
	releaseBatches(b.batches)
	b.batches = nil
	releaseArrays(b.cols)
	b.cols = nil
	if b.merged != nil {
		b.merged.close()
		b.merged = nil
	}
	if b.pending != nil {
		b.pending.Release()
		b.pending = nil
	}
	for _, f := range b.runs {
		f.Remove()
	}
	b.runs = nil
	b.res.Free()
}

// arraysBytes is what columns reference, as BatchBytes counts a batch.
func arraysBytes(cols []arrow.Array) int64 {
	var seen bufferSet
	var n int64
	for _, c := range cols {
		n += sliceBytes(c.Data(), &seen)
	}
	return n
}
