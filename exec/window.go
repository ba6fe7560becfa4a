package exec

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/connectors/hive"
	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec/expr"
)

// WindowFunc is one window function call: a ranking function (row_number,
// rank, dense_rank, percent_rank, cume_dist, ntile), a value function
// (lag, lead, first_value, last_value, nth_value), or an aggregate (sum,
// avg, min, max, count, count_star, the variances and deviations,
// bit_and/bit_or/bit_xor) over the frame.
type WindowFunc struct {
	Fn   string
	Arg  expr.Expr
	Type arrow.DataType
	Name string
	// N is lag/lead's offset, nth_value's position and ntile's number of
	// buckets (constants, as MySQL requires).
	N int64
	// Default is lag/lead's value where no row is N away: a constant of
	// Type; nil means NULL.
	Default *expr.Literal
}

// Window computes window functions over partitions of its input. It holds
// the whole input (reserved as "window"), sorts it by PartitionBy then
// OrderBy, and appends one column per function to the input columns.
//
// Aggregates and first_value/last_value/nth_value read the rows of their
// frame; the ranking functions and lag/lead ignore it (MySQL accepts a
// frame for them and ignores it too).
type Window struct {
	Child       Node
	PartitionBy []expr.Expr
	OrderBy     []SortKey
	Funcs       []WindowFunc
	// Frame of the framing functions; the zero value is FrameDefault.
	Frame WindowFrame
	// Presorted says the input arrives grouped by PartitionBy and, within
	// a partition, ordered by OrderBy (the output of a window below whose
	// order implies it, planner/physical_window.go): the window does not
	// sort, and computes partitions as they stream in, holding a chunk of
	// complete partitions at a time rather than the whole input.
	Presorted bool
	// Limit, when set, is a filter on the result of a rank or row_number
	// among Funcs (every one of which is rank, row_number or dense_rank):
	// rows numbered past it are dropped as the input is sorted, and the
	// filter itself stays above (RankLimit). A presorted window does not
	// sort and ignores it.
	Limit *RankLimit
}

// FrameUnit says how a frame's offsets count: rows, or order-key values.
type FrameUnit int8

const (
	// FrameRange counts by the value of the (single) ORDER BY key; its
	// CURRENT ROW includes the row's peers.
	FrameRange FrameUnit = iota
	// FrameRows counts rows.
	FrameRows
)

// BoundKind is the kind of one end of a frame.
type BoundKind int8

const (
	UnboundedPreceding BoundKind = iota
	Preceding
	CurrentRow
	Following
	UnboundedFollowing
)

// FrameBound is one end of a frame.
type FrameBound struct {
	Kind BoundKind
	// Rows is N of ROWS N PRECEDING/FOLLOWING.
	Rows int64
	// Value is, for RANGE N PRECEDING/FOLLOWING, the bound's order-key
	// value computed from the current row's key, which it reads as column
	// 0 of its input (key - N, or key + INTERVAL N DAY for a descending
	// date). A NULL result (past the type's range) puts the bound before
	// every row for PRECEDING and after every row for FOLLOWING.
	Value expr.Expr
}

// WindowFrame is the frame of a window's framing functions.
type WindowFrame struct {
	Unit       FrameUnit
	Start, End FrameBound
}

// FrameDefault is SQL's default frame: RANGE BETWEEN UNBOUNDED PRECEDING
// AND CURRENT ROW, so with ORDER BY peers share a value, and without ORDER
// BY (every row a peer) the frame is the whole partition.
var FrameDefault = WindowFrame{Unit: FrameRange, Start: FrameBound{Kind: UnboundedPreceding}, End: FrameBound{Kind: CurrentRow}}

func (f WindowFrame) norm() WindowFrame {
	if f == (WindowFrame{}) {
		return FrameDefault
	}
	return f
}

// String renders the frame in SQL.
func (f WindowFrame) String() string {
	f = f.norm()
	unit := "RANGE"
	if f.Unit == FrameRows {
		unit = "ROWS"
	}
	return unit + " BETWEEN " + f.Start.String() + " AND " + f.End.String()
}

func (b FrameBound) String() string {
	switch b.Kind {
	case UnboundedPreceding:
		return "UNBOUNDED PRECEDING"
	case UnboundedFollowing:
		return "UNBOUNDED FOLLOWING"
	case CurrentRow:
		return "CURRENT ROW"
	}
	dir := " PRECEDING"
	if b.Kind == Following {
		dir = " FOLLOWING"
	}
	if b.Value != nil {
		return "[" + b.Value.String() + "]" + dir
	}
	return fmt.Sprint(b.Rows) + dir
}

// Schema implements Node.
func (w *Window) Schema() *arrow.Schema {
	fs := append([]arrow.Field{}, w.Child.Schema().Fields()...)
	for _, f := range w.Funcs {
		fs = append(fs, arrow.Field{Name: f.Name, Type: f.Type, Nullable: true})
	}
	return arrow.NewSchema(fs, nil)
}

// Children implements Node.
func (w *Window) Children() []Node { return []Node{w.Child} }

