package shuffle

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/exec/expr"
)

// TestSelectiveReleasesWhatCommittedTasksRead: in selective mode a batch
// is let go once every consumer task reading one of its key groups
// committed, and not before; the tasks still to commit read all of
// theirs. In full mode nothing goes before the buffer is released.
func TestSelectiveReleasesWhatCommittedTasksRead(t *testing.T) {
	for _, selective := range []bool{false, true} {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		budget := exec.NewMemoryBudget(0)
		ex := &Exchange{Kind: Hash, Child: leaf{}, Keys: []expr.Expr{expr.NewColumn(1, arrow.PrimitiveTypes.Int64, "key")}, MaxParallelism: 4}
		buf := NewBuffer(ex, Hash, 4, 2, budget)
		if selective {
			buf.Selective(1)
		}
		// Producer 0 writes key groups 0 and 1 (consumer task 0's range),
		// producer 1 key groups 1 and 2 (both tasks').
		for p, subs := range [][]int32{{0, 1}, {1, 2}} {
			w := buf.Writer(p, 0, mem)
			ib, kb := array.NewInt64Builder(mem), array.NewInt64Builder(mem)
			for i := 0; i < 6; i++ {
				ib.Append(int64(p*100 + i))
				kb.Append(int64(subs[i/3]))
			}
			ids, keys := ib.NewArray(), kb.NewArray()
			ib.Release()
			kb.Release()
			rb := array.NewRecordBatch(kvSchema, []arrow.Array{ids, keys}, 6)
			ids.Release()
			keys.Release()
			if err := buf.write(w.staging, w.out, rb, subs, []int32{3, 6}); err != nil {
				t.Fatal(err)
			}
			w.Close()
			if err := buf.Commit(p, 0); err != nil {
				t.Fatal(err)
			}
		}
		const stage, tasks = 5, 2
		buf.PlanConsumer(stage, tasks)
		full := budget.Used()
		buf.Consumed(stage, 0, tasks)
		if selective && (buf.ReleasedEarly() == 0 || budget.Used() >= full) || !selective && budget.Used() != full {
			t.Fatalf("selective %v: after task 0 committed the budget holds %d of %d (released early %d)", selective, budget.Used(), full, buf.ReleasedEarly())
		}
		// Task 1 still reads key groups 2 and 3: producer 1's rows of key
		// group 2.
		got := readAllTasks(t, buf, tasks, mem)[1]
		if len(got) != 3 || got[0] != 103 {
			t.Fatalf("selective %v: task 1 read %v, want ids 103..105", selective, got)
		}
		buf.Consumed(stage, 1, tasks)
		if selective && budget.Used() != 0 {
			t.Fatalf("every task committed: the budget still holds %d", budget.Used())
		}
		buf.Release()
		if budget.Used() != 0 {
			t.Fatalf("budget holds %d after release", budget.Used())
		}
		mem.AssertSize(t, 0)
	}
}
