package exec

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fsql-dev/fsql/exec/expr"
)

// Project computes one output column per expression.
type Project struct {
	Child Node
	Exprs []expr.Expr
	Names []string
}

// Schema implements Node.
func (p *Project) Schema() *arrow.Schema { return arrow.NewSchema(fieldsOf(p.Exprs, p.Names), nil) }

// Children implements Node.
func (p *Project) Children() []Node { return []Node{p.Child} }

// SplittableInputs implements SplitInputs: a projection maps each row alone.
func (p *Project) SplittableInputs() []bool { return []bool{true} }

// String implements Node.
func (p *Project) String() string {
	parts := make([]string, len(p.Exprs))
	for i, e := range p.Exprs {
		parts[i] = e.String()
		if i < len(p.Names) && p.Names[i] != "" && p.Names[i] != parts[i] {
			parts[i] += " AS " + p.Names[i]
		}
	}
	return "Project(" + strings.Join(parts, ", ") + ")"
}

// Open implements Node.
func (p *Project) Open(tc *TaskContext, inputs []Stream) (Stream, error) {
	if len(inputs) != 1 {
		return nil, fmt.Errorf("%w: Project wants 1 input, got %d", ErrInternal, len(inputs))
	}
	return &projectStream{p: p, schema: p.Schema(), in: inputs[0], ec: exprContext(tc)}, nil
}

type projectStream struct {
	p      *Project
	schema *arrow.Schema
	in     Stream
	ec     *expr.Context
}

func (s *projectStream) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.in == nil {
		return nil, io.EOF
	}
	b, err := s.in.Next(ctx)
	if err != nil {
		return nil, err
	}
	defer b.Release()
	cols, err := evalExprs(s.ec, s.p.Exprs, b)
	if err != nil {
		return nil, err
	}
	return newBatch(s.schema, cols, int(b.NumRows())), nil
}

func (s *projectStream) Close() {
	if s.in != nil {
		s.in.Close()
		s.in = nil
	}
}
