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

	"github.com/fsql-dev/fsql/connectors/hive"
	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/pruning"
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

// collected is what collector id of coord holds, as a scan of tb's
// column col sees it: the number of exact keys, or the coordinator's
// error (incomplete while no task finished).
func collected(coord *pruning.Coordinator, tb *hive.Table, id, col int) (int64, error) {
	d, err := coord.Prune(context.Background(), tb, tb.Partitions, []pruning.Target{{CollectorID: id, Column: col}})
	if err != nil {
		return 0, err
	}
	return d.Ledger[0].Keys, nil
}

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

// TestCollectorStream: batches pass through unchanged, the keys reach the
// run's coordinator under the collector's ID and the task's attempt, the
// attempt finishes at the end of input and never after an error.
func TestCollectorStream(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	tb := exec.ScanTestTable(t)
	const idCol = 0 // BIGINT, like the keys
	dim := dimValues(arrow.PrimitiveTypes.Int64, int64(1), int64(2), nil)
	key := []expr.Expr{expr.NewColumn(0, arrow.PrimitiveTypes.Int64, "k")}
	coord := pruning.NewCoordinator(pruning.CoordinatorConfig{})
	tc := &exec.TaskContext{Alloc: mem, Parallelism: 1, DynamicFilters: coord}
	open := func(n exec.Node) exec.Stream {
		t.Helper()
		var inputs []exec.Stream
		for _, c := range n.Children() {
			s, err := c.Open(tc, nil)
			if err != nil {
				t.Fatal(err)
			}
			inputs = append(inputs, s)
		}
		s, err := n.Open(tc, inputs)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	c := &exec.DynamicFilterDataCollector{ID: 2, Child: dim, Keys: key}
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
	// The attempt finished; its keys count once the runtime commits it.
	if _, err := collected(coord, tb, 2, idCol); !errors.Is(err, pruning.ErrIncomplete) {
		t.Fatalf("keys of an uncommitted attempt were used: %v", err)
	}
	if err := coord.Collector(2).Commit(0, 0); err != nil {
		t.Fatal(err)
	}
	if keys, err := collected(coord, tb, 2, idCol); rows != 3 || err != nil || keys != 2 {
		t.Fatalf("rows %d, collected %d keys (NULL never counts), %v", rows, keys, err)
	}

	// A failing input: the attempt never finishes (it could not be
	// committed), the filter stays incomplete.
	fc := &exec.DynamicFilterDataCollector{ID: 4, Keys: key}
	fc.Child = failAfter{dim}
	s = func() exec.Stream {
		in, err := fc.Child.Open(nil, []exec.Stream{open(dim)})
		if err != nil {
			t.Fatal(err)
		}
		out, err := fc.Open(tc, []exec.Stream{in})
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
	if _, err := collected(coord, tb, 4, idCol); !errors.Is(err, pruning.ErrIncomplete) {
		t.Fatalf("a failed task finished its filter: %v", err)
	}

	// A coordinator error fails the stream with the batch released, and
	// gets its exec sentinel (keys of a type filters do not take).
	fdim := dimValues(arrow.PrimitiveTypes.Float64, 1.5)
	fkey := []expr.Expr{expr.NewColumn(0, arrow.PrimitiveTypes.Float64, "k")}
	s = open(&exec.DynamicFilterDataCollector{ID: 3, Child: fdim, Keys: fkey})
	if _, err := s.Next(context.Background()); !errors.Is(err, exec.ErrNotImplemented) || !strings.Contains(err.Error(), "collector 3") {
		t.Fatalf("coordinator error: %v", err)
	}
	s.Close()

	// No coordinator in the task context: a runtime bug, said so.
	in := open(dim)
	defer in.Close() // a failed Open leaves its inputs to the caller
	if _, err := c.Open(&exec.TaskContext{Alloc: mem, Parallelism: 1}, []exec.Stream{in}); !errors.Is(err, exec.ErrInternal) {
		t.Fatalf("no coordinator: %v", err)
	}
}