// String implements Node.
func (w *Window) String() string {
	fs := make([]string, len(w.Funcs))
	for i, f := range w.Funcs {
		arg := ""
		if f.Arg != nil {
			arg = f.Arg.String()
		}
		fs[i] = fmt.Sprintf("%s(%s)", f.Fn, arg)
	}
	frame := ""
	if w.Frame.norm() != FrameDefault {
		frame = ", " + w.Frame.String()
	}
	if w.Presorted {
		frame += ", presorted"
	} else if w.Limit != nil {
		frame += ", keeps " + w.Limit.String()
	}
	return fmt.Sprintf("Window(%s, partition by [%s], order by [%s]%s)", strings.Join(fs, ", "), exprList(w.PartitionBy), sortKeyList(w.OrderBy), frame)
}

// WindowFuncReadsFrame reports whether the window function fn (lower
// case) reads its frame; ranking functions and LAG/LEAD ignore it.
func WindowFuncReadsFrame(fn string) bool { return windowFuncKinds[fn] }

// windowFuncKinds says which functions read the frame.
var windowFuncKinds = map[string]bool{
	"row_number": false, "rank": false, "dense_rank": false, "percent_rank": false, "cume_dist": false,
	"ntile": false, "lag": false, "lead": false,
	"first_value": true, "last_value": true, "nth_value": true,
	"sum": true, "avg": true, "min": true, "max": true, "count": true, "count_star": true,
	"stddev_samp": true, "stddev_pop": true, "var_samp": true, "var_pop": true,
	"bit_and": true, "bit_or": true, "bit_xor": true,
}

// Open implements Node.
func (w *Window) Open(tc *TaskContext, inputs []Stream) (Stream, error) {
	if len(inputs) != 1 {
		return nil, fmt.Errorf("%w: Window wants 1 input, got %d", ErrInternal, len(inputs))
	}
	for _, f := range w.Funcs {
		fn := strings.ToLower(f.Fn)
		if _, ok := windowFuncKinds[fn]; !ok {
			return nil, fmt.Errorf("%w: the window function %s (SHOW BUILTINS lists the window functions fsql has)", ErrNotImplemented, f.Fn)
		}
		switch fn {
		case "row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile", "count_star":
		default:
			if f.Arg == nil {
				return nil, errs.New(errs.Internal, "window function %s needs an argument", f.Fn)
			}
		}
	}
	fr := w.Frame.norm()
	for _, b := range []FrameBound{fr.Start, fr.End} {
		if (b.Kind == Preceding || b.Kind == Following) && fr.Unit == FrameRange && (b.Value == nil || len(w.OrderBy) != 1) {
			return nil, errs.New(errs.Internal, "RANGE frame with an offset needs one ORDER BY key and a bound expression")
		}
	}
	keys := windowSortKeys(w.PartitionBy, w.OrderBy)
	buf := newSortBuffer(tc, w.Child.Schema(), keys, "window", -1)
	buf.spillRest = true
	if w.Limit != nil && !w.Presorted {
		buf.keep = w.Limit.keeper(keys, len(w.PartitionBy))
	}
	return &windowStream{w: w, in: inputs[0], keys: keys, buf: buf, schema: w.Schema(), presorted: w.Presorted}, nil
}

// windowStream sorts its input by partition and order keys (an external
// sort past its share of the budget) and computes the functions over
// whole partitions: over all rows at once when the sort stayed in
// memory, else chunk by chunk of the merged runs, each chunk ending at a
// partition boundary. A partition larger than the share goes to a spill
// file of its own and is computed record by record from it
// (window_spill.go), or, when every function is row_number, rank or
// dense_rank, is computed batch by batch as the merge hands it out
// (window_spill_stream.go).
type windowStream struct {
	w      *Window
	in     Stream
	keys   []SortKey
	buf    *sortBuffer
	schema *arrow.Schema
	done   bool
	out    []arrow.Array
	n, pos int

	// Chunked mode (the sort spilled): sorted rows read so far and not
	// computed, the start of the last partition among them, and the last
	// row's partition keys to compare the next batch with.
	acc     []arrow.RecordBatch
	accRows int
	lastCut int           // rows of acc before the last partition's first row
	prevKey []arrow.Array // partition keys of the last batch read
	prevRow int           // its last row
	eof     bool
	res     *Reservation
	waiting arrow.RecordBatch // read, not yet in the chunk (no room)
	// big is the partition larger than the share being computed from its
	// spill file (window_spill.go).
	big *bigPartition
	// presorted: the input is in window order (Window.Presorted); it is
	// read chunk by chunk as the sorted rows, never drained or sorted.
	presorted bool
}

// windowChunkRows is how many sorted rows chunked mode gathers at most
// before it computes the complete partitions among them; it stops
// earlier once the chunk holds a quarter of the window's share, leaving
// the rest for the sorted copy, the frames and the output.
const windowChunkRows = 8 * BatchSize

// chunkFull reports whether the chunk holds enough rows to compute.
func (s *windowStream) chunkFull() bool {
	if s.accRows >= windowChunkRows {
		return true
	}
	share := s.res.Share()
	return share >= 0 && s.res.Size() >= share/4
}

