package exec

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/shuffle/keygroup"
)

// rowKeyGroups is the key group (of count) of each row's column c, as a
// hash exchange by that column assigns it; -1 for a NULL.
func rowKeyGroups(t *testing.T, schema *arrow.Schema, rows [][]any, c, count int) []int {
	t.Helper()
	b := opBatch(t, memory.DefaultAllocator, schema, rows)
	defer b.Release()
	h := make([]uint32, len(rows))
	HashColumns([]arrow.Array{b.Column(c)}, h)
	out := make([]int, len(rows))
	for i := range rows {
		out[i] = keygroup.ForHash(h[i], count)
		if rows[i][c] == nil {
			out[i] = -1
		}
	}
	return out
}

// inKeyGroups keeps the rows whose column c falls in key groups
// start..end of count, as the task reading that range receives them,
// and the rows with a NULL key (which match nothing; the join sets them
// apart before it partitions).
func inKeyGroups(t *testing.T, schema *arrow.Schema, rows [][]any, c int, kg *KeyGroups) [][]any {
	t.Helper()
	var out [][]any
	for i, g := range rowKeyGroups(t, schema, rows, c, kg.Count) {
		if g < 0 || g >= kg.Start && g <= kg.End {
			out = append(out, rows[i])
		}
	}
	return out
}

// Every join type spilled under a tiny budget by key group, when the
// task's inputs were shuffled by the join's keys into several key groups,
// and by the seeded hash otherwise (one key group, other shuffle keys,
// no shuffle), gives the in-memory answer; the counters say which
// partitioning the join used, and a hot key group still splits by the
// hash and its hot key is read in chunks (passes past the second level).
func TestHashJoinSpillsByKeyGroup(t *testing.T) {
	types := []JoinType{InnerJoin, LeftJoin, RightJoin, FullJoin, SemiJoin, AntiJoin, NullAwareAntiJoin, MarkJoin}
	for _, nulls := range []bool{true, false} {
		r := rand.New(rand.NewSource(20))
		brows := joinSpillRows(r, 9000, 2000, 4000, nulls)
		prows := joinSpillRows(r, 3000, 2500, 3, true)
		for _, key := range []string{"int", "string"} {
			testJoinSpillKeyGroups(t, types, key, nulls, brows, prows)
		}
	}
}

func testJoinSpillKeyGroups(t *testing.T, types []JoinType, key string, nulls bool, brows, prows [][]any) {
	kc := 0
	bk, pk := []expr.Expr{col(0, tInt64)}, []expr.Expr{col(0, tInt32)}
	if key == "string" {
		kc = 1
		bk, pk = []expr.Expr{col(1, tStr)}, []expr.Expr{col(1, tStr)}
	}
	// A range of 16 of 64 key groups that holds the hot key 7.
	hot := rowKeyGroups(t, spillBuildSchema, [][]any{{7, "key-00007", 1}}, kc, 64)[0]
	start := min(max(hot-5, 0), 48)
	cases := []struct {
		name string
		kg   *KeyGroups
		byKG bool
	}{
		{"all-8-key-groups", &KeyGroups{Start: 0, End: 7, Count: 8, Keys: [][]expr.Expr{bk, pk}}, true},
		{"16-of-64-key-groups", &KeyGroups{Start: start, End: start + 15, Count: 64, Keys: [][]expr.Expr{bk, pk}}, true},
		{"one-key-group", &KeyGroups{Start: 0, End: 0, Count: 1, Keys: [][]expr.Expr{bk, pk}}, false},
		{"other-shuffle-keys", &KeyGroups{Start: 0, End: 7, Count: 8, Keys: [][]expr.Expr{{col(2, tInt64)}, {col(2, tInt64)}}}, false},
		{"no-shuffle", nil, false},
	}
	for _, c := range cases {
		b, p := brows, prows
		if c.byKG {
			b = inKeyGroups(t, spillBuildSchema, brows, kc, c.kg)
			p = inKeyGroups(t, spillProbeSchema, prows, kc, c.kg)
		}
		build := &opSource{schema: spillBuildSchema, rows: b, per: 500, t: t}
		probe := &opSource{schema: spillProbeSchema, rows: p, per: 500, t: t}
		for _, typ := range types {
			if !nulls && (!c.byKG || typ != AntiJoin && typ != NullAwareAntiJoin && typ != MarkJoin) {
				// NULL build keys change only these joins' answers.
				continue
			}
			for _, residual := range []bool{false, true} {
				if residual && (key == "string" || !c.byKG) {
					continue
				}
				j := &HashJoin{Type: typ, Build: build, Probe: probe, BuildKeys: bk, ProbeKeys: pk}
				if residual {
					j.Residual = cmpExpr(2, 5, "<")
				}
				t.Run(fmt.Sprintf("%s/%s/%s/residual=%v/buildnulls=%v", key, c.name, typ, residual, nulls), func(t *testing.T) {
					want := sorted(runRows(t, j))
					got, st := spillRunWith(t, j, 40<<10, c.kg)
					if !slices.Equal(sorted(got), want) {
						t.Fatalf("%d rows differ from the %d in memory", len(got), len(want))
					}
					if typ == NullAwareAntiJoin && nulls {
						// A NULL build key ends NOT IN at once.
						return
					}
					kgTasks, hashTasks := st.KeyGroupTasks.Load(), st.HashTasks.Load()
					if c.byKG && (kgTasks != 1 || hashTasks != 0) || !c.byKG && (kgTasks != 0 || hashTasks != 1) {
						t.Fatalf("partitioning %q (key-group tasks %d, hash tasks %d), want by key group %v", st.Partitioning(), kgTasks, hashTasks, c.byKG)
					}
					if st.Files.Load() == 0 || st.Passes.Load() < 3 {
						t.Fatalf("%d files, %d passes", st.Files.Load(), st.Passes.Load())
					}
				})
			}
		}
	}
}

