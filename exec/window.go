package exec

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fsql-dev/fsql/exec/expr"
)

// WindowFunc is one window function call: rank, dense_rank, row_number,
// or an aggregate (sum, avg, min, max, count, count_star) over the frame.
type WindowFunc struct {
	Fn   string
	Arg  expr.Expr
	Type arrow.DataType
	Name string
}

// Window computes window functions over partitions of its input. It holds
// the whole input (reserved as "window"), sorts it by PartitionBy then
// OrderBy, and appends one column per function to the input columns.
//
// Frames follow the SQL default: with ORDER BY, RANGE BETWEEN UNBOUNDED
// PRECEDING AND CURRENT ROW, so peers (rows equal on every order key) share
// one value; without ORDER BY the frame is the whole partition.
type Window struct {
	Child       Node
	PartitionBy []expr.Expr
	OrderBy     []SortKey
	Funcs       []WindowFunc
	// Frame of the aggregate functions (rank functions ignore it).
	Frame WindowFrame
}

// WindowFrame is the frame of a window's aggregate functions.
type WindowFrame int

const (
	// FrameDefault is SQL's default: with ORDER BY, RANGE BETWEEN
	// UNBOUNDED PRECEDING AND CURRENT ROW (peers share a value); without,
	// the whole partition.
	FrameDefault WindowFrame = iota
	// FrameRowsToCurrent is ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT
	// ROW: a running value per row, peers not included.
	FrameRowsToCurrent
	// FramePartition is BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED
	// FOLLOWING: the whole partition, whatever the order.
	FramePartition
)

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
	return fmt.Sprintf("Window(%s, partition by [%s], order by [%s])", strings.Join(fs, ", "), exprList(w.PartitionBy), sortKeyList(w.OrderBy))
}

// Open implements Node.
func (w *Window) Open(tc *TaskContext, inputs []Stream) (Stream, error) {
	if len(inputs) != 1 {
		return nil, fmt.Errorf("%w: Window wants 1 input, got %d", ErrInternal, len(inputs))
	}
	for _, f := range w.Funcs {
		switch strings.ToLower(f.Fn) {
		case "rank", "dense_rank", "row_number", "count_star":
		case "sum", "avg", "min", "max", "count":
			if f.Arg == nil {
				return nil, fmt.Errorf("%w: window function %s needs an argument", ErrPlan, f.Fn)
			}
		default:
			return nil, fmt.Errorf("%w: window function %s", ErrNotImplemented, f.Fn)
		}
	}
	return &windowStream{w: w, in: inputs[0], buf: newSortBuffer(tc, w.Child.Schema(), nil, "window"), schema: w.Schema()}, nil
}

type windowStream struct {
	w      *Window
	in     Stream
	buf    *sortBuffer
	schema *arrow.Schema
	done   bool
	out    []arrow.Array
	n, pos int
}

func (s *windowStream) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !s.done {
		if err := s.buf.drain(ctx, s.in, 0); err != nil {
			return nil, err
		}
		s.in.Close()
		s.in = nil
		if err := s.compute(); err != nil {
			return nil, err
		}
		s.done = true
	}
	if s.pos >= s.n {
		return nil, io.EOF
	}
	end := min(s.pos+BatchSize, s.n)
	cols := sliceArrays(s.out, s.pos, end)
	n := end - s.pos
	s.pos = end
	return newBatch(s.schema, cols, n), nil
}