func (s *windowStream) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !s.done && s.presorted {
		s.res = s.buf.tc.reservation("window", true)
		s.done = true
	}
	if !s.done {
		if err := s.buf.drain(ctx, s.in); err != nil {
			return nil, err
		}
		s.in.Close()
		s.in = nil
		if err := s.buf.finish(ctx, 0); err != nil {
			return nil, err
		}
		if !s.buf.spilled() {
			if err := s.computeAll(s.buf.cols, s.buf.n); err != nil {
				return nil, err
			}
		} else {
			s.res = s.buf.tc.reservation("window", true)
		}
		s.done = true
	}
	for {
		if s.pos < s.n {
			end := min(s.pos+BatchSize, s.n)
			cols := sliceArrays(s.out, s.pos, end)
			n := end - s.pos
			s.pos = end
			return newBatch(s.schema, cols, n), nil
		}
		if s.big != nil {
			b, err := s.big.next(ctx)
			if err == io.EOF {
				s.big.close()
				s.big = nil
				continue
			}
			return b, err
		}
		if s.res == nil || (s.eof && s.accRows == 0 && s.waiting == nil) {
			return nil, io.EOF
		}
		if err := s.nextChunk(ctx); err != nil {
			return nil, err
		}
	}
}

// nextChunk reads merged rows until it holds complete partitions worth
// computing (or the input ended) and computes them.
func (s *windowStream) nextChunk(ctx context.Context) error {
	releaseArrays(s.out)
	s.out, s.n, s.pos = nil, 0, 0
	if err := s.res.Resize(s.accCost()); err != nil { // the output is gone
		return err
	}
	for !s.eof && (s.lastCut == 0 || !s.chunkFull()) {
		b := s.waiting
		s.waiting = nil
		if b == nil {
			var err error
			if b, err = s.nextSorted(ctx); err == io.EOF {
				s.eof = true
				break
			} else if err != nil {
				return err
			}
		}
		if err := s.res.Grow(s.rowsCost(b)); err != nil {
			if !s.buf.tc.canSpill(err) {
				b.Release()
				return err
			}
			if s.lastCut > 0 {
				// Compute what is complete first; the batch waits in
				// flight until that output was handed out.
				s.waiting = b
				return s.computeCut()
			}
			// The chunk is one partition so far (or empty): look for its
			// end in this batch, held in flight past the share.
			return s.refused(ctx, b)
		}
		if err := s.append(b); err != nil {
			return err
		}
	}
	if s.eof {
		s.lastCut = s.accRows // every partition is complete
	}
	if s.lastCut == 0 {
		return nil
	}
	return s.computeCut()
}

// nextSorted returns the next batch of rows in window order: from the
// sort, or straight from a presorted input (empty batches skipped, since
// partition boundaries are found from a batch's last row).
func (s *windowStream) nextSorted(ctx context.Context) (arrow.RecordBatch, error) {
	if !s.presorted {
		return s.buf.next(ctx)
	}
	for {
		b, err := s.in.Next(ctx)
		if err != nil {
			return nil, err
		}
		if b.NumRows() > 0 {
			return b, nil
		}
		b.Release()
	}
}

// refused takes batch b, which the share refused, when the chunk holds
// one partition so far (or nothing). If the partition ends in b and fits
// with its rows of b, it is computed and the rest of b waits; otherwise
// the partition is written to a file of its own.
func (s *windowStream) refused(ctx context.Context, b arrow.RecordBatch) error {
	cut, err := s.firstCut(b, s.accRows > 0)
	if err != nil {
		b.Release()
		return err
	}
	switch {
	case cut < 0: // all of b is the partition's, which goes on
		if err := s.append(b); err != nil {
			return err
		}
		return s.spillPartition(ctx, false)
	case cut == 0: // the partition ended with the chunk
		s.waiting = b
		s.lastCut = s.accRows
		return s.computeCut()
	}
	head := b.NewSlice(0, int64(cut))
	s.waiting = b.NewSlice(int64(cut), b.NumRows())
	b.Release()
	fits := s.res.Grow(s.rowsCost(head)) == nil
	if err := s.append(head); err != nil {
		return err
	}
	if !fits {
		return s.spillPartition(ctx, true)
	}
	s.lastCut = s.accRows
	return s.computeCut()
}

// append adds a sorted batch to the chunk, moving lastCut to the start of
// its last partition.
func (s *windowStream) append(b arrow.RecordBatch) error {
	np := len(s.w.PartitionBy)
	pk, err := evalExprs(s.buf.ec, s.w.PartitionBy, b)
	if err != nil {
		b.Release()
		return err
	}
	n := int(b.NumRows())
	cut := -1 // last row of b that starts a partition
	if np > 0 {
		within, err := keyCmps(pk, s.keys[:np])
		if err != nil {
			releaseArrays(pk)
			b.Release()
			return err
		}
		for i := n - 1; i > 0; i-- {
			if within(i-1, i) != 0 {
				cut = i
				break
			}
		}
		if cut < 0 && s.prevKey != nil {
			same, err := crossEqual(s.prevKey, s.prevRow, pk, 0)
			if err != nil {
				releaseArrays(pk)
				b.Release()
				return err
			}
			if !same {
				cut = 0
			}
		}
	}
	if cut >= 0 {
		s.lastCut = s.accRows + cut
	}
	s.acc = append(s.acc, b)
	s.accRows += n
	releaseArrays(s.prevKey)
	s.prevKey, s.prevRow = pk, n-1
	return nil
}