// A partition of the key-group level is a set of whole, contiguous key
// groups: every row of a key group gets the same partition, later key
// groups never an earlier partition, and the range's key groups fill
// min(range, joinFanOut) partitions.
func TestJoinKeyGroupPartitions(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	rows := joinSpillRows(r, 20000, 20000, 0, true)
	for _, kg := range []*KeyGroups{
		{Start: 0, End: 127, Count: 128}, {Start: 64, End: 127, Count: 128},
		{Start: 3, End: 5, Count: 10}, {Start: 10, End: 19, Count: 50},
	} {
		t.Run(fmt.Sprintf("%d-%d-of-%d", kg.Start, kg.End, kg.Count), func(t *testing.T) {
			in := inKeyGroups(t, spillBuildSchema, rows, 0, kg)
			groups := rowKeyGroups(t, spillBuildSchema, in, 0, kg.Count)
			b := opBatch(t, memory.DefaultAllocator, spillBuildSchema, in)
			defer b.Release()
			s := &hashJoinStream{ec: &expr.Context{Alloc: memory.DefaultAllocator}, intKey: true,
				sp: &joinSpill{kg: kg, nkg: min(kg.span(), joinFanOut)}}
			if err := s.partitionIDs([]expr.Expr{col(0, tInt64)}, b); err != nil {
				t.Fatal(err)
			}
			part := map[int]uint8{}
			for i, g := range groups {
				if g < 0 {
					if !s.sp.nulls[i] {
						t.Fatalf("row %d: NULL key not marked", i)
					}
					continue
				}
				if s.sp.nulls[i] {
					t.Fatalf("row %d: key %v marked NULL", i, in[i][0])
				}
				if p, ok := part[g]; ok && p != s.sp.ids[i] {
					t.Fatalf("key group %d in partitions %d and %d", g, p, s.sp.ids[i])
				}
				part[g] = s.sp.ids[i]
			}
			if len(part) != kg.span() {
				t.Fatalf("%d key groups seen, want %d", len(part), kg.span())
			}
			used := map[uint8]bool{}
			for g := kg.Start; g <= kg.End; g++ {
				if g > kg.Start && part[g] < part[g-1] {
					t.Fatalf("key group %d in partition %d, before %d's %d", g, part[g], g-1, part[g-1])
				}
				used[part[g]] = true
			}
			if want := min(kg.span(), joinFanOut); len(used) != want {
				t.Fatalf("%d partitions used, want %d", len(used), want)
			}
		})
	}
}
