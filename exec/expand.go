package exec

import (
	"context"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fsql-dev/fsql/exec/expr"
)

// Expand implements ROLLUP / CUBE / GROUPING SETS below an aggregate: it
// emits every input row once per grouping set, as Exprs (those not in the
// set replaced by NULL), then an Int64 "grouping_id" column, then Pass
// evaluated unchanged. Bit i of grouping_id is set when Exprs[i] is not in
// the set (GROUPING() = 1: aggregated away), which also keeps a NULL from
// the data apart from a NULL made by rolling up.
type Expand struct {
	Child     Node
	Sets      [][]int
	Exprs     []expr.Expr
	Names     []string
	Pass      []expr.Expr
	PassNames []string
}

// Schema implements Node.
func (e *Expand) Schema() *arrow.Schema {
	fs := fieldsOf(e.Exprs, e.Names)
	fs = append(fs, arrow.Field{Name: "grouping_id", Type: arrow.PrimitiveTypes.Int64})
	fs = append(fs, fieldsOf(e.Pass, e.PassNames)...)
	return arrow.NewSchema(fs, nil)
}

// Children implements Node.
func (e *Expand) Children() []Node { return []Node{e.Child} }

// SplittableInputs implements SplitInputs: each input row expands alone.
func (e *Expand) SplittableInputs() []bool { return []bool{true} }

// String implements Node.
func (e *Expand) String() string {
	return fmt.Sprintf("Expand([%s], sets %v, pass [%s])", exprList(e.Exprs), e.Sets, exprList(e.Pass))
}

// Open implements Node.
func (e *Expand) Open(tc *TaskContext, inputs []Stream) (Stream, error) {
	if len(inputs) != 1 {
		return nil, fmt.Errorf("%w: Expand wants 1 input, got %d", ErrInternal, len(inputs))
	}
	if len(e.Exprs) > 62 {
		return nil, fmt.Errorf("%w: more than 62 grouping expressions", ErrNotImplemented)
	}
	ids := make([]int64, len(e.Sets))
	in := make([][]bool, len(e.Sets))
	for s, set := range e.Sets {
		in[s] = make([]bool, len(e.Exprs))
		for _, i := range set {
			if i < 0 || i >= len(e.Exprs) {
				return nil, fmt.Errorf("%w: grouping set refers to expression %d of %d", ErrInternal, i, len(e.Exprs))
			}
			in[s][i] = true
		}
		for i, kept := range in[s] {
			if !kept {
				ids[s] |= 1 << i
			}
		}
	}
	return &expandStream{e: e, in: inputs[0], ec: exprContext(tc), schema: e.Schema(), ids: ids, inSet: in}, nil
}

type expandStream struct {
	e      *Expand
	in     Stream
	ec     *expr.Context
	schema *arrow.Schema
	ids    []int64
	inSet  [][]bool
	vals   []arrow.Array // evaluated Exprs of the current batch
	pass   []arrow.Array
	n      int
	set    int
}

func (s *expandStream) Next(ctx context.Context) (arrow.RecordBatch, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if s.vals != nil && s.set < len(s.e.Sets) {
			b := s.emit(s.set)
			s.set++
			return b, nil
		}
		s.releaseCurrent()
		if s.in == nil {
			return nil, io.EOF
		}
		b, err := s.in.Next(ctx)
		if err != nil {
			return nil, err
		}
		vals, err := evalExprs(s.ec, s.e.Exprs, b)
		if err != nil {
			b.Release()
			return nil, err
		}
		pass, err := evalExprs(s.ec, s.e.Pass, b)
		s.n = int(b.NumRows())
		b.Release()
		if err != nil {
			releaseArrays(vals)
			return nil, err
		}
		if s.n == 0 || len(s.e.Sets) == 0 {
			releaseArrays(vals)
			releaseArrays(pass)
			continue
		}
		s.vals, s.pass, s.set = vals, pass, 0
	}
}

func (s *expandStream) emit(set int) arrow.RecordBatch {
	alloc := s.ec.Alloc
	cols := make([]arrow.Array, 0, s.schema.NumFields())
	for i, v := range s.vals {
		if s.inSet[set][i] {
			v.Retain()
			cols = append(cols, v)
		} else {
			cols = append(cols, array.MakeArrayOfNull(alloc, v.DataType(), s.n))
		}
	}
	ids := make([]int64, s.n)
	for i := range ids {
		ids[i] = s.ids[set]
	}
	cols = append(cols, fixedArray(alloc, arrow.PrimitiveTypes.Int64, ids, nil))
	for _, p := range s.pass {
		p.Retain()
		cols = append(cols, p)
	}
	return newBatch(s.schema, cols, s.n)
}

func (s *expandStream) releaseCurrent() {
	releaseArrays(s.vals)
	releaseArrays(s.pass)
	s.vals, s.pass = nil, nil
}

func (s *expandStream) Close() {
	if s.in != nil {
		s.in.Close()
		s.in = nil
	}
	s.releaseCurrent()
}