// computeCut computes the window over the complete partitions of the
// chunk (rows [0, lastCut)) and keeps the rest (a copy, so the computed
// rows' memory is freed).
func (s *windowStream) computeCut() error {
	all, err := concatColumns(s.buf.ec.Alloc, s.buf.schema, s.acc)
	if err != nil {
		return err
	}
	defer releaseArrays(all)
	cut, rows := s.lastCut, s.accRows
	releaseBatches(s.acc)
	s.acc = nil
	var rest arrow.RecordBatch
	if cut < rows {
		idx := make([]int32, rows-cut)
		for i := range idx {
			idx[i] = int32(cut + i)
		}
		cols, err := takeArrays(s.buf.ec.Alloc, all, idx)
		if err != nil {
			return err
		}
		rest = newBatch(s.buf.schema, cols, len(idx))
	}
	head := sliceArrays(all, 0, cut)
	err = s.computeAll(head, cut)
	releaseArrays(head)
	s.accRows, s.lastCut = 0, 0
	if err != nil {
		if rest != nil {
			rest.Release()
		}
		return err
	}
	if rest != nil {
		s.acc = []arrow.RecordBatch{rest}
		s.accRows = int(rest.NumRows())
	}
	return s.res.Resize(s.accCost() + arraysBytes(s.out))
}

// accCost is what the chunk's rows are charged.
func (s *windowStream) accCost() int64 {
	var n int64
	for _, b := range s.acc {
		n += s.rowsCost(b)
	}
	return n
}

// rowsCost is what a batch of the chunk is charged: as a sorted batch,
// and for its output (a copy of its columns and about 16 bytes a row per
// function), so a chunk stops before what it computes would pass the
// share.
func (s *windowStream) rowsCost(b arrow.RecordBatch) int64 {
	return sortCost(b) + recordBytes(b) + 16*b.NumRows()*int64(len(s.w.Funcs))
}

// crossEqual reports whether row i of keys a equals row j of keys b
// (NULL equal to NULL), for partition boundaries across batches.
func crossEqual(a []arrow.Array, i int, b []arrow.Array, j int) (bool, error) {
	for k := range a {
		mk, err := newMergeKey(a[k].DataType(), 2, false, true)
		if err != nil {
			return false, err
		}
		if err := mk.set(0, a[k]); err != nil {
			return false, err
		}
		if err := mk.set(1, b[k]); err != nil {
			mk.clear(0)
			return false, err
		}
		c := mk.cmp(0, i, 1, j)
		mk.clear(0)
		mk.clear(1)
		if c != 0 {
			return false, nil
		}
	}
	return true, nil
}

// layout is the sorted input's partitions and peer groups: partStart[i]
// and partEnd[i] bound row i's partition, peer[i] numbers its peer group
// (rows equal on every order key, numbered across partitions), peerStart
// and peerEnd bound each group.
type layout struct {
	n                  int
	partStart, partEnd []int32
	peer               []int32
	peerStart, peerEnd []int32
	peerFirstInPart    []bool
	// orderKey is the single ORDER BY key's column (RANGE offsets only).
	orderKey arrow.Array
}

// computeAll computes every function over n rows sorted by partition and
// order keys, setting s.out to the input columns followed by one column
// per function.
func (s *windowStream) computeAll(sortedCols []arrow.Array, n int) error {
	s.out, s.n, s.pos = nil, 0, 0
	if n == 0 {
		return nil
	}
	keys := s.keys
	ec := s.buf.ec
	sortedBatch := array.NewRecordBatch(s.buf.schema, sortedCols, int64(n))
	defer sortedBatch.Release()
	exprs := make([]expr.Expr, len(keys))
	for i, k := range keys {
		exprs[i] = k.Expr
	}
	keyCols, err := evalExprs(ec, exprs, sortedBatch)
	if err != nil {
		return err
	}
	defer releaseArrays(keyCols)
	np := len(s.w.PartitionBy)
	partCmp, err := keyCmps(keyCols[:np], keys[:np])
	if err != nil {
		return err
	}
	orderCmp, err := keyCmps(keyCols[np:], keys[np:])
	if err != nil {
		return err
	}
	l := &layout{n: n, partStart: make([]int32, n), partEnd: make([]int32, n), peer: make([]int32, n)}
	for i := 0; i < n; i++ {
		newPart := i == 0 || (np > 0 && partCmp(i-1, i) != 0)
		newPeer := newPart || (len(s.w.OrderBy) > 0 && orderCmp(i-1, i) != 0)
		if newPart {
			l.partStart[i] = int32(i)
		} else {
			l.partStart[i] = l.partStart[i-1]
		}
		if newPeer {
			if len(l.peerStart) > 0 {
				l.peerEnd = append(l.peerEnd, int32(i))
			}
			l.peerStart = append(l.peerStart, int32(i))
			l.peerFirstInPart = append(l.peerFirstInPart, newPart)
		}
		l.peer[i] = int32(len(l.peerStart) - 1)
	}
	l.peerEnd = append(l.peerEnd, int32(n))
	for i := n - 1; i >= 0; i-- {
		if i == n-1 || l.partStart[i+1] != l.partStart[i] {
			l.partEnd[i] = int32(i + 1)
		} else {
			l.partEnd[i] = l.partEnd[i+1]
		}
	}
	if len(s.w.OrderBy) == 1 {
		l.orderKey = keyCols[np]
	}
	out := make([]arrow.Array, 0, len(sortedCols)+len(s.w.Funcs))
	for _, c := range sortedCols {
		c.Retain()
		out = append(out, c)
	}
	for _, f := range s.w.Funcs {
		a, err := s.function(f, sortedBatch, l)
		if err != nil {
			releaseArrays(out)
			return err
		}
		if !arrow.TypeEqual(a.DataType(), f.Type) {
			c, err := castArray(ec.Alloc, a, f.Type)
			a.Release()
			if err != nil {
				releaseArrays(out)
				return err
			}
			a = c
		}
		out = append(out, a)
	}
	s.out, s.n = out, n
	return nil
}

