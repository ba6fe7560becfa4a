package shuffle

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/shuffle/keygroup"
)

// TestExchangeWriterSplitsByKeyGroup writes two producers' batches into a
// hash exchange and reads every task's key-group range back.
func TestExchangeWriterSplitsByKeyGroup(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	budget := exec.NewMemoryBudget(0)
	const maxP, producers = 10, 2
	ex := &Exchange{Kind: Hash, Keys: []expr.Expr{expr.NewColumn(0, arrow.PrimitiveTypes.Int64, "v")}, Child: leaf{}}
	buf := NewBuffer(ex, Hash, maxP, producers, budget)
	for p := 0; p < producers; p++ {
		w := buf.Writer(p, 0, mem)
		for i := int64(0); i < 3; i++ {
			if err := w.Write(context.Background(), coalesceTestBatch(mem, int64(p)*1000+i*100, 100)); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Write(context.Background(), coalesceTestBatch(mem, 0, 0)); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		w.Close()
		if err := buf.Commit(p, 0); err != nil {
			t.Fatal(err)
		}
	}
	// The three small batches of a producer were glued before the split,
	// and the split batch is stored whole.
	for p := 0; p < producers; p++ {
		if n := len(buf.store.batches[p]); n != 1 {
			t.Fatalf("producer %d stored %d batches, want its inputs glued into 1", p, n)
		}
	}
	if buf.TotalRows() != 600 {
		t.Fatalf("rows %d", buf.TotalRows())
	}
	if budget.Used() != buf.TotalBytes() || budget.Used() <= 0 {
		t.Fatalf("budget %d, buffer bytes %d", budget.Used(), buf.TotalBytes())
	}
	// Per key group: the counters match the rows stored there.
	for p := 0; p < producers; p++ {
		for kg := 0; kg < maxP; kg++ {
			r := buf.store.Open(kg, kg)
			var n int64
			for {
				b, err := readOne(r, producers, p)
				if b == nil {
					if err != nil {
						t.Fatal(err)
					}
					break
				}
				n += b.NumRows()
				h := make([]uint32, b.NumRows())
				exec.HashColumns([]arrow.Array{b.Column(0)}, h)
				for _, x := range h {
					if keygroup.ForHash(x, maxP) != kg {
						t.Fatalf("row in key group %d stored under %d", keygroup.ForHash(x, maxP), kg)
					}
				}
				b.Release()
			}
			r.Close()
			if n != buf.Rows(p, kg) {
				t.Fatalf("producer %d key group %d: read %d rows, counter %d", p, kg, n, buf.Rows(p, kg))
			}
		}
	}
	// Three tasks read (0,3) (4,6) (7,9): together every row exactly once.
	seen := map[int64]int{}
	for task := 0; task < 3; task++ {
		src := OpenReader(buf, 2, task, 3, mem)
		for {
			b, err := src.Next(context.Background())
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range b.Column(0).(*array.Int64).Int64Values() {
				seen[v]++
			}
			b.Release()
		}
		src.Close()
	}
	if len(seen) != 600 {
		t.Fatalf("distinct rows %d", len(seen))
	}
	for v, n := range seen {
		if n != 1 {
			t.Fatalf("row %d read %d times", v, n)
		}
	}
	buf.Release()
	buf.Release()
	if budget.Used() != 0 {
		t.Fatalf("budget still holds %d", budget.Used())
	}
}

// readOne reads the next batch of producer p from a reader over all
// producers, skipping other producers' batches.
func readOne(r SubpartitionReader, producers, p int) (arrow.RecordBatch, error) {
	mr := r.(*memReader)
	for {
		if mr.producer > p {
			return nil, nil
		}
		b, err := r.Next(context.Background())
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		// memReader advanced past the batch; its producer is still p
		// unless it moved on.
		if mr.producer == p {
			return b, nil
		}
		b.Release()
	}
}

func TestBroadcastBufferRetainsPerReader(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ex := &Exchange{Kind: Broadcast, Child: leaf{}}
	buf := NewBuffer(ex, Broadcast, 1, 1, nil)
	w := buf.Writer(0, 0, mem)
	if err := w.Write(context.Background(), coalesceTestBatch(mem, 0, 10)); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := buf.Commit(0, 0); err != nil {
		t.Fatal(err)
	}
	var held []arrow.RecordBatch
	for task := 0; task < 3; task++ {
		src := OpenReader(buf, 2, task, 3, mem)
		b, err := src.Next(context.Background())
		if err != nil || b.NumRows() != 10 {
			t.Fatalf("task %d: %v", task, err)
		}
		held = append(held, b)
		src.Close()
	}
	// The store drops its own reference; readers' batches stay valid.
	buf.Release()
	for _, b := range held {
		if b.Column(0).(*array.Int64).Value(9) != 9 {
			t.Fatal("batch damaged after the buffer was released")
		}
		b.Release()
	}
}

func TestExchangeOpenIsAnInternalError(t *testing.T) {
	_, err := (&Exchange{Kind: Gather, Child: leaf{}}).Open(nil, nil)
	if !errors.Is(err, exec.ErrInternal) {
		t.Fatalf("got %v", err)
	}
}

// BenchmarkHashExchange measures writing and reading back a shuffle of
// 8K-row batches through 128 key groups.
func BenchmarkHashExchange(b *testing.B) {
	mem := memory.NewGoAllocator()
	batches := make([]arrow.RecordBatch, 16)
	for i := range batches {
		batches[i] = coalesceTestBatch(mem, int64(i)*exec.BatchSize, exec.BatchSize)
	}
	defer xchgReleaseAll(batches)
	ex := &Exchange{Kind: Hash, Keys: []expr.Expr{expr.NewColumn(0, arrow.PrimitiveTypes.Int64, "v")}, Child: leaf{}}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		buf := NewBuffer(ex, Hash, 128, 1, nil)
		w := buf.Writer(0, 0, mem)
		for _, rb := range batches {
			rb.Retain()
			if err := w.Write(context.Background(), rb); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Flush(context.Background()); err != nil {
			b.Fatal(err)
		}
		if err := buf.Commit(0, 0); err != nil {
			b.Fatal(err)
		}
		src := OpenReader(buf, 2, 0, 1, mem)
		for {
			rb, err := src.Next(context.Background())
			if err != nil {
				break
			}
			rb.Release()
		}
		src.Close()
		buf.Release()
	}
	b.ReportMetric(float64(len(batches)*exec.BatchSize*b.N)/b.Elapsed().Seconds()/1e6, "Mrows/s")
}

// leaf is a childless node standing in for an exchange's child.
type leaf struct{}

func (leaf) Schema() *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int64}}, nil)
}
func (leaf) Children() []exec.Node { return nil }
func (leaf) String() string        { return "Leaf" }
func (leaf) Open(*exec.TaskContext, []exec.Stream) (exec.Stream, error) {
	return nil, errors.New("not opened in these tests")
}

func xchgReleaseAll(bs []arrow.RecordBatch) {
	for _, b := range bs {
		b.Release()
	}
}
