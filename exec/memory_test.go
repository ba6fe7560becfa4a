package exec

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/exec/expr"
)

// TestReserveIsAtomic: a reserver whose request fits never fails because
// another reserver's request, which does not fit, was briefly counted.
// With add-then-roll-back the 50-byte reservations fail now and then.
func TestReserveIsAtomic(t *testing.T) {
	m := NewMemoryBudget(100)
	if err := m.Reserve("resident", 40); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var tries atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < 2; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				tries.Add(1)
				if m.Reserve("too big", 70) == nil {
					t.Error("70 bytes granted on top of 40 of a 100-byte budget")
					m.Release(70)
				}
			}
		}()
	}
	for tries.Load() < 1000 {
		runtime.Gosched()
	}
	deadline := time.Now().Add(200 * time.Millisecond)
	for i := 0; time.Now().Before(deadline); i++ {
		if err := m.Reserve("fits", 50); err != nil {
			stop.Store(true)
			wg.Wait()
			t.Fatalf("iteration %d: 50 bytes on top of 40 of 100 refused: %v", i, err)
		}
		m.Release(50)
	}
	stop.Store(true)
	wg.Wait()
	if m.Used() != 40 || m.Peak() != 90 {
		t.Fatalf("used %d peak %d, want 40 and 90", m.Used(), m.Peak())
	}
}

// TestBatchBytesOfSlices: a slice is charged for the rows it references,
// so the slices of a batch add up to the batch, however it is cut.
func TestBatchBytesOfSlices(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean},
	}, nil)
	const n = 8192
	bld := array.NewRecordBuilder(mem, schema)
	defer bld.Release()
	for i := 0; i < n; i++ {
		if i%10 == 0 {
			bld.Field(0).AppendNull()
		} else {
			bld.Field(0).(*array.Int64Builder).Append(int64(i))
		}
		bld.Field(1).(*array.StringBuilder).Append("abcdefgh"[:i%8])
		bld.Field(2).(*array.BooleanBuilder).Append(i%2 == 0)
	}
	b := bld.NewRecordBatch()
	defer b.Release()
	whole := BatchBytes(b)
	// int64 values + validity, string offsets + bytes + validity, booleans.
	strBytes := int64(0)
	for i := 0; i < n; i++ {
		strBytes += int64(i % 8)
	}
	if want := int64(8*n+n/8) + int64(4*(n+1)+n/8) + strBytes + int64(n/8+n/8); whole < want || whole > want+256 {
		t.Fatalf("whole batch: %d bytes, want about %d", whole, want)
	}
	for _, parts := range []int{2, 3, 7, 128} {
		var sum int64
		for p := 0; p < parts; p++ {
			from, to := int64(n*p/parts), int64(n*(p+1)/parts)
			s := b.NewSlice(from, to)
			got := BatchBytes(s)
			s.Release()
			if got > whole/int64(parts)+whole/int64(parts)/5+64 {
				t.Errorf("%d parts: slice %d charged %d bytes of a %d-byte batch", parts, p, got, whole)
			}
			sum += got
		}
		// Offsets and validity bytes at the cuts are counted by both sides.
		if sum < whole || sum > whole+int64(parts)*16 {
			t.Errorf("%d parts: slices add up to %d, the batch is %d", parts, sum, whole)
		}
	}
	// Two columns sharing one array count it once.
	col := b.Column(0)
	twice := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{schema.Field(0), schema.Field(0)}, nil), []arrow.Array{col, col}, n)
	defer twice.Release()
	if BatchBytes(twice) != ArrayBytes(col) {
		t.Errorf("shared column counted twice: %d vs %d", BatchBytes(twice), ArrayBytes(col))
	}
}

// TestTopNKeepsItsReservation: after each compaction the TopN's buffer
// stays reserved for exactly what it keeps (a failed re-reservation used
// to drop the reservation silently); at the end everything is given back.
func TestTopNKeepsItsReservation(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int64}}, nil)
	var rows [][]any
	for i := 0; i < 50000; i++ {
		rows = append(rows, []any{(i * 7919) % 50000})
	}
	src := &opSource{schema: schema, rows: rows, per: 1000, t: t}
	budget := NewMemoryBudget(0)
	tc := &TaskContext{Alloc: mem, Memory: budget, Parallelism: 1}
	in, err := src.Open(tc, nil)
	if err != nil {
		t.Fatal(err)
	}
	buf := newSortBuffer(tc, schema, []SortKey{{Expr: expr.NewColumn(0, arrow.PrimitiveTypes.Int64, "v")}}, "top-n", 100)
	if err := buf.drain(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	in.Close()
	var held int64
	for _, b := range buf.batches {
		held += sortCost(b)
	}
	if buf.res.Size() != held || budget.Used() != held || held == 0 {
		t.Fatalf("reserved %d, budget used %d, buffer holds %d", buf.res.Size(), budget.Used(), held)
	}
	buf.release()
	if budget.Used() != 0 {
		t.Fatalf("budget holds %d after release", budget.Used())
	}

	// A budget too small for the compacted rows fails cleanly.
	small := NewMemoryBudget(4 << 10)
	tc = &TaskContext{Alloc: mem, Memory: small, Parallelism: 1}
	in, _ = src.Open(tc, nil)
	buf = newSortBuffer(tc, schema, []SortKey{{Expr: expr.NewColumn(0, arrow.PrimitiveTypes.Int64, "v")}}, "top-n", 100)
	err = buf.drain(context.Background(), in)
	in.Close()
	buf.release()
	if !errors.Is(err, ErrResourcesExhausted) || small.Used() != 0 {
		t.Fatalf("small budget: %v, used %d", err, small.Used())
	}
}
