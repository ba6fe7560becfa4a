package expr

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Expr is a bound, typed scalar expression evaluated a whole batch at a time.
//
// Expressions are immutable after construction and may be evaluated by many
// tasks concurrently. Column references are positional: they index the
// columns of the batch handed to Eval.
type Expr interface {
	// DataType is the Arrow type of every value Eval returns.
	DataType() arrow.DataType
	// Eval computes the expression for every row of batch. The result has
	// batch.NumRows() rows and belongs to the caller, who must Release it.
	Eval(ctx *Context, batch arrow.RecordBatch) (arrow.Array, error)
	// Children are the direct sub-expressions, for rewrites and EXPLAIN.
	Children() []Expr
	// String renders the expression for EXPLAIN (column names, not indexes).
	String() string
}

// Context carries what evaluation needs besides the batch.
type Context struct {
	// Alloc allocates every buffer of every result array.
	Alloc memory.Allocator
}

// Column refers to the Index-th column of the input batch.
type Column struct {
	Index int
	Type  arrow.DataType
	Name  string // for EXPLAIN only
}

// NewColumn returns a reference to column index of the input.
func NewColumn(index int, typ arrow.DataType, name string) *Column {
	return &Column{Index: index, Type: typ, Name: name}
}

// DataType implements Expr.
func (c *Column) DataType() arrow.DataType { return c.Type }

// Eval implements Expr: it hands out the input column with one more reference.
func (c *Column) Eval(_ *Context, batch arrow.RecordBatch) (arrow.Array, error) {
	if c.Index < 0 || c.Index >= int(batch.NumCols()) {
		return nil, fmt.Errorf("column #%d (%s) out of range for a batch of %d columns", c.Index, c.Name, batch.NumCols())
	}
	col := batch.Column(c.Index)
	col.Retain()
	return col, nil
}

// Children implements Expr.
func (c *Column) Children() []Expr { return nil }

// String implements Expr.
func (c *Column) String() string {
	if c.Name != "" {
		return c.Name
	}
	return fmt.Sprintf("#%d", c.Index)
}
