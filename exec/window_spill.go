package exec

import (
	"context"
	"io"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/spill"
)

// A window partition larger than the window's share of the budget is
// written to a spill file of its own as it comes out of the merge, and
// computed from there one record at a time. Every function and frame
// fsql has works this way, with memory bounded by a few records:
//
//   - row_number, rank, dense_rank and percent_rank carry the position,
//     the current peer group's first row and the dense count from record
//     to record; ntile and percent_rank and cume_dist use the row count,
//     known once the partition is written; a peer group's end (cume_dist,
//     RANGE CURRENT ROW) is found by reading ahead, once per group.
//   - Every frame's bounds move forward only, so a RANGE offset bound is
//     a pointer walked forward over the order keys of the records.
//   - An aggregate over a frame folds the frame's nodes of a two-level
//     segment tree: one over the records' totals (computed while the
//     partition is written, one state per record), and one per record
//     read, over its rows. A row's frame is the part of its first record,
//     the whole records between, and the part of its last record, each
//     O(log n) nodes, whatever the frame's width (running and
//     whole-partition frames included).
//   - lag, lead, first_value, last_value and nth_value read the row at
//     their position from the record holding it.
//
// Records are read by index (spill.Reader.At) through a small cache of
// the records last used: the one computed, and those holding the frames'
// ends, which move forward with it.

// bigPartitionCache is how many read records the cache keeps.
const bigPartitionCache = 6

// bigPartitionsSpilled counts the partitions written to a file of their
// own (tests check that theirs did).
var bigPartitionsSpilled atomic.Int64

// bigPartition is one partition computed from its spill file.
type bigPartition struct {
	s      *windowStream
	w      *spillFile
	file   *spill.File
	rd     *spill.Reader
	n      int64
	starts []int64 // first row of each record, and n at the end
	nulls  int64   // rows whose (single) order key is NULL
	fns    []string
	// recRows is the most rows a record holds.
	recRows int
	// totals holds, per aggregate function (nil otherwise), each
	// record's state while the partition is written; tops is, after,
	// the segment tree over them.
	totals   []aggState
	argTypes []arrow.DataType
	tops     []*stateTree
	cache    []*partRec // most recently used last
	nextRec  int        // record to compute next
	// Carried from record to record: the last row's order keys, its peer
	// group's first row, the dense rank, a peer group's end once found.
	prevKeys           []arrow.Array
	peerStart, dense   int64
	endOf, endOfGroup  int64
	rangePtr           [2]int64
	orderExprs         []expr.Expr
	orderSpecs         []SortKey
	needPeers, needArg bool
	// stream: computed as the merge hands the rows out, never written
	// (window_spill_stream.go); queue holds the chunk's rows read before
	// the partition was known to be big, computed first; ended says its
	// last row was read.
	stream, ended bool
	queue         []arrow.RecordBatch
}

// partRec is one record read back, with its order keys and arguments.
type partRec struct {
	idx   int
	start int64
	n     int
	batch arrow.RecordBatch
	order []arrow.Array
	args  []arrow.Array // per function; nil where it has none
	trees []*stateTree  // per aggregate function, built when needed
	keys  [2]arrow.Array
	bytes int64
}

func (r *partRec) release() {
	r.batch.Release()
	releaseArrays(r.order)
	for _, a := range r.args {
		if a != nil {
			a.Release()
		}
	}
	for _, t := range r.trees {
		if t != nil {
			releaseArrays(t.cols)
		}
	}
	for _, k := range r.keys {
		if k != nil {
			k.Release()
		}
	}
}

// stateTree is a segment tree of aggregate states over m leaves: node v's
// state is row v of cols (the state's partial columns), leaves at
// [m, 2m), inner node v combining 2v and 2v+1.
type stateTree struct {
	m    int
	cols []arrow.Array
}

// buildStateTree combines the inner nodes of st, whose leaves [m, 2m) are
// set, and keeps the partial states of all nodes.
func buildStateTree(alloc memory.Allocator, st aggState, m int) (*stateTree, error) {
	for v := m - 1; v >= 1; v-- {
		st.combine(v, 2*v)
		st.combine(v, 2*v+1)
	}
	cols, err := st.partial(alloc, 2*m)
	if err != nil {
		return nil, err
	}
	return &stateTree{m: m, cols: cols}, nil
}