func (s *windowStream) function(f WindowFunc, sorted arrow.RecordBatch, l *layout) (arrow.Array, error) {
	alloc := s.buf.ec.Alloc
	n := l.n
	fn := strings.ToLower(f.Fn)
	switch fn {
	case "row_number", "rank", "dense_rank", "ntile":
		return fixedArray(alloc, arrow.PrimitiveTypes.Int64, rankValues(fn, l, f.N), nil), nil
	case "percent_rank", "cume_dist":
		vals := make([]float64, n)
		for i := range vals {
			rows := float64(l.partEnd[i] - l.partStart[i])
			if fn == "cume_dist" {
				vals[i] = float64(l.peerEnd[l.peer[i]]-l.partStart[i]) / rows
			} else if rows > 1 {
				vals[i] = float64(l.peerStart[l.peer[i]]-l.partStart[i]) / (rows - 1)
			}
		}
		return fixedArray(alloc, arrow.PrimitiveTypes.Float64, vals, nil), nil
	}
	var arg arrow.Array
	argType := arrow.DataType(arrow.PrimitiveTypes.Int64)
	if f.Arg != nil {
		a, err := f.Arg.Eval(s.buf.ec, sorted)
		if err != nil {
			return nil, err
		}
		defer a.Release()
		arg, argType = a, a.DataType()
	}
	switch fn {
	case "lag", "lead":
		idx := make([]int32, n)
		d := f.N
		if fn == "lag" {
			d = -d
		}
		for i := range idx {
			j := int64(i) + d
			if j < int64(l.partStart[i]) || j >= int64(l.partEnd[i]) {
				idx[i] = -1
			} else {
				idx[i] = int32(j)
			}
		}
		return s.takeOrDefault(arg, idx, f.Default)
	}
	fr := s.w.Frame.norm()
	if fn == "first_value" || fn == "last_value" || fn == "nth_value" {
		lo, hi, err := s.frameBounds(fr, l)
		if err != nil {
			return nil, err
		}
		idx := make([]int32, n)
		for i := range idx {
			var j int64
			switch fn {
			case "first_value":
				j = int64(lo[i])
			case "last_value":
				j = int64(hi[i]) - 1
			default:
				j = int64(lo[i]) + f.N - 1
			}
			if lo[i] >= hi[i] || j < int64(lo[i]) || j >= int64(hi[i]) {
				j = -1
			}
			idx[i] = int32(j)
		}
		return s.takeOrDefault(arg, idx, nil)
	}
	return s.aggregate(fn, f, arg, argType, fr, l)
}

// rankValues computes row_number, rank, dense_rank and ntile.
func rankValues(fn string, l *layout, buckets int64) []int64 {
	vals := make([]int64, l.n)
	dense := int64(0)
	for i := range vals {
		ps := int64(l.partStart[i])
		switch fn {
		case "row_number":
			vals[i] = int64(i) - ps + 1
		case "rank":
			vals[i] = int64(l.peerStart[l.peer[i]]) - ps + 1
		case "dense_rank":
			if int64(i) == ps {
				dense = 0
			}
			if int(l.peerStart[l.peer[i]]) == i {
				dense++
			}
			vals[i] = dense
		default:
			// ntile: the first rows%buckets buckets hold one row more.
			rows, k := int64(l.partEnd[i])-ps, int64(i)-ps
			q, r := rows/buckets, rows%buckets
			if q == 0 {
				vals[i] = k + 1
			} else if k < r*(q+1) {
				vals[i] = k/(q+1) + 1
			} else {
				vals[i] = r + (k-r*(q+1))/q + 1
			}
		}
	}
	return vals
}

