package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec"
)

// Test-only nodes for the scheduler and exchange tests.

var genSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "key", Type: arrow.PrimitiveTypes.Int64},
	{Name: "producer", Type: arrow.PrimitiveTypes.Int32},
}, nil)

// genSource is a split leaf like a scan: task t of p emits ids
// [t*PerTask, (t+1)*PerTask) with key = id % Keys, in batches of Batch
// rows. Infinite sources emit until cancelled.
type genSource struct {
	PerTask, Batch, Keys int
	Infinite             bool
	// FailTask/FailAt: task FailTask fails (or panics) at batch FailAt.
	FailTask, FailAt int
	Panic, Fail      bool
	// Retryable makes the failure retryable and only attempt 0 fail.
	Retryable bool
	// Single makes the node a constant relation (SingleTask).
	Single bool
	Name   string
	// HotTask emits HotFactor times PerTask rows (skew), when HotFactor
	// is above 1.
	HotTask, HotFactor int
	// Sized makes the source report its planned and consumed input bytes
	// (genRowBytes a row), as a scan does.
	Sized bool
	// Work is time spent on every batch (asleep, so tasks take measurable
	// time without competing for the test machine's cores).
	Work time.Duration
	// HotWork, when set, is the time task HotTask spends on every batch
	// instead of Work: data that costs more per byte, not more of it.
	HotWork time.Duration
}

// genRowBytes is the input bytes a Sized genSource counts per row.
const genRowBytes = 20

// rows is task's row count.
func (g *genSource) rows(task int) int {
	if g.HotFactor > 1 && task == g.HotTask {
		return g.PerTask * g.HotFactor
	}
	return g.PerTask
}

// TaskInputBytes implements exec.TaskSizedSource when Sized.
func (g *genSource) TaskInputBytes(_ context.Context, _ *exec.TaskContext, p int) ([]int64, error) {
	out := make([]int64, p)
	if g.Sized {
		for i := range out {
			out[i] = int64(g.rows(i)) * genRowBytes
		}
	}
	return out, nil
}

func (g *genSource) Schema() *arrow.Schema { return genSchema }
func (g *genSource) Children() []exec.Node { return nil }
func (g *genSource) String() string {
	if g.Name != "" {
		return g.Name
	}
	return fmt.Sprintf("Gen(%d rows/task)", g.PerTask)
}
func (g *genSource) SingleTask() bool { return g.Single }
func (g *genSource) Open(tc *exec.TaskContext, _ []exec.Stream) (exec.Stream, error) {
	start := int64(tc.Task * g.PerTask * max(g.HotFactor, 1))
	return &genStream{g: g, tc: tc, next: start, end: start + int64(g.rows(tc.Task))}, nil
}

type genStream struct {
	g         *genSource
	tc        *exec.TaskContext
	next, end int64
	batches   int
	closed    bool
}

var errTestFail = errors.New("injected failure")

func (s *genStream) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.closed || (!s.g.Infinite && s.next >= s.end) {
		return nil, io.EOF
	}
	if (s.g.Fail || s.g.Panic) && s.tc.Task == s.g.FailTask && s.batches == s.g.FailAt && (!s.g.Retryable || s.tc.Attempt == 0) {
		if s.g.Panic {
			panic("boom in genSource")
		}
		err := fmt.Errorf("%w: %w", exec.ErrExecution, errTestFail)
		if s.g.Retryable {
			err = errs.Transient(err)
		}
		return nil, err
	}
	if w := s.g.Work; w > 0 || s.g.HotWork > 0 {
		if s.g.HotWork > 0 && s.tc.Task == s.g.HotTask {
			w = s.g.HotWork
		}
		time.Sleep(w)
	}
	s.batches++
	n := int64(s.g.Batch)
	if !s.g.Infinite && s.next+n > s.end {
		n = s.end - s.next
	}
	ib := array.NewInt64Builder(s.tc.Alloc)
	kb := array.NewInt64Builder(s.tc.Alloc)
	pb := array.NewInt32Builder(s.tc.Alloc)
	defer ib.Release()
	defer kb.Release()
	defer pb.Release()
	for i := int64(0); i < n; i++ {
		id := s.next + i
		ib.Append(id)
		kb.Append(id % int64(s.g.Keys))
		pb.Append(int32(s.tc.Task))
	}
	s.next += n
	if s.g.Sized {
		s.tc.ReportInput(n * genRowBytes)
	}
	cols := []arrow.Array{ib.NewArray(), kb.NewArray(), pb.NewArray()}
	b := array.NewRecordBatch(genSchema, cols, n)
	for _, c := range cols {
		c.Release()
	}
	return b, nil
}

func (s *genStream) Close() { s.closed = true }

// tagTask appends the consumer task's index as column "consumer".
type tagTask struct{ Child exec.Node }

func (t *tagTask) Schema() *arrow.Schema {
	fs := append([]arrow.Field{}, t.Child.Schema().Fields()...)
	fs = append(fs, arrow.Field{Name: "consumer", Type: arrow.PrimitiveTypes.Int32})
	return arrow.NewSchema(fs, nil)
}
func (t *tagTask) Children() []exec.Node { return []exec.Node{t.Child} }
func (t *tagTask) String() string        { return "TagTask" }
func (t *tagTask) Open(tc *exec.TaskContext, in []exec.Stream) (exec.Stream, error) {
	return &tagStream{n: t, tc: tc, in: in[0]}, nil
}

type tagStream struct {
	n  *tagTask
	tc *exec.TaskContext
	in exec.Stream
}

func (s *tagStream) Next(ctx context.Context) (arrow.RecordBatch, error) {
	b, err := s.in.Next(ctx)
	if err != nil {
		return nil, err
	}
	defer b.Release()
	tb := array.NewInt32Builder(s.tc.Alloc)
	defer tb.Release()
	for i := int64(0); i < b.NumRows(); i++ {
		tb.Append(int32(s.tc.Task))
	}
	tag := tb.NewArray()
	defer tag.Release()
	cols := append(append([]arrow.Array{}, b.Columns()...), tag)
	return array.NewRecordBatch(s.n.Schema(), cols, b.NumRows()), nil
}

func (s *tagStream) Close() { s.in.Close() }

// concatNode emits all of its first child, then all of its second (a
// UNION ALL stand-in).
type concatNode struct{ A, B exec.Node }

func (c *concatNode) Schema() *arrow.Schema { return c.A.Schema() }
func (c *concatNode) Children() []exec.Node { return []exec.Node{c.A, c.B} }
func (c *concatNode) String() string        { return "Concat" }
func (c *concatNode) Open(_ *exec.TaskContext, in []exec.Stream) (exec.Stream, error) {
	return &concatStream{in: in}, nil
}

type concatStream struct {
	in []exec.Stream
	i  int
}

func (s *concatStream) Next(ctx context.Context) (arrow.RecordBatch, error) {
	for s.i < len(s.in) {
		b, err := s.in[s.i].Next(ctx)
		if errors.Is(err, io.EOF) {
			s.i++
			continue
		}
		return b, err
	}
	return nil, io.EOF
}

func (s *concatStream) Close() {
	for _, in := range s.in {
		in.Close()
	}
}