// cover appends to nodes the O(log m) nodes covering leaves [lo, hi), and
// to gids g once per node.
func (t *stateTree) cover(lo, hi int, g int32, nodes, gids []int32) ([]int32, []int32) {
	a, b := lo+t.m, hi+t.m
	for a < b {
		if a&1 == 1 {
			nodes, gids = append(nodes, int32(a)), append(gids, g)
			a++
		}
		if b&1 == 1 {
			b--
			nodes, gids = append(nodes, int32(b)), append(gids, g)
		}
		a >>= 1
		b >>= 1
	}
	return nodes, gids
}

// mergeInto folds nodes into st's groups gids.
func (t *stateTree) mergeInto(alloc memory.Allocator, st aggState, nodes, gids []int32) error {
	if len(nodes) == 0 {
		return nil
	}
	cols, err := takeArrays(alloc, t.cols, nodes)
	if err != nil {
		return err
	}
	defer releaseArrays(cols)
	return st.merge(gids, cols)
}

func isFrameAggregate(fn string) bool {
	switch fn {
	case "sum", "avg", "min", "max", "count", "count_star", "stddev_samp", "stddev_pop", "var_samp", "var_pop",
		"bit_and", "bit_or", "bit_xor":
		return true
	}
	return false
}

// spillPartition writes the chunk, one partition so far and larger than
// the share, and (unless it ended) the rest of that partition as the
// merge hands it out to a spill file, then computes it from there
// (s.big). The rows after the partition wait in s.waiting. A partition
// of ranks alone is streamed instead (streamPartition).
func (s *windowStream) spillPartition(ctx context.Context, ended bool) error {
	if rankOnly(s.w.Funcs) {
		s.streamPartition(ended)
		return nil
	}
	tc := s.buf.tc
	np := len(s.w.PartitionBy)
	p := &bigPartition{s: s, orderSpecs: s.keys[np:]}
	for _, k := range p.orderSpecs {
		p.orderExprs = append(p.orderExprs, k.Expr)
	}
	for _, f := range s.w.Funcs {
		fn := strings.ToLower(f.Fn)
		p.fns = append(p.fns, fn)
		switch fn {
		case "row_number", "rank", "dense_rank", "ntile":
		case "percent_rank", "cume_dist":
			p.needPeers = true
		default:
			p.needArg = true
		}
	}
	fr := s.w.Frame.norm()
	if fr.Unit == FrameRange {
		p.needPeers = true
	}
	p.totals = make([]aggState, len(p.fns))
	p.argTypes = make([]arrow.DataType, len(p.fns))
	p.tops = make([]*stateTree, len(p.fns))
	w, err := tc.createSpill("window", "window partition", s.buf.schema)
	if err != nil {
		return err
	}
	p.w = w
	s.big = p // closed with the stream from here on
	p.setRecRows(s.acc, s.res.Share())
	bigPartitionsSpilled.Add(1)
	for _, b := range s.acc {
		if err := p.add(b); err != nil {
			return err
		}
	}
	releaseBatches(s.acc)
	s.acc, s.accRows, s.lastCut = nil, 0, 0
	if err := s.res.Resize(0); err != nil {
		return err
	}
	for !ended && !s.eof {
		b, err := s.nextSorted(ctx)
		if err == io.EOF {
			s.eof = true
			break
		}
		if err != nil {
			return err
		}
		cut, err := s.firstCut(b, true)
		if err != nil {
			b.Release()
			return err
		}
		if cut < 0 {
			err = p.add(b)
			b.Release()
			if err != nil {
				return err
			}
			continue
		}
		if cut > 0 {
			head := b.NewSlice(0, int64(cut))
			err = p.add(head)
			head.Release()
			if err != nil {
				b.Release()
				return err
			}
		}
		s.waiting = b.NewSlice(int64(cut), b.NumRows())
		b.Release()
		break
	}
	releaseArrays(s.prevKey)
	s.prevKey = nil // the next partition starts at s.waiting's first row
	return p.finishWrite()
}