// takeOrDefault gathers rows idx of arg; -1 gives def (NULL when def is
// nil).
func (s *windowStream) takeOrDefault(arg arrow.Array, idx []int32, def *expr.Literal) (arrow.Array, error) {
	alloc := s.buf.ec.Alloc
	if def == nil || def.Value == nil {
		out, err := takeArrays(alloc, []arrow.Array{arg}, idx)
		if err != nil {
			return nil, err
		}
		return out[0], nil
	}
	// Gather from arg followed by one row holding the default.
	one := array.NewRecordBatch(arrow.NewSchema(nil, nil), nil, 1)
	defer one.Release()
	d, err := def.Eval(s.buf.ec, one)
	if err != nil {
		return nil, err
	}
	defer d.Release()
	both, err := concatArrays(alloc, arg, d)
	if err != nil {
		return nil, err
	}
	defer both.Release()
	n := int32(arg.Len())
	for i, j := range idx {
		if j < 0 {
			idx[i] = n
		}
	}
	out, err := takeArrays(alloc, []arrow.Array{both}, idx)
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

func concatArrays(alloc memory.Allocator, a, b arrow.Array) (arrow.Array, error) {
	if expr.CollationOf(a.DataType()) != nil {
		s, err := array.Concatenate([]arrow.Array{expr.Storage(a), expr.Storage(b)}, alloc)
		if err != nil {
			return nil, errs.Wrap(errs.Internal, "window default: %w", err)
		}
		return expr.Collated(a.DataType(), s), nil
	}
	out, err := array.Concatenate([]arrow.Array{a, b}, alloc)
	if err != nil {
		return nil, errs.Wrap(errs.Internal, "window default: %w", err)
	}
	return out, nil
}

// aggregate computes an aggregate over each row's frame. The common
// frames take the fast paths of aggState: by partition, or running over
// peer groups or rows; any other frame goes through a segment tree of
// states combined per row (O(n log n) combines).
func (s *windowStream) aggregate(fn string, f WindowFunc, arg arrow.Array, argType arrow.DataType, fr WindowFrame, l *layout) (arrow.Array, error) {
	alloc := s.buf.ec.Alloc
	st, err := newAggState(fn, argType, f.Type)
	if err != nil {
		return nil, err
	}
	ordered := len(s.w.OrderBy) > 0
	var groups []int32 // group of each row
	var starts []int32 // first row of each group
	var firstInPart []bool
	running := false
	switch {
	case fr.Start.Kind == UnboundedPreceding && fr.End.Kind == UnboundedFollowing,
		fr.Start.Kind == UnboundedPreceding && fr.End.Kind == CurrentRow && fr.Unit == FrameRange && !ordered:
		groups, starts = partGroups(l.partStart)
	case fr.Start.Kind == UnboundedPreceding && fr.End.Kind == CurrentRow && fr.Unit == FrameRange:
		groups, starts, firstInPart, running = l.peer, l.peerStart, l.peerFirstInPart, true
	case fr.Start.Kind == UnboundedPreceding && fr.End.Kind == CurrentRow:
		groups, starts, firstInPart = rowGroups(l.partStart)
		running = true
	default:
		lo, hi, err := s.frameBounds(fr, l)
		if err != nil {
			return nil, err
		}
		// The tree's states live only while this function is computed:
		// about three groups per row (nodes and results).
		need := int64(3*l.n) * segmentStateBytes
		if err := s.buf.tc.Memory.Reserve("window frames", need); err != nil {
			return nil, err
		}
		defer s.buf.tc.Memory.Release(need)
		return segmentAggregate(alloc, st, arg, lo, hi)
	}
	ng := len(starts)
	st.grow(ng)
	if err := st.update(groups, arg); err != nil {
		return nil, err
	}
	if running {
		// Each group also covers the earlier groups of its partition.
		for g := 1; g < ng; g++ {
			if !firstInPart[g] {
				st.combine(g, g-1)
			}
		}
	}
	perGroup, err := st.final(alloc, ng)
	if err != nil {
		return nil, err
	}
	defer perGroup.Release()
	res, err := takeArrays(alloc, []arrow.Array{perGroup}, groups)
	if err != nil {
		return nil, err
	}
	return res[0], nil
}

// segmentStateBytes estimates one group of an aggregate state (a 128-bit
// sum and a count, or a string's header, and its final value).
const segmentStateBytes = 48

// segmentAggregate folds rows [lo[i], hi[i]) for every row i: leaves of a
// segment tree hold one row each, inner nodes the combination of their
// children, and each row's result combines the O(log n) nodes covering
// its frame. States are groups: nodes [1, 2m), results [2m, 2m+n).
func segmentAggregate(alloc memory.Allocator, st aggState, arg arrow.Array, lo, hi []int32) (arrow.Array, error) {
	n := len(lo)
	m := n
	res := 2 * m
	st.grow(res + n)
	leaves := make([]int32, n)
	for i := range leaves {
		leaves[i] = int32(m + i)
	}
	if err := st.update(leaves, arg); err != nil {
		return nil, err
	}
	for v := m - 1; v >= 1; v-- {
		st.combine(v, 2*v)
		st.combine(v, 2*v+1)
	}
	for i := 0; i < n; i++ {
		a, b := int(lo[i])+m, int(hi[i])+m
		for a < b {
			if a&1 == 1 {
				st.combine(res+i, a)
				a++
			}
			if b&1 == 1 {
				b--
				st.combine(res+i, b)
			}
			a >>= 1
			b >>= 1
		}
	}
	all, err := st.final(alloc, res+n)
	if err != nil {
		return nil, err
	}
	defer all.Release()
	return array.NewSlice(all, int64(res), int64(res+n)), nil
}

// frameBounds returns each row's frame as rows [lo[i], hi[i]) of the
// sorted input (empty when lo >= hi).
func (s *windowStream) frameBounds(fr WindowFrame, l *layout) (lo, hi []int32, err error) {
	n := l.n
	lo, hi = make([]int32, n), make([]int32, n)
	var startVals, endVals *rangeBounds
	if fr.Unit == FrameRange {
		if startVals, err = s.rangeBounds(fr.Start, l); err != nil {
			return nil, nil, err
		}
		if startVals != nil {
			defer startVals.release()
		}
		if endVals, err = s.rangeBounds(fr.End, l); err != nil {
			return nil, nil, err
		}
		if endVals != nil {
			defer endVals.release()
		}
	}
	for i := 0; i < n; i++ {
		ps, pe := int64(l.partStart[i]), int64(l.partEnd[i])
		var a, b int64
		if fr.Unit == FrameRows {
			a = rowsBound(fr.Start, int64(i), false)
			b = rowsBound(fr.End, int64(i), true)
		} else {
			a = rangeBound(fr.Start, i, l, startVals, false)
			b = rangeBound(fr.End, i, l, endVals, true)
		}
		switch fr.Start.Kind {
		case UnboundedPreceding:
			a = ps
		case UnboundedFollowing:
			a = pe
		}
		switch fr.End.Kind {
		case UnboundedFollowing:
			b = pe
		case UnboundedPreceding:
			b = ps
		}
		a, b = max(ps, min(a, pe)), max(ps, min(b, pe))
		if b < a {
			b = a
		}
		lo[i], hi[i] = int32(a), int32(b)
	}
	return lo, hi, nil
}

// rowsBound is a ROWS bound of row i: the first row of the frame (start)
// or one past its last (end); callers clip it to the partition.
func rowsBound(b FrameBound, i int64, end bool) int64 {
	const far = 1 << 40 // past any partition, without overflow
	k := min(b.Rows, far)
	switch b.Kind {
	case Preceding:
		i -= k
	case Following:
		i += k
	}
	if end {
		i++
	}
	return i
}

// rangeBounds holds, for a RANGE N PRECEDING/FOLLOWING bound, the order
// key and each row's bound value, in one comparable type.
type rangeBounds struct {
	keys, bounds arrow.Array
	cmp          func(key, bound int) int // key[key] against bounds[bound]
	desc         bool
	nullsFirst   bool
	release      func()
}

func (s *windowStream) rangeBounds(b FrameBound, l *layout) (*rangeBounds, error) {
	return s.rangeBoundsOf(b, l.orderKey)
}

// rangeBoundsOf computes the bound values of the order keys key.
func (s *windowStream) rangeBoundsOf(b FrameBound, key arrow.Array) (*rangeBounds, error) {
	if b.Kind != Preceding && b.Kind != Following {
		return nil, nil
	}
	ec := s.buf.ec
	in := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "key", Type: key.DataType(), Nullable: true}}, nil), []arrow.Array{key}, int64(key.Len()))
	defer in.Release()
	bounds, err := b.Value.Eval(ec, in)
	if err != nil {
		return nil, err
	}
	keys := key
	keys.Retain()
	if !arrow.TypeEqual(bounds.DataType(), key.DataType()) {
		c, err := expr.NewCast(expr.NewColumn(0, key.DataType(), "key"), bounds.DataType())
		if err == nil {
			var k arrow.Array
			if k, err = c.Eval(ec, in); err == nil {
				keys.Release()
				keys = k
			}
		}
		if err != nil {
			keys.Release()
			bounds.Release()
			return nil, errs.Wrap(errs.Semantic, "RANGE frame over %s with a %s bound: %w", key.DataType(), bounds.DataType(), err)
		}
	}
	cmp, err := crossCmp(keys, bounds)
	if err != nil {
		keys.Release()
		bounds.Release()
		return nil, err
	}
	spec := s.w.OrderBy[0]
	return &rangeBounds{keys: keys, bounds: bounds, cmp: cmp, desc: spec.Desc, nullsFirst: spec.NullsFirst,
		release: func() { keys.Release(); bounds.Release() }}, nil
}

