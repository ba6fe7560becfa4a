package exec

import (
	"context"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/exec/kernels"
)

// Expand implements ROLLUP / CUBE / GROUPING SETS below an aggregate: it
// emits every input row once per grouping set, as Exprs (those not in the
// set replaced by NULL), then an Int64 "grouping_id" column, then Pass
// evaluated unchanged. Bit i of grouping_id is set when Exprs[i] is not in
// the set (GROUPING() = 1: aggregated away), which also keeps a NULL from
// the data apart from a NULL made by rolling up.
//
// EmptySetOnly, when set, is a boolean over the input: a row where it is
// TRUE is emitted only for the empty grouping set. ROLLUP over partial
// aggregates uses it for the seeded row that carries the grand total's
// empty states (so that an empty input still answers with one row); that
// row must not become a group of the finer sets.
type Expand struct {
	Child        Node
	Sets         [][]int
	Exprs        []expr.Expr
	Names        []string
	Pass         []expr.Expr
	PassNames    []string
	EmptySetOnly expr.Expr
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
	if e.EmptySetOnly != nil {
		return fmt.Sprintf("Expand([%s], sets %v, pass [%s], empty set only where %s)", exprList(e.Exprs), e.Sets, exprList(e.Pass), e.EmptySetOnly)
	}
	return fmt.Sprintf("Expand([%s], sets %v, pass [%s])", exprList(e.Exprs), e.Sets, exprList(e.Pass))
}

// Open implements Node.
func (e *Expand) Open(tc *TaskContext, inputs []Stream) (Stream, error) {
	if len(inputs) != 1 {
		return nil, fmt.Errorf("%w: Expand wants 1 input, got %d", ErrInternal, len(inputs))
	}
	if len(e.Exprs) > 62 {
		return nil, fmt.Errorf("%w: WITH ROLLUP or GROUPING() over %d GROUP BY expressions (fsql's limit is 62): group by fewer", ErrNotImplemented, len(e.Exprs))
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
	// keep, when the current batch has EmptySetOnly rows, selects the
	// other rows (those emitted for non-empty sets).
	keep []int32
	sel  bool
}

func (s *expandStream) Next(ctx context.Context) (arrow.RecordBatch, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if s.vals != nil && s.set < len(s.e.Sets) {
			b, err := s.emit(s.set)
			s.set++
			if err != nil || b != nil {
				return b, err
			}
			continue
		}
		s.releaseCurrent()
		if s.in == nil {
			return nil, io.EOF
		}
		b, err := s.in.Next(ctx)
		if err != nil {
			return nil, err
		}
		if err := s.load(b); err != nil {
			return nil, err
		}
	}
}

// load evaluates the expressions of input batch b (and releases it).
func (s *expandStream) load(b arrow.RecordBatch) error {
	defer b.Release()
	s.n = int(b.NumRows())
	if s.n == 0 || len(s.e.Sets) == 0 {
		return nil
	}
	s.keep, s.sel = s.keep[:0], false
	if s.e.EmptySetOnly != nil {
		m, err := s.e.EmptySetOnly.Eval(s.ec, b)
		if err != nil {
			return err
		}
		mask, ok := m.(*array.Boolean)
		if !ok {
			m.Release()
			return fmt.Errorf("%w: Expand's empty-set-only condition returned %s", ErrInternal, m.DataType())
		}
		only := kernels.Selection(mask, nil)
		if len(only) > 0 {
			// The rows for the finer sets are the others.
			s.sel = true
			k := 0
			for i := 0; i < s.n; i++ {
				if k < len(only) && int(only[k]) == i {
					k++
					continue
				}
				s.keep = append(s.keep, int32(i))
			}
		}
		m.Release()
	}
	vals, err := evalExprs(s.ec, s.e.Exprs, b)
	if err != nil {
		return err
	}
	pass, err := evalExprs(s.ec, s.e.Pass, b)
	if err != nil {
		releaseArrays(vals)
		return err
	}
	s.vals, s.pass, s.set = vals, pass, 0
	return nil
}

// emit returns the current batch's rows for grouping set set, or nil when
// it has none (every row is empty-set-only and the set is not empty).
func (s *expandStream) emit(set int) (arrow.RecordBatch, error) {
	alloc := s.ec.Alloc
	vals, pass, n := s.vals, s.pass, s.n
	if s.sel && len(s.e.Sets[set]) > 0 {
		if len(s.keep) == 0 {
			return nil, nil
		}
		var err error
		if vals, err = kernels.TakeAll(alloc, s.vals, s.keep); err != nil {
			return nil, err
		}
		defer releaseArrays(vals)
		if pass, err = kernels.TakeAll(alloc, s.pass, s.keep); err != nil {
			return nil, err
		}
		defer releaseArrays(pass)
		n = len(s.keep)
	}
	cols := make([]arrow.Array, 0, s.schema.NumFields())
	for i, v := range vals {
		if s.inSet[set][i] {
			v.Retain()
			cols = append(cols, v)
		} else {
			cols = append(cols, array.MakeArrayOfNull(alloc, v.DataType(), n))
		}
	}
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = s.ids[set]
	}
	cols = append(cols, fixedArray(alloc, arrow.PrimitiveTypes.Int64, ids, nil))
	for _, p := range pass {
		p.Retain()
		cols = append(cols, p)
	}
	return newBatch(s.schema, cols, n), nil
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