// firstCut returns the first row of b that starts a new partition, or
// -1; with prev, the partition before b's first row is the one of
// s.prevKey (the chunk's last row), without, b's first row starts one.
func (s *windowStream) firstCut(b arrow.RecordBatch, prev bool) (int, error) {
	np := len(s.w.PartitionBy)
	if np == 0 || b.NumRows() == 0 {
		return -1, nil
	}
	pk, err := evalExprs(s.buf.ec, s.w.PartitionBy, b)
	if err != nil {
		return 0, err
	}
	defer releaseArrays(pk)
	if prev {
		same, err := crossEqual(s.prevKey, s.prevRow, pk, 0)
		if err != nil {
			return 0, err
		}
		if !same {
			return 0, nil
		}
	}
	within, err := keyCmps(pk, s.keys[:np])
	if err != nil {
		return 0, err
	}
	for i := 1; i < int(b.NumRows()); i++ {
		if within(i-1, i) != 0 {
			return i, nil
		}
	}
	return -1, nil
}

// add writes one batch of the partition (the caller keeps it) as records
// of at most p.recRows rows.
func (p *bigPartition) add(b arrow.RecordBatch) error {
	n := b.NumRows()
	if n <= int64(p.recRows) {
		return p.addRecord(b)
	}
	for off := int64(0); off < n; off += int64(p.recRows) {
		r := b.NewSlice(off, min(off+int64(p.recRows), n))
		err := p.addRecord(r)
		r.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// setRecRows sizes the records so that the cache of records read back,
// with their arguments and trees, fits in the share.
func (p *bigPartition) setRecRows(acc []arrow.RecordBatch, share int64) {
	var bytes, rows int64
	for _, b := range acc {
		bytes += recordBytes(b)
		rows += b.NumRows()
	}
	p.recRows = BatchSize
	if share < 0 || rows == 0 {
		return
	}
	// A row read back, its keys and arguments (about as much again) and
	// each function's tree nodes (two states a row).
	perRow := 2*bytes/rows + int64(len(p.fns))*2*segmentStateBytes
	p.recRows = int(min(max(share/int64(bigPartitionCache+2)/perRow, 16), BatchSize))
}

// addRecord writes one record, folding its arguments into its totals.
func (p *bigPartition) addRecord(b arrow.RecordBatch) error {
	if b.NumRows() == 0 {
		return nil
	}
	ec := p.s.buf.ec
	if err := p.w.write(b); err != nil {
		return err
	}
	k := len(p.starts)
	p.starts = append(p.starts, p.n)
	p.n += b.NumRows()
	if len(p.orderExprs) == 1 {
		keys, err := evalExprs(ec, p.orderExprs, b)
		if err != nil {
			return err
		}
		p.nulls += int64(keys[0].NullN())
		releaseArrays(keys)
	}
	for i, f := range p.s.w.Funcs {
		if !isFrameAggregate(p.fns[i]) {
			continue
		}
		arg, argType, err := windowArg(ec, f, b)
		if err != nil {
			return err
		}
		if p.totals[i] == nil {
			p.argTypes[i] = argType
			if p.totals[i], err = newAggState(p.fns[i], argType, f.Type); err != nil {
				releaseIf(arg)
				return err
			}
		}
		st := p.totals[i]
		st.grow(k + 1)
		gids := make([]int32, b.NumRows())
		for j := range gids {
			gids[j] = int32(k)
		}
		err = st.update(gids, arg)
		releaseIf(arg)
		if err != nil {
			return err
		}
	}
	return nil
}

func releaseIf(a arrow.Array) {
	if a != nil {
		a.Release()
	}
}

// windowArg evaluates f's argument over b (nil for count_star) and its
// type (BIGINT without one, as the in-memory path takes it).
func windowArg(ec *expr.Context, f WindowFunc, b arrow.RecordBatch) (arrow.Array, arrow.DataType, error) {
	if f.Arg == nil {
		return nil, arrow.PrimitiveTypes.Int64, nil
	}
	a, err := f.Arg.Eval(ec, b)
	if err != nil {
		return nil, nil, err
	}
	return a, a.DataType(), nil
}

// finishWrite finishes the file, opens it for reading and builds the
// trees over the records' totals.
func (p *bigPartition) finishWrite() error {
	w := p.w
	p.w = nil
	f, err := w.finish()
	if err != nil {
		return err
	}
	p.file = f
	tc := p.s.buf.tc
	tc.notePasses(1)
	if p.rd, err = f.Open(allocOf(tc)); err != nil {
		return spillErr("window", err)
	}
	p.starts = append(p.starts, p.n)
	alloc := p.s.buf.ec.Alloc
	k := len(p.starts) - 1
	for i, st := range p.totals {
		if st == nil {
			continue
		}
		// The records' totals become the tree's leaves.
		state, err := st.partial(alloc, k)
		if err != nil {
			return err
		}
		top, err := newAggState(p.fns[i], p.argTypeOf(i), p.s.w.Funcs[i].Type)
		if err != nil {
			releaseArrays(state)
			return err
		}
		top.grow(2 * k)
		gids := make([]int32, k)
		for j := range gids {
			gids[j] = int32(k + j)
		}
		err = top.merge(gids, state)
		releaseArrays(state)
		if err != nil {
			return err
		}
		if p.tops[i], err = buildStateTree(alloc, top, k); err != nil {
			return err
		}
		p.totals[i] = nil
	}
	return nil
}

// argTypeOf is aggregate i's argument type, as evaluated.
func (p *bigPartition) argTypeOf(i int) arrow.DataType { return p.argTypes[i] }

// recOf is the record holding row r.
func (p *bigPartition) recOf(r int64) int {
	return sort.Search(len(p.starts)-1, func(i int) bool { return p.starts[i+1] > r })
}

// get returns record i, reading it (and evicting the least recently used
// beyond the cache's size) when it is not cached. What a caller takes
// from a record it must retain or copy before its next get.
func (p *bigPartition) get(i int) (*partRec, error) {
	for k, r := range p.cache {
		if r.idx == i {
			copy(p.cache[k:], p.cache[k+1:])
			p.cache[len(p.cache)-1] = r
			return r, nil
		}
	}
	b, err := p.rd.At(i)
	if err != nil {
		return nil, spillErr("window", err)
	}
	ec := p.s.buf.ec
	r := &partRec{idx: i, start: p.starts[i], n: int(b.NumRows()), batch: b,
		args: make([]arrow.Array, len(p.fns)), trees: make([]*stateTree, len(p.fns))}
	if r.order, err = evalExprs(ec, p.orderExprs, b); err != nil {
		r.order = nil
		r.release()
		return nil, err
	}
	if p.needArg {
		for k, f := range p.s.w.Funcs {
			if f.Arg == nil {
				continue
			}
			if r.args[k], err = f.Arg.Eval(ec, b); err != nil {
				r.release()
				return nil, err
			}
		}
	}
	r.bytes = recordBytes(b) + arraysBytes(r.order)
	for _, a := range r.args {
		if a != nil {
			r.bytes += arraysBytes([]arrow.Array{a})
		}
	}
	if len(p.cache) >= bigPartitionCache {
		p.cache[0].release()
		p.cache = p.cache[1:]
	}
	p.cache = append(p.cache, r)
	return r, p.charge()
}

// charge reserves what the cache holds, dropping the records used least
// recently while the share refuses it (never the last one got, which its
// caller holds).
func (p *bigPartition) charge() error {
	for {
		var n int64
		for _, r := range p.cache {
			n += r.bytes
		}
		err := p.s.res.Resize(n)
		if err == nil || len(p.cache) <= 1 {
			return err
		}
		p.cache[0].release()
		p.cache = p.cache[1:]
	}
}

// tree returns record r's segment tree over its rows for function i.
func (p *bigPartition) tree(r *partRec, i int) (*stateTree, error) {
	if t := r.trees[i]; t != nil {
		return t, nil
	}
	st, err := newAggState(p.fns[i], p.argTypeOf(i), p.s.w.Funcs[i].Type)
	if err != nil {
		return nil, err
	}
	st.grow(2 * r.n)
	leaves := make([]int32, r.n)
	for j := range leaves {
		leaves[j] = int32(r.n + j)
	}
	if err := st.update(leaves, r.args[i]); err != nil {
		return nil, err
	}
	t, err := buildStateTree(p.s.buf.ec.Alloc, st, r.n)
	if err != nil {
		return nil, err
	}
	r.trees[i] = t
	r.bytes += arraysBytes(t.cols)
	return t, p.charge()
}

// next computes the next record of the partition.
func (p *bigPartition) next(ctx context.Context) (arrow.RecordBatch, error) {
	if p.stream {
		return p.nextStreamed(ctx)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if p.nextRec >= len(p.starts)-1 {
		return nil, io.EOF
	}
	rec, err := p.get(p.nextRec)
	if err != nil {
		return nil, err
	}
	p.nextRec++
	// What the computation reads of this record is retained: later
	// reads may evict it from the cache.
	blk := &partRec{idx: rec.idx, start: rec.start, n: rec.n, batch: rec.batch, order: rec.order, args: rec.args}
	blk.batch.Retain()
	for _, a := range blk.order {
		a.Retain()
	}
	blk.args = append([]arrow.Array(nil), rec.args...)
	for _, a := range blk.args {
		if a != nil {
			a.Retain()
		}
	}
	blk.trees = make([]*stateTree, len(p.fns))
	defer blk.release()
	ps, pe, dense, err := p.peers(blk)
	if err != nil {
		return nil, err
	}
	var lo, hi []int64
	out := make([]arrow.Array, 0, int(blk.batch.NumCols())+len(p.fns))
	for _, c := range blk.batch.Columns() {
		c.Retain()
		out = append(out, c)
	}
	for i, f := range p.s.w.Funcs {
		fn := p.fns[i]
		if windowFuncKinds[fn] && lo == nil {
			if lo, hi, err = p.frame(blk, ps, pe); err != nil {
				releaseArrays(out)
				return nil, err
			}
		}
		a, err := p.function(i, f, blk, ps, pe, dense, lo, hi)
		if err != nil {
			releaseArrays(out)
			return nil, err
		}
		if !arrow.TypeEqual(a.DataType(), f.Type) {
			c, err := castArray(p.s.buf.ec.Alloc, a, f.Type)
			a.Release()
			if err != nil {
				releaseArrays(out)
				return nil, err
			}
			a = c
		}
		out = append(out, a)
	}
	return newBatch(p.s.schema, out, blk.n), nil
}

// peers returns, per row of blk, its peer group's first row and one past
// its last (partition rows) and its dense rank.
func (p *bigPartition) peers(blk *partRec) (ps, pe, dense []int64, err error) {
	n := blk.n
	ps, pe, dense = make([]int64, n), make([]int64, n), make([]int64, n)
	if len(p.orderExprs) == 0 {
		// Without ORDER BY every row is a peer of every other.
		for i := range ps {
			ps[i], pe[i], dense[i] = 0, p.n, 1
		}
		return ps, pe, dense, nil
	}
	cmp, err := keyCmps(blk.order, p.orderSpecs)
	if err != nil {
		return nil, nil, nil, err
	}
	for i := 0; i < n; i++ {
		newPeer := i > 0 && cmp(i-1, i) != 0
		if i == 0 {
			same := false
			if p.prevKeys != nil {
				if same, err = crossEqual(p.prevKeys, 0, blk.order, 0); err != nil {
					return nil, nil, nil, err
				}
			}
			newPeer = !same
		}
		if newPeer {
			p.peerStart = blk.start + int64(i)
			p.dense++
		}
		ps[i], dense[i] = p.peerStart, p.dense
	}
	releaseArrays(p.prevKeys)
	p.prevKeys = sliceArrays(blk.order, n-1, n)
	if !p.needPeers {
		return ps, nil, dense, nil
	}
	end, err := p.groupEnd(blk)
	if err != nil {
		return nil, nil, nil, err
	}
	for i := n - 1; i >= 0; i-- {
		if i < n-1 && ps[i] != ps[i+1] {
			end = blk.start + int64(i) + 1
		}
		pe[i] = end
	}
	return ps, pe, dense, nil
}

// groupEnd is one past the last row of the peer group of blk's last row,
// reading the records after blk until the group ends (once per group).
func (p *bigPartition) groupEnd(blk *partRec) (int64, error) {
	if p.endOfGroup == p.peerStart+1 { // known (stored +1, so 0 means unknown)
		return p.endOf, nil
	}
	last := p.prevKeys
	end := p.n
	for r := blk.idx + 1; r < len(p.starts)-1; r++ {
		rec, err := p.get(r)
		if err != nil {
			return 0, err
		}
		same, err := crossEqual(last, 0, rec.order, 0)
		if err != nil {
			return 0, err
		}
		if !same {
			end = rec.start
			break
		}
		cmp, err := keyCmps(rec.order, p.orderSpecs)
		if err != nil {
			return 0, err
		}
		j := 1
		for j < rec.n && cmp(j-1, j) == 0 {
			j++
		}
		if j < rec.n {
			end = rec.start + int64(j)
			break
		}
	}
	p.endOf, p.endOfGroup = end, p.peerStart+1
	return end, nil
}

// frame returns each row's frame [lo, hi) in partition rows.
func (p *bigPartition) frame(blk *partRec, ps, pe []int64) (lo, hi []int64, err error) {
	fr := p.s.w.Frame.norm()
	n := blk.n
	lo, hi = make([]int64, n), make([]int64, n)
	var bounds [2]*rangeBounds
	if fr.Unit == FrameRange {
		for k, b := range []FrameBound{fr.Start, fr.End} {
			if b.Kind == Preceding || b.Kind == Following {
				if bounds[k], err = p.s.rangeBoundsOf(b, blk.order[0]); err != nil {
					return nil, nil, err
				}
				defer bounds[k].release()
			}
		}
	}
	for i := 0; i < n; i++ {
		row := blk.start + int64(i)
		var a, b int64
		for k, fb := range []FrameBound{fr.Start, fr.End} {
			end := k == 1
			var v int64
			switch {
			case fb.Kind == UnboundedPreceding:
				v = 0
			case fb.Kind == UnboundedFollowing:
				v = p.n
			case fr.Unit == FrameRows:
				v = rowsBound(fb, row, end)
			case fb.Kind == CurrentRow || expr.IsNull(blk.order[0], i):
				// RANGE CURRENT ROW, and a NULL key's offset frame: its peers.
				v = ps[i]
				if end {
					v = pe[i]
				}
			default:
				if v, err = p.rangeOffset(k, bounds[k], i); err != nil {
					return nil, nil, err
				}
			}
			if end {
				b = v
			} else {
				a = v
			}
		}
		a, b = max(0, min(a, p.n)), max(0, min(b, p.n))
		if b < a {
			b = a
		}
		lo[i], hi[i] = a, b
	}
	return lo, hi, nil
}

// rangeOffset is the RANGE offset bound k (0 start, 1 end) of row i of
// the record computed, whose order key is not NULL: the first row of the
// non-NULL keys not before the bound value (start) or after it (end). The
// bounds grow with the rows, so a pointer walks forward over the records.
func (p *bigPartition) rangeOffset(k int, rb *rangeBounds, i int) (int64, error) {
	nnStart, nnEnd := int64(0), p.n
	if p.orderSpecs[0].NullsFirst {
		nnStart = p.nulls
	} else {
		nnEnd = p.n - p.nulls
	}
	if expr.IsNull(rb.bounds, i) {
		// Past the type's range: before every row, or after every row.
		if k == 0 && p.s.w.Frame.norm().Start.Kind == Preceding || k == 1 && p.s.w.Frame.norm().End.Kind == Preceding {
			return nnStart, nil
		}
		return nnEnd, nil
	}
	ptr := &p.rangePtr[k]
	*ptr = max(*ptr, nnStart)
	for *ptr < nnEnd {
		rec, err := p.get(p.recOf(*ptr))
		if err != nil {
			return 0, err
		}
		keys, err := p.boundKeys(rec, k, rb)
		if err != nil {
			return 0, err
		}
		cmp, err := crossCmp(keys, rb.bounds)
		if err != nil {
			return 0, err
		}
		j := int(*ptr - rec.start)
		for j < rec.n && *ptr < nnEnd {
			c := cmp(j, i)
			if rb.desc {
				c = -c
			}
			// The start passes rows before the bound, the end rows not
			// after it.
			if (k == 0 && c >= 0) || (k == 1 && c > 0) {
				return *ptr, nil
			}
			j++
			*ptr++
		}
	}
	return *ptr, nil
}

// boundKeys is rec's order key in the type of bound k's values.
func (p *bigPartition) boundKeys(rec *partRec, k int, rb *rangeBounds) (arrow.Array, error) {
	if rec.keys[k] != nil {
		return rec.keys[k], nil
	}
	key := rec.order[0]
	if arrow.TypeEqual(key.DataType(), rb.bounds.DataType()) {
		key.Retain()
		rec.keys[k] = key
		return key, nil
	}
	ec := p.s.buf.ec
	in := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "key", Type: key.DataType(), Nullable: true}}, nil), []arrow.Array{key}, int64(key.Len()))
	defer in.Release()
	c, err := expr.NewCast(expr.NewColumn(0, key.DataType(), "key"), rb.bounds.DataType())
	if err != nil {
		return nil, errs.Wrap(errs.Semantic, "RANGE frame over %s with a %s bound: %w", key.DataType(), rb.bounds.DataType(), err)
	}
	a, err := c.Eval(ec, in)
	if err != nil {
		return nil, errs.Wrap(errs.Semantic, "RANGE frame over %s with a %s bound: %w", key.DataType(), rb.bounds.DataType(), err)
	}
	rec.keys[k] = a
	rec.bytes += arraysBytes([]arrow.Array{a})
	return a, nil
}