// crossCmp compares row i of a with row j of b (same type, neither NULL).
func crossCmp(a, b arrow.Array) (func(i, j int) int, error) {
	switch a.DataType().ID() {
	case arrow.INT8:
		return orderedCross(arrow.GetValues[int8](a.Data(), 1), arrow.GetValues[int8](b.Data(), 1)), nil
	case arrow.INT16:
		return orderedCross(arrow.GetValues[int16](a.Data(), 1), arrow.GetValues[int16](b.Data(), 1)), nil
	case arrow.INT32, arrow.DATE32:
		return orderedCross(arrow.GetValues[int32](a.Data(), 1), arrow.GetValues[int32](b.Data(), 1)), nil
	case arrow.INT64, arrow.TIMESTAMP:
		return orderedCross(arrow.GetValues[int64](a.Data(), 1), arrow.GetValues[int64](b.Data(), 1)), nil
	case arrow.UINT64:
		return orderedCross(arrow.GetValues[uint64](a.Data(), 1), arrow.GetValues[uint64](b.Data(), 1)), nil
	case arrow.FLOAT64:
		return orderedCross(arrow.GetValues[float64](a.Data(), 1), arrow.GetValues[float64](b.Data(), 1)), nil
	case arrow.DECIMAL128:
		av, bv := a.(*array.Decimal128), b.(*array.Decimal128)
		return func(i, j int) int { return av.Value(i).Cmp(bv.Value(j)) }, nil
	}
	return nil, fmt.Errorf("%w: a RANGE frame offset over a %s ORDER BY key: order by a number, DATE or DATETIME, or use ROWS", ErrNotImplemented, hive.SQLTypeName(a.DataType()))
}

