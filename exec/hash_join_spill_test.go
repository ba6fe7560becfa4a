package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/spill"
)

// probe: (pk int32, ps string, pn int64); build: (bk int64, bs string, bn int64)
var (
	spillProbeSchema = opSchema(fld("pk", tInt32), fld("ps", tStr), fld("pn", tInt64))
	spillBuildSchema = opSchema(fld("bk", tInt64), fld("bs", tStr), fld("bn", tInt64))
)

// joinSpillRows makes n rows over keys 0..keys-1 (about 1 in 30 NULL when
// nulls), hot of them with the hot key 7, and a payload number (1 in 20
// NULL) for the residual.
func joinSpillRows(r *rand.Rand, n, keys, hot int, nulls bool) [][]any {
	var rows [][]any
	for i := 0; i < n; i++ {
		var k any = r.Intn(keys)
		switch {
		case i < hot:
			k = 7
		case nulls && r.Intn(30) == 0:
			k = nil
		}
		var s any
		if k != nil {
			s = fmt.Sprintf("key-%05d", k)
		}
		var v any = r.Intn(1000)
		if r.Intn(20) == 0 {
			v = nil
		}
		rows = append(rows, []any{k, s, v})
	}
	r.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
	return rows
}

// Every join type, spilled under tiny budgets (partitions joined one by
// one, repartitioned, and a hot key read in chunks), gives the in-memory
// answer: integer and string keys, with and without a residual, with and
// without NULL build keys (which decide NOT IN and mark results).
func TestHashJoinSpills(t *testing.T) {
	types := []JoinType{InnerJoin, LeftJoin, RightJoin, FullJoin, SemiJoin, AntiJoin, NullAwareAntiJoin, MarkJoin}
	for _, nulls := range []bool{true, false} {
		r := rand.New(rand.NewSource(12))
		// 4000 build rows of the hot key (about 300 KB with the table)
		// do not fit any budget below.
		build := &opSource{schema: spillBuildSchema, rows: joinSpillRows(r, 9000, 2000, 4000, nulls), per: 500, t: t}
		probe := &opSource{schema: spillProbeSchema, rows: joinSpillRows(r, 3000, 2500, 3, true), per: 500, t: t}
		for _, typ := range types {
			if !nulls && typ != AntiJoin && typ != NullAwareAntiJoin && typ != MarkJoin {
				// NULL build keys change only these joins' answers.
				continue
			}
			for _, c := range []struct {
				key      string
				residual bool
			}{{"int", false}, {"int", true}, {"string", false}} {
				j := &HashJoin{Type: typ, Build: build, Probe: probe,
					BuildKeys: []expr.Expr{col(0, tInt64)}, ProbeKeys: []expr.Expr{col(0, tInt32)}}
				if c.key == "string" {
					j.BuildKeys, j.ProbeKeys = []expr.Expr{col(1, tStr)}, []expr.Expr{col(1, tStr)}
				}
				if c.residual {
					j.Residual = cmpExpr(2, 5, "<")
				}
				name := fmt.Sprintf("%s/%s/residual=%v/buildnulls=%v", typ, c.key, c.residual, nulls)
				t.Run(name, func(t *testing.T) {
					want := sorted(runRows(t, j))
					for _, limit := range []int64{192 << 10, 40 << 10} {
						got, st := spillRun(t, j, limit)
						if !slices.Equal(sorted(got), want) {
							t.Fatalf("under %d bytes: %d rows differ from the %d in memory", limit, len(got), len(want))
						}
						t.Logf("under %d: %d rows, %d files, %d bytes, %d passes", limit, len(got), st.Files.Load(), st.Bytes.Load(), st.Passes.Load())
						if typ == NullAwareAntiJoin && nulls {
							// No row, and no need to look at the probe side.
							continue
						}
						// Partitions joined from disk, the hot key's in
						// chunks (passes past the first level).
						if st.Files.Load() == 0 || st.Bytes.Load() == 0 || st.Passes.Load() < 3 {
							t.Fatalf("under %d bytes: %d files, %d bytes, %d passes", limit, st.Files.Load(), st.Bytes.Load(), st.Passes.Load())
						}
					}
				})
			}
		}
	}
}

