package exec

import (
	"context"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"

	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec/expr"
)

// Values emits constant rows (SELECT without FROM, VALUES lists). Only task
// 0 emits them, so a stage of several tasks still yields each row once.
type Values struct {
	Rows  [][]expr.Expr
	Names []string
	Types []arrow.DataType
}

// Schema implements Node.
func (v *Values) Schema() *arrow.Schema {
	fs := make([]arrow.Field, len(v.Types))
	for i, t := range v.Types {
		name := fmt.Sprintf("col%d", i)
		if i < len(v.Names) && v.Names[i] != "" {
			name = v.Names[i]
		}
		fs[i] = arrow.Field{Name: name, Type: t, Nullable: true}
	}
	return arrow.NewSchema(fs, nil)
}

// Children implements Node.
func (v *Values) Children() []Node { return nil }

// SingleTask implements SingleTasker: a constant relation runs as one
// task, or every task would repeat its rows.
func (v *Values) SingleTask() bool { return true }

// String implements Node.
func (v *Values) String() string { return fmt.Sprintf("Values(%d rows)", len(v.Rows)) }

// Open implements Node.
func (v *Values) Open(tc *TaskContext, inputs []Stream) (Stream, error) {
	if len(inputs) != 0 {
		return nil, fmt.Errorf("%w: Values takes no inputs", ErrInternal)
	}
	for r, row := range v.Rows {
		if len(row) != len(v.Types) {
			return nil, errs.New(errs.Internal, "VALUES row %d has %d columns, want %d", r+1, len(row), len(v.Types))
		}
	}
	return &valuesStream{v: v, tc: tc, done: tc != nil && tc.Task != 0}, nil
}

type valuesStream struct {
	v    *Values
	tc   *TaskContext
	done bool
}

func (s *valuesStream) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.done || len(s.v.Rows) == 0 {
		return nil, io.EOF
	}
	s.done = true
	alloc := allocOf(s.tc)
	ec := &expr.Context{Alloc: alloc}
	schema := s.v.Schema()
	// Each row is evaluated over a one-row batch without columns, then the
	// one-row results of a column are concatenated.
	one := array.NewRecordBatch(arrow.NewSchema(nil, nil), nil, 1)
	defer one.Release()
	cols := make([]arrow.Array, len(s.v.Types))
	parts := make([]arrow.Array, len(s.v.Rows))
	cctx := compute.WithAllocator(ctx, alloc)
	for c, typ := range s.v.Types {
		for r, row := range s.v.Rows {
			a, err := row[c].Eval(ec, one)
			if err == nil && !arrow.TypeEqual(a.DataType(), typ) {
				var casted arrow.Array
				casted, err = compute.CastArray(cctx, a, compute.SafeCastOptions(typ))
				a.Release()
				a = casted
			}
			if err != nil {
				releaseArrays(parts[:r])
				releaseArrays(cols[:c])
				return nil, fmt.Errorf("VALUES row %d column %d: %w", r+1, c+1, err)
			}
			parts[r] = a
		}
		col, err := array.Concatenate(parts, alloc)
		releaseArrays(parts)
		if err != nil {
			releaseArrays(cols[:c])
			return nil, errs.Wrap(errs.Internal, "VALUES column %d: %w", c+1, err)
		}
		cols[c] = col
	}
	return newBatch(schema, cols, len(s.v.Rows)), nil
}

func (s *valuesStream) Close() { s.done = true }