// function computes function i over blk's rows.
func (p *bigPartition) function(i int, f WindowFunc, blk *partRec, ps, pe, dense, lo, hi []int64) (arrow.Array, error) {
	alloc := p.s.buf.ec.Alloc
	fn := p.fns[i]
	n := blk.n
	switch fn {
	case "row_number", "rank", "dense_rank", "ntile":
		vals := make([]int64, n)
		for r := range vals {
			k := blk.start + int64(r)
			switch fn {
			case "row_number":
				vals[r] = k + 1
			case "rank":
				vals[r] = ps[r] + 1
			case "dense_rank":
				vals[r] = dense[r]
			default:
				vals[r] = ntileOf(p.n, k, f.N)
			}
		}
		return fixedArray(alloc, arrow.PrimitiveTypes.Int64, vals, nil), nil
	case "percent_rank", "cume_dist":
		vals := make([]float64, n)
		rows := float64(p.n)
		for r := range vals {
			if fn == "cume_dist" {
				vals[r] = float64(pe[r]) / rows
			} else if p.n > 1 {
				vals[r] = float64(ps[r]) / (rows - 1)
			}
		}
		return fixedArray(alloc, arrow.PrimitiveTypes.Float64, vals, nil), nil
	case "lag", "lead":
		d := f.N
		if fn == "lag" {
			d = -d
		}
		pos := make([]int64, n)
		for r := range pos {
			j := blk.start + int64(r) + d
			if j < 0 || j >= p.n {
				j = -1
			}
			pos[r] = j
		}
		return p.gather(i, blk, pos, f.Default)
	case "first_value", "last_value", "nth_value":
		pos := make([]int64, n)
		for r := range pos {
			var j int64
			switch fn {
			case "first_value":
				j = lo[r]
			case "last_value":
				j = hi[r] - 1
			default:
				j = lo[r] + f.N - 1
			}
			if lo[r] >= hi[r] || j < lo[r] || j >= hi[r] {
				j = -1
			}
			pos[r] = j
		}
		return p.gather(i, blk, pos, nil)
	}
	return p.aggregate(i, f, blk, lo, hi)
}