// Without a spill manager a join past the budget still fails as before.
func TestHashJoinNoSpillManagerFails(t *testing.T) {
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer alloc.AssertSize(t, 0)
	r := rand.New(rand.NewSource(1))
	build := &opSource{schema: spillBuildSchema, rows: joinSpillRows(r, 5000, 100, 0, true), per: 500, t: t}
	probe := &opSource{schema: spillProbeSchema, rows: joinSpillRows(r, 100, 100, 0, true), per: 500, t: t}
	j := &HashJoin{Type: InnerJoin, Build: build, Probe: probe, BuildKeys: []expr.Expr{col(0, tInt64)}, ProbeKeys: []expr.Expr{col(0, tInt32)}}
	tc := &TaskContext{Alloc: alloc, Memory: NewMemoryBudget(64 << 10), Parallelism: 1}
	if _, err := runWith(tc, j); !errors.Is(err, ErrResourcesExhausted) {
		t.Fatalf("want resources exhausted, got %v", err)
	}
	if u := tc.Memory.Used(); u != 0 {
		t.Fatalf("%d bytes still reserved", u)
	}
}

// Cancelling a join while it spills leaves no buffer and, once the run's
// manager closes, no file: while reading the build side, while probing,
// and while joining the spilled partitions.
func TestHashJoinSpillCancel(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	brows := joinSpillRows(r, 9000, 2000, 4000, true)
	prows := joinSpillRows(r, 3000, 2500, 3, true)
	for _, c := range []struct {
		name         string
		build, probe int // batches before the cancellation (-1: none)
	}{{"build", 12, -1}, {"probe", -1, 3}, {"partitions", -1, -1}} {
		t.Run(c.name, func(t *testing.T) {
			alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer alloc.AssertSize(t, 0)
			dir := t.TempDir()
			m := spill.NewManager(spill.Config{Dirs: []string{dir}})
			tc := &TaskContext{Alloc: alloc, Memory: NewMemoryBudget(40 << 10), Parallelism: 1, Spill: m}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var build, probe Node = &opSource{schema: spillBuildSchema, rows: brows, per: 500, t: t}, &opSource{schema: spillProbeSchema, rows: prows, per: 500, t: t}
			if c.build >= 0 {
				build = &cancelAfter{Node: build, after: c.build, cancel: cancel}
			}
			if c.probe >= 0 {
				probe = &cancelAfter{Node: probe, after: c.probe, cancel: cancel}
			}
			ended := &eofWatch{Node: probe}
			j := &HashJoin{Type: FullJoin, Build: build, Probe: ended, BuildKeys: []expr.Expr{col(0, tInt64)}, ProbeKeys: []expr.Expr{col(0, tInt32)}}
			s, err := openTree(tc, j)
			if err != nil {
				t.Fatal(err)
			}
			for err == nil {
				var b interface{ Release() }
				b, err = s.Next(ctx)
				if err == nil {
					b.Release()
				}
				if ended.done && c.name == "partitions" {
					// The probe input ended: the output now comes from
					// the spilled partitions.
					cancel()
				}
			}
			s.Close()
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("want cancellation, got %v", err)
			}
			if st := m.Stats(); st.Files == 0 {
				t.Fatal("the join had not spilled before the cancellation")
			}
			if u := tc.Memory.Used(); u != 0 {
				t.Fatalf("%d bytes still reserved", u)
			}
			m.Close()
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Fatalf("left behind: %v", ents)
			}
		})
	}
}

// eofWatch notes when its child's stream ended.
type eofWatch struct {
	Node
	done bool
}

func (w *eofWatch) Children() []Node { return []Node{w.Node} }
func (w *eofWatch) Open(tc *TaskContext, in []Stream) (Stream, error) {
	return &eofWatchStream{Stream: in[0], w: w}, nil
}

type eofWatchStream struct {
	Stream
	w *eofWatch
}

func (s *eofWatchStream) Next(ctx context.Context) (arrow.RecordBatch, error) {
	b, err := s.Stream.Next(ctx)
	if err == io.EOF {
		s.w.done = true
	}
	return b, err
}
