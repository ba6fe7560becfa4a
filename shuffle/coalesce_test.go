package shuffle

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// batchListStream hands out prepared batches.
type batchListStream struct {
	bs     []arrow.RecordBatch
	closed bool
}

func (s *batchListStream) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if len(s.bs) == 0 {
		return nil, io.EOF
	}
	b := s.bs[0]
	s.bs = s.bs[1:]
	return b, nil
}

func (s *batchListStream) Close() {
	s.closed = true
	xchgReleaseAll(s.bs)
	s.bs = nil
}

func coalesceTestBatch(mem memory.Allocator, from, n int64) arrow.RecordBatch {
	schema := arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int64}, {Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	ib := array.NewInt64Builder(mem)
	sb := array.NewStringBuilder(mem)
	defer ib.Release()
	defer sb.Release()
	for i := from; i < from+n; i++ {
		ib.Append(i)
		if i%3 == 0 {
			sb.AppendNull()
		} else {
			sb.Append("x")
		}
	}
	a, s := ib.NewArray(), sb.NewArray()
	defer a.Release()
	defer s.Release()
	return array.NewRecordBatch(schema, []arrow.Array{a, s}, n)
}

func TestCoalesceGluesSmallBatches(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	// 30 batches of 7 rows, an empty one, a big one, 3 more small ones.
	var in []arrow.RecordBatch
	next := int64(0)
	add := func(n int64) {
		in = append(in, coalesceTestBatch(mem, next, n))
		next += n
	}
	for i := 0; i < 30; i++ {
		add(7)
	}
	add(0)
	add(100)
	for i := 0; i < 3; i++ {
		add(7)
	}
	src := &batchListStream{bs: in}
	c := newCoalesceStream(src, mem, 50)
	var sizes []int64
	want := int64(0)
	for {
		b, err := c.Next(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, b.NumRows())
		for _, v := range b.Column(0).(*array.Int64).Int64Values() {
			if v != want {
				t.Fatalf("value %d, want %d (order or rows lost)", v, want)
			}
			want++
		}
		s := b.Column(1).(*array.String)
		for i := 0; i < s.Len(); i++ {
			v := b.Column(0).(*array.Int64).Value(i)
			if s.IsNull(i) != (v%3 == 0) {
				t.Fatalf("row %d: null mismatch", v)
			}
		}
		b.Release()
	}
	c.Close()
	if want != next {
		t.Fatalf("got %d rows, want %d", want, next)
	}
	// 7-row batches glue to 56 (>= 50); the tail of 30*7=210 is 42,
	// then the 100-row batch arrives while 42 are pending -> 142.
	wantSizes := []int64{56, 56, 56, 142, 21}
	if len(sizes) != len(wantSizes) {
		t.Fatalf("batch sizes %v, want %v", sizes, wantSizes)
	}
	for i := range sizes {
		if sizes[i] != wantSizes[i] {
			t.Fatalf("batch sizes %v, want %v", sizes, wantSizes)
		}
	}
}

func TestCoalesceCloseEarlyReleasesPending(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	src := &batchListStream{bs: []arrow.RecordBatch{coalesceTestBatch(mem, 0, 3), coalesceTestBatch(mem, 3, 3), coalesceTestBatch(mem, 6, 100)}}
	c := newCoalesceStream(src, mem, 100)
	b, err := c.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if b.NumRows() != 106 {
		t.Fatalf("rows %d", b.NumRows())
	}
	b.Release()
	c.Close()
	c.Close()
	if !src.closed {
		t.Fatal("input not closed")
	}
}