// ntileOf is the bucket of row k of rows split into buckets (the first
// rows%buckets buckets hold one row more).
func ntileOf(rows, k, buckets int64) int64 {
	q, r := rows/buckets, rows%buckets
	switch {
	case q == 0:
		return k + 1
	case k < r*(q+1):
		return k/(q+1) + 1
	}
	return r + (k-r*(q+1))/q + 1
}

// gather returns function i's argument at partition rows pos (-1: def,
// or NULL without one). The positions that are set grow with the rows,
// so they fall in a few records, read in order.
func (p *bigPartition) gather(i int, blk *partRec, pos []int64, def *expr.Literal) (arrow.Array, error) {
	alloc := p.s.buf.ec.Alloc
	var parts []arrow.Array
	defer func() { releaseArrays(parts) }()
	idx := make([]int32, len(pos))
	cur, base, off := -1, int64(0), int32(0)
	for r, j := range pos {
		if j < 0 {
			idx[r] = -1
			continue
		}
		if cur < 0 || j < base || j >= p.starts[cur+1] {
			k := p.recOf(j)
			if k != cur {
				rec, err := p.get(k)
				if err != nil {
					return nil, err
				}
				if cur >= 0 {
					off += int32(parts[len(parts)-1].Len())
				}
				a := rec.args[i]
				a.Retain()
				parts = append(parts, a)
				cur, base = k, rec.start
			}
		}
		idx[r] = off + int32(j-base)
	}
	var arg arrow.Array
	switch len(parts) {
	case 0:
		arg = blk.args[i]
		arg.Retain()
	case 1:
		arg = parts[0]
		arg.Retain()
	default:
		var err error
		if arg, err = concatN(alloc, parts); err != nil {
			return nil, err
		}
	}
	defer arg.Release()
	return p.s.takeOrDefault(arg, idx, def)
}

