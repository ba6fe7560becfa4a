package runtime

import (
	"reflect"
	"testing"

	"go.uber.org/goleak"

	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/shuffle"
	"github.com/fsql-dev/fsql/spill"
)

// A hash join over two hash exchanges that spills partitions by the key
// groups its task reads when they are several, and by the seeded hash
// when a task reads one key group, a piece of a key group split for
// skew, or a forward edge of the broadcast switch; every answer is the
// one of an unlimited budget.
func TestJoinSpillPartitionsByTaskKeyGroups(t *testing.T) {
	defer goleak.VerifyNone(t)
	plan := func(keyGroups int, probe, build *kvSource) *exec.HashJoin {
		hash := func(s *kvSource) *shuffle.Exchange {
			return &shuffle.Exchange{Kind: shuffle.Hash, Child: s, Keys: []expr.Expr{kvKey()}, MaxParallelism: keyGroups}
		}
		return &exec.HashJoin{Type: exec.InnerJoin, Probe: hash(probe), Build: hash(build),
			ProbeKeys: []expr.Expr{kvKey()}, BuildKeys: []expr.Expr{kvKey()}}
	}
	probe := &kvSource{Rows: 60000, Keys: 30000}
	build := &kvSource{Rows: 60000, Keys: 30000, Offset: 1 << 20}
	hotProbe := &kvSource{Rows: 60000, Keys: 30000, HotPct: 40}
	for _, c := range []struct {
		name         string
		keyGroups    int
		probe, build *kvSource
		cfg          RunConfig
		byKG, byHash bool // some task partitioned by key group, some by hash
	}{
		{"32-key-groups", 32, probe, build, RunConfig{Parallelism: 3}, true, false},
		{"one-key-group-a-task", 3, probe, build, RunConfig{Parallelism: 3}, false, true},
		// Adaptive ranges: the hot key's key group is split among
		// tasks that read a piece of it each, and most other tasks
		// read one key group (64 KiB a task): those partition by hash,
		// the tasks of several key groups by key group.
		{"skew-split", 32, hotProbe, &kvSource{Rows: 240000, Keys: 30000, Offset: 1 << 20}, adaptiveCfg(1, 0), true, true},
		{"broadcast-switch", 32, probe, &kvSource{Rows: 6000, Keys: 30000, Offset: 1 << 20}, adaptiveCfg(1<<40, 1<<20), false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			want, _ := joinRows(t, plan(c.keyGroups, c.probe, c.build), c.cfg)
			j := plan(c.keyGroups, c.probe, c.build)
			cfg := c.cfg
			cfg.Memory = exec.NewMemoryBudget(256 << 10)
			cfg.Spill = &spill.Config{Dirs: []string{t.TempDir()}}
			cfg.Stats = exec.NewQueryStats()
			got, g := joinRows(t, j, cfg)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("spilled answer differs (%d vs %d distinct rows)", len(got), len(want))
			}
			sp := &cfg.Stats.For(g.Job.NodeID(j)).Spill
			kg, h := sp.KeyGroupTasks.Load(), sp.HashTasks.Load()
			t.Logf("spill_partitioning=%s, %d files, %d passes; skew splits %v", sp.Partitioning(), sp.Files.Load(), sp.Passes.Load(), joinStage(g).SkewSplits)
			if kg+h == 0 || sp.Files.Load() == 0 {
				t.Fatalf("the join did not spill")
			}
			if (kg > 0) != c.byKG || (h > 0) != c.byHash {
				t.Fatalf("%d tasks by key group, %d by hash; want some by key group %v, by hash %v", kg, h, c.byKG, c.byHash)
			}
		})
	}
}
