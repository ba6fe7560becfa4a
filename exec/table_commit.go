package exec

import (
	"context"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fsql-dev/fsql/connectors/hive"
)

// TableCommit is the job commit of a write statement: it reads the
// Sinks' reports (one row per committed task, through a gather, so it
// starts only after every writing task committed), then publishes the
// committed tasks' files at once (hive.CommitWrite) and returns the
// statement's one-row result, the rows written. Nothing is published
// when it is cancelled or fails before that.
type TableCommit struct {
	Input Node
	Spec  *hive.WriteSpec
}

// TableCommitSchema is the result of a write statement.
var TableCommitSchema = arrow.NewSchema([]arrow.Field{
	{Name: "rows_affected", Type: arrow.PrimitiveTypes.Int64},
}, nil)

// Schema implements Node.
func (c *TableCommit) Schema() *arrow.Schema { return TableCommitSchema }

// Children implements Node.
func (c *TableCommit) Children() []Node { return []Node{c.Input} }

// String implements Node.
func (c *TableCommit) String() string {
	what := "insert into"
	switch {
	case c.Spec.Export != nil:
		what = "into outfile"
	case c.Spec.Create:
		what = "create"
	case c.Spec.Overwrite:
		what = "replace"
	}
	return fmt.Sprintf("TableCommit(%s %s)", what, c.Spec.Table)
}

// SingleTask implements SingleTasker: the commit happens once.
func (c *TableCommit) SingleTask() bool { return true }

// Open implements Node.
func (c *TableCommit) Open(tc *TaskContext, inputs []Stream) (Stream, error) {
	if len(inputs) != 1 {
		return nil, fmt.Errorf("%w: TableCommit takes one input", ErrInternal)
	}
	return &tableCommitStream{c: c, tc: tc, input: inputs[0]}, nil
}

type tableCommitStream struct {
	c     *TableCommit
	tc    *TaskContext
	input Stream
	done  bool
}

func (s *tableCommitStream) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if s.done {
		return nil, io.EOF
	}
	var rows int64
	for {
		b, err := s.input.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		col := b.Column(0).(*array.Int64)
		for i := 0; i < col.Len(); i++ {
			rows += col.Value(i)
		}
		b.Release()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	n, err := hive.CommitWrite(s.c.Spec, rows)
	if err != nil {
		return nil, err
	}
	s.done = true
	bld := array.NewInt64Builder(allocOf(s.tc))
	defer bld.Release()
	bld.Append(n)
	a := bld.NewArray()
	defer a.Release()
	return array.NewRecordBatch(TableCommitSchema, []arrow.Array{a}, 1), nil
}

func (s *tableCommitStream) Close() {
	if s.input != nil {
		s.input.Close()
		s.input = nil
	}
}