// concatN concatenates arrays of one type (collated strings included).
func concatN(alloc memory.Allocator, as []arrow.Array) (arrow.Array, error) {
	if expr.CollationOf(as[0].DataType()) != nil {
		st := make([]arrow.Array, len(as))
		for k, a := range as {
			st[k] = expr.Storage(a)
		}
		s, err := array.Concatenate(st, alloc)
		if err != nil {
			return nil, errs.Wrap(errs.Internal, "window: %w", err)
		}
		return expr.Collated(as[0].DataType(), s), nil
	}
	out, err := array.Concatenate(as, alloc)
	if err != nil {
		return nil, errs.Wrap(errs.Internal, "window: %w", err)
	}
	return out, nil
}

// aggregate folds each row's frame [lo, hi) from the two-level tree.
func (p *bigPartition) aggregate(i int, f WindowFunc, blk *partRec, lo, hi []int64) (arrow.Array, error) {
	alloc := p.s.buf.ec.Alloc
	n := blk.n
	st, err := newAggState(p.fns[i], p.argTypeOf(i), f.Type)
	if err != nil {
		return nil, err
	}
	st.grow(n)
	type picks struct{ nodes, gids []int32 }
	var top picks
	perRec := map[int]*picks{}
	pick := func(rec int) *picks {
		if pk := perRec[rec]; pk != nil {
			return pk
		}
		pk := &picks{}
		perRec[rec] = pk
		return pk
	}
	// Records' row trees are built when first used; their leaf count
	// is the record's rows, known from starts.
	rows := func(k int) int { return int(p.starts[k+1] - p.starts[k]) }
	leafTree := &stateTree{}
	for r := 0; r < n; r++ {
		a, b := lo[r], hi[r]
		if a >= b {
			continue
		}
		g := int32(r)
		rl, rh := p.recOf(a), p.recOf(b-1)
		sl, sh := p.starts[rl], p.starts[rh]
		if rl == rh {
			pk := pick(rl)
			leafTree.m = rows(rl)
			pk.nodes, pk.gids = leafTree.cover(int(a-sl), int(b-sl), g, pk.nodes, pk.gids)
			continue
		}
		pk := pick(rl)
		leafTree.m = rows(rl)
		pk.nodes, pk.gids = leafTree.cover(int(a-sl), rows(rl), g, pk.nodes, pk.gids)
		if rl+1 < rh {
			top.nodes, top.gids = p.tops[i].cover(rl+1, rh, g, top.nodes, top.gids)
		}
		pk = pick(rh)
		leafTree.m = rows(rh)
		pk.nodes, pk.gids = leafTree.cover(0, int(b-sh), g, pk.nodes, pk.gids)
	}
	if err := p.tops[i].mergeInto(alloc, st, top.nodes, top.gids); err != nil {
		return nil, err
	}
	recs := make([]int, 0, len(perRec))
	for k := range perRec {
		recs = append(recs, k)
	}
	sort.Ints(recs)
	for _, k := range recs {
		rec, err := p.get(k)
		if err != nil {
			return nil, err
		}
		t, err := p.tree(rec, i)
		if err != nil {
			return nil, err
		}
		pk := perRec[k]
		if err := t.mergeInto(alloc, st, pk.nodes, pk.gids); err != nil {
			return nil, err
		}
	}
	return st.final(alloc, n)
}

func (p *bigPartition) close() {
	releaseBatches(p.queue)
	p.queue = nil
	if p.w != nil {
		p.w.abort()
		p.w = nil
	}
	for _, r := range p.cache {
		r.release()
	}
	p.cache = nil
	for _, t := range p.tops {
		if t != nil {
			releaseArrays(t.cols)
		}
	}
	p.tops = nil
	releaseArrays(p.prevKeys)
	p.prevKeys = nil
	if p.rd != nil {
		p.rd.Close()
		p.rd = nil
	}
	if p.file != nil {
		p.file.Remove()
		p.file = nil
	}
}