func (s *windowStream) compute() error {
	b := s.buf
	if b.rows == 0 {
		return nil
	}
	// Sort by partition keys, then order keys.
	keys := make([]SortKey, 0, len(s.w.PartitionBy)+len(s.w.OrderBy))
	for _, p := range s.w.PartitionBy {
		keys = append(keys, SortKey{Expr: p, NullsFirst: true})
	}
	keys = append(keys, s.w.OrderBy...)
	b.keys = keys
	if err := b.sort(-1); err != nil {
		return err
	}
	n := b.n
	ec := b.ec
	sortedBatch := array.NewRecordBatch(b.schema, b.cols, int64(n))
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
	// partStart[i]: first row of i's partition; peer[i]: i's peer group
	// (numbered across partitions); peerStart: first row of each group.
	partStart := make([]int32, n)
	peer := make([]int32, n)
	var peerStart []int32
	var peerFirstInPart []bool
	for i := 0; i < n; i++ {
		newPart := i == 0 || (np > 0 && partCmp(i-1, i) != 0)
		newPeer := newPart || (len(s.w.OrderBy) > 0 && orderCmp(i-1, i) != 0)
		if newPart {
			partStart[i] = int32(i)
		} else {
			partStart[i] = partStart[i-1]
		}
		if newPeer {
			peerStart = append(peerStart, int32(i))
			peerFirstInPart = append(peerFirstInPart, newPart)
		}
		peer[i] = int32(len(peerStart) - 1)
	}
	out := make([]arrow.Array, 0, len(b.cols)+len(s.w.Funcs))
	for _, c := range b.cols {
		c.Retain()
		out = append(out, c)
	}
	for _, f := range s.w.Funcs {
		a, err := s.function(f, sortedBatch, partStart, peer, peerStart, peerFirstInPart)
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

func (s *windowStream) function(f WindowFunc, sorted arrow.RecordBatch, partStart, peer, peerStart []int32, peerFirstInPart []bool) (arrow.Array, error) {
	alloc := s.buf.ec.Alloc
	n := len(peer)
	fn := strings.ToLower(f.Fn)
	switch fn {
	case "row_number", "rank", "dense_rank":
		vals := make([]int64, n)
		dense := int64(0)
		for i := 0; i < n; i++ {
			switch fn {
			case "row_number":
				vals[i] = int64(i) - int64(partStart[i]) + 1
			case "rank":
				vals[i] = int64(peerStart[peer[i]]) - int64(partStart[i]) + 1
			default:
				if int(partStart[i]) == i {
					dense = 0
				}
				if int(peerStart[peer[i]]) == i {
					dense++
				}
				vals[i] = dense
			}
		}
		return fixedArray(alloc, arrow.PrimitiveTypes.Int64, vals, nil), nil
	}
	argType := arrow.DataType(arrow.PrimitiveTypes.Int64)
	var arg arrow.Array
	if f.Arg != nil {
		a, err := f.Arg.Eval(s.buf.ec, sorted)
		if err != nil {
			return nil, err
		}
		defer a.Release()
		arg, argType = a, a.DataType()
	}
	st, err := newAggState(fn, argType, f.Type)
	if err != nil {
		return nil, err
	}
	running := len(s.w.OrderBy) > 0
	switch s.w.Frame {
	case FrameRowsToCurrent:
		// Every row is its own "peer group": the running value stops at
		// the row itself.
		peer, peerStart, peerFirstInPart = rowGroups(partStart)
	case FramePartition:
		running = false
		peer, peerStart = partGroups(partStart)
	}
	groups := len(peerStart)
	st.grow(groups)
	if err := st.update(peer, arg); err != nil {
		return nil, err
	}
	if running {
		// Running frame: each peer group also covers all earlier groups of
		// its partition.
		for g := 1; g < groups; g++ {
			if !peerFirstInPart[g] {
				st.combine(g, g-1)
			}
		}
	}
	perGroup, err := st.final(alloc, groups)
	if err != nil {
		return nil, err
	}
	defer perGroup.Release()
	res, err := takeArrays(alloc, []arrow.Array{perGroup}, peer)
	if err != nil {
		return nil, err
	}
	return res[0], nil
}

func (s *windowStream) Close() {
	if s.in != nil {
		s.in.Close()
		s.in = nil
	}
	releaseArrays(s.out)
	s.out = nil
	s.n, s.pos = 0, 0
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
