package exec

import (
	"context"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// UnionAll concatenates its inputs' rows, input by input. The planner casts
// the inputs to one schema; batches are relabelled with the first input's
// schema so field names agree.
type UnionAll struct {
	Inputs []Node
}

// Schema implements Node: the first input's names and types; a column is
// nullable when it is in any input (a NOT NULL column of one table may
// meet the NULLs of another).
func (u *UnionAll) Schema() *arrow.Schema {
	first := u.Inputs[0].Schema()
	fs := first.Fields()
	changed := false
	for _, in := range u.Inputs[1:] {
		for i, f := range in.Schema().Fields() {
			if i < len(fs) && f.Nullable && !fs[i].Nullable {
				fs[i].Nullable, changed = true, true
			}
		}
	}
	if !changed {
		return first
	}
	md := first.Metadata()
	return arrow.NewSchema(fs, &md)
}

// Children implements Node.
func (u *UnionAll) Children() []Node { return u.Inputs }

// String implements Node.
func (u *UnionAll) String() string { return fmt.Sprintf("UnionAll(%d inputs)", len(u.Inputs)) }

// Open implements Node.
func (u *UnionAll) Open(tc *TaskContext, inputs []Stream) (Stream, error) {
	if len(inputs) != len(u.Inputs) {
		return nil, fmt.Errorf("%w: UnionAll wants %d inputs, got %d", ErrInternal, len(u.Inputs), len(inputs))
	}
	return &unionStream{schema: u.Schema(), ins: inputs}, nil
}

type unionStream struct {
	schema *arrow.Schema
	ins    []Stream
	cur    int
}

func (s *unionStream) Next(ctx context.Context) (arrow.RecordBatch, error) {
	for s.cur < len(s.ins) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		b, err := s.ins[s.cur].Next(ctx)
		if err == io.EOF {
			s.ins[s.cur].Close()
			s.ins[s.cur] = nil
			s.cur++
			continue
		}
		if err != nil {
			return nil, err
		}
		if b.Schema().Equal(s.schema) {
			return b, nil
		}
		if err := sameColumnTypes(s.schema, b.Schema()); err != nil {
			b.Release()
			return nil, err
		}
		out := array.NewRecordBatch(s.schema, b.Columns(), b.NumRows())
		b.Release()
		return out, nil
	}
	return nil, io.EOF
}

func (s *unionStream) Close() {
	for i, in := range s.ins {
		if in != nil {
			in.Close()
			s.ins[i] = nil
		}
	}
}

// sameColumnTypes checks that a batch can be relabelled with schema.
func sameColumnTypes(schema, got *arrow.Schema) error {
	if schema.NumFields() != got.NumFields() {
		return fmt.Errorf("%w: UNION ALL input has %d columns, want %d", ErrInternal, got.NumFields(), schema.NumFields())
	}
	for i, f := range schema.Fields() {
		if !arrow.TypeEqual(f.Type, got.Field(i).Type) {
			return fmt.Errorf("%w: UNION ALL column %d is %s in one input and %s in another", ErrInternal, i+1, f.Type, got.Field(i).Type)
		}
	}
	return nil
}
