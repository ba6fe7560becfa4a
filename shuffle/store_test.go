package shuffle

import (
	"context"
	"io"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/shuffle/keygroup"
)

var kvSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "key", Type: arrow.PrimitiveTypes.Int64},
}, nil)

// Reading a key group in parts yields each of its rows exactly once.
func TestSlicesPartsCoverKeyGroupOnce(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ex := &Exchange{Kind: Hash, Child: leaf{}, Keys: []expr.Expr{expr.NewColumn(1, arrow.PrimitiveTypes.Int64, "key")}, MaxParallelism: 4}
	buf := NewBuffer(ex, Hash, 4, 2, exec.NewMemoryBudget(0))
	defer buf.Release()
	id := int64(0)
	for p := 0; p < 2; p++ {
		w := buf.Writer(p, 0, mem)
		for b := 0; b < 5; b++ {
			// 3 rows of key group 1, 2 of key group 2.
			ib, kb := array.NewInt64Builder(mem), array.NewInt64Builder(mem)
			for i := 0; i < 5; i++ {
				ib.Append(id)
				id++
				kb.Append(int64(1 + i/3))
			}
			ids, keys := ib.NewArray(), kb.NewArray()
			ib.Release()
			kb.Release()
			rb := array.NewRecordBatch(kvSchema, []arrow.Array{ids, keys}, 5)
			ids.Release()
			keys.Release()
			if err := buf.write(w.staging, w.out, rb, []int32{1, 2}, []int32{3, 5}); err != nil {
				t.Fatal(err)
			}
		}
		w.Close()
		if err := buf.Commit(p, 0); err != nil {
			t.Fatal(err)
		}
	}
	if n := buf.BatchesWith(1); n != 10 {
		t.Fatalf("batchesWith(1) = %d, want 10", n)
	}
	read := func(sl []keygroup.Slice) []int64 {
		r := buf.store.OpenSlices(sl)
		defer r.Close()
		var out []int64
		for {
			b, err := r.Next(context.Background())
			if err == io.EOF {
				return out
			}
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, b.Column(0).(*array.Int64).Int64Values()...)
			b.Release()
		}
	}
	seen := map[int64]int{}
	for part := 0; part < 3; part++ {
		for _, v := range read([]keygroup.Slice{{Start: 1, End: 1, Producer: -1, Part: part, Parts: 3}}) {
			seen[v]++
		}
	}
	if len(seen) != 30 {
		t.Errorf("parts read %d distinct rows of key group 1, want 30", len(seen))
	}
	for v, n := range seen {
		if n != 1 || v%5 >= 3 {
			t.Errorf("row %d read %d times", v, n)
		}
	}
	if got := read([]keygroup.Slice{{Start: 2, End: 2, Producer: 1, Parts: 1}}); len(got) != 10 || got[0] != 28 {
		t.Errorf("producer 1's key group 2: %v", got)
	}
	if got := read([]keygroup.Slice{}); len(got) != 0 {
		t.Errorf("no slices read %v", got)
	}
}
