package exec

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// oneShot is a stream over fixed batches.
type oneShot struct{ batches []arrow.RecordBatch }

func (o *oneShot) Next(context.Context) (arrow.RecordBatch, error) {
	if len(o.batches) == 0 {
		return nil, io.EOF
	}
	b := o.batches[0]
	o.batches = o.batches[1:]
	return b, nil
}

func (o *oneShot) Close() {
	for _, b := range o.batches {
		b.Release()
	}
	o.batches = nil
}

func int64Batch(alloc memory.Allocator, vals ...int64) arrow.RecordBatch {
	bld := array.NewInt64Builder(alloc)
	defer bld.Release()
	bld.AppendValues(vals, nil)
	arr := bld.NewArray()
	defer arr.Release()
	sc := arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	return array.NewRecordBatch(sc, []arrow.Array{arr}, int64(len(vals)))
}

func TestMaxOneRow(t *testing.T) {
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer alloc.AssertSize(t, 0)
	run := func(batches ...arrow.RecordBatch) (int64, error) {
		s, err := (&MaxOneRow{}).Open(nil, []Stream{&oneShot{batches: batches}})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		var rows int64
		for {
			b, err := s.Next(context.Background())
			if err == io.EOF {
				return rows, nil
			}
			if err != nil {
				return rows, err
			}
			rows += b.NumRows()
			b.Release()
		}
	}
	if n, err := run(); err != nil || n != 0 {
		t.Fatalf("empty input: %d rows, %v", n, err)
	}
	if n, err := run(int64Batch(alloc), int64Batch(alloc, 7)); err != nil || n != 1 {
		t.Fatalf("one row: %d rows, %v", n, err)
	}
	if _, err := run(int64Batch(alloc, 7), int64Batch(alloc, 8)); !errors.Is(err, ErrExecution) {
		t.Fatalf("two rows in two batches: want ErrExecution, got %v", err)
	}
	if _, err := run(int64Batch(alloc, 7, 8)); !errors.Is(err, ErrExecution) {
		t.Fatalf("two rows in one batch: want ErrExecution, got %v", err)
	}
}
