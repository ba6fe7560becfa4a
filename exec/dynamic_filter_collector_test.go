package exec_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/exec/expr"
)

// dimValues is a one-column constant dimension of the given keys (nil is NULL).
func dimValues(typ arrow.DataType, keys ...any) *exec.Values {
	rows := make([][]expr.Expr, len(keys))
	for i, k := range keys {
		if k == nil {
			rows[i] = []expr.Expr{expr.Null(typ)}
		} else {
			rows[i] = []expr.Expr{expr.NewLiteral(k, typ)}
		}
	}
	return &exec.Values{Rows: rows, Names: []string{"k"}, Types: []arrow.DataType{typ}}
}

// recordingSink counts what a collector hands over.
type recordingSink struct {
	rows, finishes int
	addErr         error
}

func (s *recordingSink) Add(task, p int, keys []arrow.Array) error {
	s.rows += keys[0].Len()
	return s.addErr
}
func (s *recordingSink) Finish(task, p int) error { s.finishes++; return nil }

// failAfter emits its child's first batch, then fails.
type failAfter struct{ exec.Node }

func (f failAfter) Children() []exec.Node { return []exec.Node{f.Node} }
func (f failAfter) Open(tc *exec.TaskContext, in []exec.Stream) (exec.Stream, error) {
	return &failStream{in: in[0]}, nil
}

type failStream struct {
	in   exec.Stream
	sent bool
}

func (s *failStream) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if s.sent {
		return nil, fmt.Errorf("%w: boom", exec.ErrExecution)
	}
	s.sent = true
	return s.in.Next(ctx)
}
func (s *failStream) Close() { s.in.Close() }

// TestCollectorStream: batches pass through unchanged, Finish comes once
// at the end of input and never after an error.
func TestCollectorStream(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dim := dimValues(arrow.PrimitiveTypes.Int64, int64(1), int64(2), nil)
	key := []expr.Expr{expr.NewColumn(0, arrow.PrimitiveTypes.Int64, "k")}
	open := func(n exec.Node) exec.Stream {
		t.Helper()
		var inputs []exec.Stream
		for _, c := range n.Children() {
			s, err := c.Open(&exec.TaskContext{Alloc: mem, Parallelism: 1}, nil)
			if err != nil {
				t.Fatal(err)
			}
			inputs = append(inputs, s)
		}
		s, err := n.Open(&exec.TaskContext{Alloc: mem, Parallelism: 1}, inputs)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	sink := &recordingSink{}
	c := &exec.DynamicFilterDataCollector{ID: 2, Child: dim, Keys: key, Sink: sink}
	if !c.Schema().Equal(dim.Schema()) || c.String() != "DynamicFilterDataCollector(id=2, keys [k])" {
		t.Fatalf("schema %s, String %q", c.Schema(), c)
	}
	s := open(c)
	rows := 0
	for {
		b, err := s.Next(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		rows += int(b.NumRows())
		b.Release()
	}
	if _, err := s.Next(context.Background()); !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	s.Close()
	if rows != 3 || sink.rows != 3 || sink.finishes != 1 {
		t.Fatalf("rows %d, sink rows %d, finishes %d", rows, sink.rows, sink.finishes)
	}

	// A failing input: no Finish.
	sink = &recordingSink{}
	fc := &exec.DynamicFilterDataCollector{ID: 2, Keys: key, Sink: sink}
	fc.Child = failAfter{dim}
	s = func() exec.Stream {
		in, err := fc.Child.Open(nil, []exec.Stream{open(dim)})
		if err != nil {
			t.Fatal(err)
		}
		out, err := fc.Open(&exec.TaskContext{Alloc: mem, Parallelism: 1}, []exec.Stream{in})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}()
	b, err := s.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b.Release()
	if _, err := s.Next(context.Background()); !errors.Is(err, exec.ErrExecution) {
		t.Fatalf("want the input's error, got %v", err)
	}
	s.Close()
	if sink.finishes != 0 {
		t.Fatal("Finish after an error")
	}

	// A sink error fails the stream with the batch released.
	sink = &recordingSink{addErr: errors.New("full")}
	s = open(&exec.DynamicFilterDataCollector{ID: 3, Child: dim, Keys: key, Sink: sink})
	if _, err := s.Next(context.Background()); !errors.Is(err, exec.ErrExecution) || !strings.Contains(err.Error(), "collector 3") {
		t.Fatalf("sink error: %v", err)
	}
	s.Close()
}