func orderedCross[T fixedOrdered](a, b []T) func(i, j int) int {
	return func(i, j int) int {
		switch {
		case a[i] < b[j]:
			return -1
		case a[i] > b[j]:
			return 1
		}
		return 0
	}
}

// rangeBound is a RANGE bound of row i (first row, or one past the last).
func rangeBound(b FrameBound, i int, l *layout, rb *rangeBounds, end bool) int64 {
	switch b.Kind {
	case CurrentRow:
		g := l.peer[i]
		if end {
			return int64(l.peerEnd[g])
		}
		return int64(l.peerStart[g])
	case UnboundedPreceding, UnboundedFollowing:
		return 0 // set by the caller
	}
	ps, pe := int(l.partStart[i]), int(l.partEnd[i])
	g := l.peer[i]
	if expr.IsNull(l.orderKey, i) {
		// A NULL key's offset frame is its peers, the other NULLs.
		if end {
			return int64(l.peerEnd[g])
		}
		return int64(l.peerStart[g])
	}
	// The rows with a non-NULL key: [nnStart, nnEnd) of the partition.
	nnStart, nnEnd := ps, pe
	if rb.nullsFirst {
		for nnStart < pe && expr.IsNull(l.orderKey, nnStart) {
			nnStart = nextPeerStart(l, nnStart)
		}
	} else {
		for nnEnd > ps && expr.IsNull(l.orderKey, nnEnd-1) {
			nnEnd = int(l.peerStart[l.peer[nnEnd-1]])
		}
	}
	if expr.IsNull(rb.bounds, i) {
		if b.Kind == Preceding {
			return int64(nnStart)
		}
		return int64(nnEnd)
	}
	// before(j): row j sorts before the bound value.
	before := func(j int) bool {
		c := rb.cmp(j, i)
		if rb.desc {
			return c > 0
		}
		return c < 0
	}
	after := func(j int) bool {
		c := rb.cmp(j, i)
		if rb.desc {
			return c < 0
		}
		return c > 0
	}
	// The frame starts at the first row not before the bound and ends
	// after the last row not after it.
	lo, hi := nnStart, nnEnd
	test := before
	if end {
		test = func(j int) bool { return !after(j) }
	}
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if test(mid) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return int64(lo)
}

func nextPeerStart(l *layout, i int) int { return int(l.peerEnd[l.peer[i]]) }

func (s *windowStream) Close() {
	if s.in != nil {
		s.in.Close()
		s.in = nil
	}
	releaseArrays(s.out)
	s.out = nil
	s.n, s.pos = 0, 0
	releaseBatches(s.acc)
	s.acc = nil
	if s.waiting != nil {
		s.waiting.Release()
		s.waiting = nil
	}
	releaseArrays(s.prevKey)
	s.prevKey = nil
	if s.big != nil {
		s.big.close()
		s.big = nil
	}
	if s.res != nil {
		s.res.Free()
	}
	s.buf.release()
}

// rowGroups numbers every row as its own group (for ROWS frames).
func rowGroups(partStart []int32) (peer, start []int32, firstInPart []bool) {
	n := len(partStart)
	peer, start, firstInPart = make([]int32, n), make([]int32, n), make([]bool, n)
	for i := range partStart {
		peer[i], start[i], firstInPart[i] = int32(i), int32(i), partStart[i] == int32(i)
	}
	return peer, start, firstInPart
}

// partGroups numbers rows by partition (for whole-partition frames).
func partGroups(partStart []int32) (peer, start []int32) {
	peer = make([]int32, len(partStart))
	for i, ps := range partStart {
		if ps == int32(i) {
			start = append(start, int32(i))
		}
		peer[i] = int32(len(start) - 1)
	}
	return peer, start
}
