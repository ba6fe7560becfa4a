package exec

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/exec/expr"
)

// passRows are n rows of sortSchema whose (s, a) keys take card values,
// with NULL keys now and then.
func passRows(n, card int, seed int64) [][]any {
	r := rand.New(rand.NewSource(seed))
	rows := make([][]any, n)
	for i := range rows {
		k := r.Intn(card)
		var a any = k
		if r.Intn(50) == 0 {
			a = nil
		}
		var s any = fmt.Sprintf("s%d", k%997)
		if r.Intn(70) == 0 {
			s = nil
		}
		rows[i] = []any{a, s, fmt.Sprintf("%d.%02d", r.Intn(100), r.Intn(100)), float64(r.Intn(1000))}
	}
	return rows
}

// A partial aggregate whose sample barely groups passes later rows on as
// groups of one row; the final aggregate above it still gives the
// single aggregate's answer. One that groups well keeps its table.
func TestHashAggregatePassThrough(t *testing.T) {
	for _, tc := range []struct {
		name string
		card int
		pass bool
	}{
		{"distinct keys pass through", 1 << 30, true},
		// 64k rows of 200k keys make about 0.85 groups a row, as q23a's
		// (item description, item, date) keys do: grouping them would
		// remove too few rows to pay for the table.
		{"keys that seldom repeat pass through", 200_000, true},
		{"few keys keep the table", 500, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const n = passThroughSample + 6*4096
			in := &opSource{schema: sortSchema, rows: passRows(n, tc.card, 5), per: 4096, t: t}
			want, _, final := twoPhase(t, in)
			alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer alloc.AssertSize(t, 0)
			op := &OperatorStats{}
			ctx := newTC(alloc)
			ctx.Op = op
			got, err := runWith(ctx, final)
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("partial+final: %d groups differ from the single aggregate's %d", len(got), len(want))
			}
			passed, rows := op.Agg.PassTasks.Load(), op.Agg.PassRows.Load()
			if tc.pass {
				// The table holds the sample; every later row passes.
				if passed != 1 || rows < n-passThroughSample-4096 || rows > n-passThroughSample {
					t.Fatalf("pass-through: %d tasks, %d rows passed of %d", passed, rows, n)
				}
				return
			}
			if passed != 0 || rows != 0 {
				t.Fatalf("a partial aggregate of %d groups passed %d rows through", tc.card, rows)
			}
		})
	}
}

// twoPhase groups in's rows (passRows' schema) by (s, a) with
// spillAggFuncs: the single aggregate's sorted answer, and the partial
// aggregate with the final one above it that must give that answer.
func twoPhase(t *testing.T, in Node) (want []string, partial, final *HashAggregate) {
	t.Helper()
	gb := []expr.Expr{col(1, tStr), col(0, tInt64)}
	gn := []string{"s", "a"}
	single := &HashAggregate{Child: in, Mode: AggSingle, GroupBy: gb, GroupNames: gn, Aggs: spillAggFuncs()}
	want = runRows(t, single)
	slices.Sort(want)
	partial = &HashAggregate{Child: in, Mode: AggPartial, GroupBy: gb, GroupNames: gn, Aggs: spillAggFuncs()}
	ps := partial.PartialSchema()
	fgb := []expr.Expr{expr.NewColumn(0, ps.Field(0).Type, "s"), expr.NewColumn(1, ps.Field(1).Type, "a")}
	final = &HashAggregate{Child: partial, Mode: AggFinal, GroupBy: fgb, GroupNames: gn, Aggs: spillAggFuncs()}
	return want, partial, final
}
