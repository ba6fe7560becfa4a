package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/spill"
)

// A final aggregate told its input's rows sizes its table once when the
// first batch's keys are near-unique, and answers as the single
// aggregate does whatever the hint: right, far too large, too small, or
// refused by a tight budget (which then spills as before).
func TestHashAggregateSizedByInputRows(t *testing.T) {
	const n = passThroughSample + 6*4096
	for _, tc := range []struct {
		name   string
		card   int
		hint   int64
		budget int64
		sized  bool
	}{
		{"distinct keys, right hint", 1 << 30, n, 0, true},
		{"distinct keys, hint ten times over", 1 << 30, 10 * n, 0, true},
		{"distinct keys, hint too small", 1 << 30, n / 3, 0, true},
		{"tight budget refuses the size", 1 << 30, 100 * n, 512 << 10, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := &opSource{schema: sortSchema, rows: passRows(n, tc.card, 9), per: 4096, t: t}
			// The final aggregate reads the rows as they are (a partial
			// state of one row each is what pass-through hands on).
			want, partial, final := twoPhase(t, in)
			alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer alloc.AssertSize(t, 0)
			ctx := newTC(alloc)
			if tc.budget > 0 {
				ctx.Memory = NewMemoryBudget(tc.budget)
				ctx.Spill = spill.NewManager(spill.Config{Dirs: []string{t.TempDir()}})
			}
			pin, err := openTree(ctx, partial)
			if err != nil {
				t.Fatal(err)
			}
			fctx := *ctx
			fctx.InputRows = []int64{tc.hint}
			s, err := final.Open(&fctx, []Stream{pin})
			if err != nil {
				pin.Close()
				t.Fatal(err)
			}
			defer s.Close()
			var got []string
			for {
				b, err := s.Next(context.Background())
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, renderRows(b)...)
				b.Release()
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("sized final: %d groups differ from the single aggregate's %d", len(got), len(want))
			}
			if sized := s.(*hashAggStream).sized > 0; sized != tc.sized {
				t.Fatalf("sized = %v, want %v", sized, tc.sized)
			}
		})
	}
}

// Keys that repeat within the first batch are not sized for, whatever
// the hint says: the table grows with its groups.
func TestHashAggregateRepeatedKeysNotSized(t *testing.T) {
	const n, card = 6 * 4096, 300
	schema := opSchema(fld("a", tInt64), fld("s", tStr), fld("n", tInt64))
	rows := make([][]any, n)
	want := map[string]int64{}
	for i := range rows {
		k := i * 7919 % card
		rows[i] = []any{k, fmt.Sprintf("s%d", k%13), i % 5}
		want[fmt.Sprintf("%d|s%d", k, k%13)] += int64(i % 5)
	}
	in := &opSource{schema: schema, rows: rows, per: 4096, t: t}
	final := &HashAggregate{Child: in, Mode: AggFinal, GroupBy: []expr.Expr{col(0, tInt64), col(1, tStr)},
		GroupNames: []string{"a", "s"}, Aggs: []AggFunc{{Fn: "count_star", Type: tInt64, Name: "n"}}}
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer alloc.AssertSize(t, 0)
	ctx := newTC(alloc)
	ctx.InputRows = []int64{n}
	got, err := runWith(ctx, final)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d groups, want %d", len(got), len(want))
	}
	for _, r := range got {
		bar := strings.LastIndexByte(r, '|')
		if c, ok := want[r[:bar]]; !ok || fmt.Sprint(c) != r[bar+1:] {
			t.Fatalf("row %q, want count %d", r, c)
		}
	}
	s, err := openTree(ctx, final)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b, err := s.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b.Release()
	if sized := s.(*hashAggStream).sized; sized != 0 {
		t.Fatalf("repeated keys sized the table for %d groups", sized)
	}
}
