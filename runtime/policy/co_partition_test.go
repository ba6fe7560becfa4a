package policy

import "testing"

func TestCoPartitionLimit(t *testing.T) {
	for _, c := range []struct {
		quota, want int64
	}{
		{0, 0},  // unlimited budget: never
		{-1, 0}, // not divided
		{1, 0},  // a 1-byte quota: half rounds to 0, never
		{14_665_469, 7_332_734},
		{4 << 30, 2 << 30},
	} {
		if got := CoPartitionLimit(c.quota); got != c.want {
			t.Errorf("CoPartitionLimit(%d) = %d, want %d", c.quota, got, c.want)
		}
	}
}

// TestSwitchToCoPartitioned: the decision at q78's budget at 1/4 of its
// peak (29,330,939 bytes over 2 slots): its 15.0 and 7.4 MiB builds are
// over half the quota, a 7.0 MB one is not; no budget never switches.
func TestSwitchToCoPartitioned(t *testing.T) {
	limit := CoPartitionLimit(29_330_939 / 2)
	for _, c := range []struct {
		name        string
		build, lim  int64
		coPartition bool
	}{
		{"q78 catalog build", 15 << 20, limit, true},
		{"q78 web build", 7_760_000, limit, true},
		{"7.0 MB", 7_000_000, limit, false},
		{"at the limit", limit, limit, false},
		{"one byte over", limit + 1, limit, true},
		{"unlimited budget", 1 << 40, 0, false},
		{"empty build", 0, limit, false},
	} {
		if got := SwitchToCoPartitioned(c.build, c.lim); got != c.coPartition {
			t.Errorf("%s: SwitchToCoPartitioned(%d, %d) = %v, want %v", c.name, c.build, c.lim, got, c.coPartition)
		}
	}
}

func TestCoPartitionParallelism(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		name                  string
		p                     int
		largest, share        int64
		slots, maxTasks, want int
	}{
		// q78 at 1/4: 4 tasks decided; a 15 MiB build over a share of
		// 14.0 MiB / 4 operators = 3.5 MiB needs 5 tasks: 6, whole waves.
		{"q78", 4, 15 * mib, 14 * mib / 4, 2, 128, 6},
		{"already enough", 8, 15 * mib, 14 * mib / 4, 2, 128, 8},
		{"exact multiple", 2, 8 * mib, 2 * mib, 2, 128, 4},
		{"one slot, no rounding", 1, 5 * mib, 2 * mib, 1, 128, 3},
		{"capped by key groups", 2, 100 * mib, mib, 2, 16, 16},
		{"key groups below p keep p", 8, 100 * mib, mib, 2, 4, 8},
		{"no share known", 3, 15 * mib, 0, 2, 128, 3},
		{"no tasks decided", 0, 0, mib, 2, 128, 1},
	} {
		if got := CoPartitionParallelism(c.p, c.largest, c.share, c.slots, c.maxTasks); got != c.want {
			t.Errorf("%s: CoPartitionParallelism(%d, %d, %d, %d, %d) = %d, want %d", c.name, c.p, c.largest, c.share, c.slots, c.maxTasks, got, c.want)
		}
	}
}

func TestCoPartitionShared(t *testing.T) {
	for _, c := range []struct {
		cost         int64
		tasks, slots int
		share        int64
		want         bool
	}{
		{CoPartitionSharedMin, 2, 2, 0, true},
		{CoPartitionSharedMin - 1, 2, 2, 0, false}, // small: built once
		{64 << 20, 1, 2, 0, false},                 // one task: nothing to divide
		{64 << 20, 4, 2, 0, false},                 // two waves: the second finds it built
		{64 << 20, 2, 2, 16 << 20, false},          // a task's part over its share
		{32 << 20, 2, 2, 16 << 20, true},
	} {
		if got := CoPartitionShared(c.cost, c.tasks, c.slots, c.share); got != c.want {
			t.Errorf("CoPartitionShared(%d, %d, %d, %d) = %v, want %v", c.cost, c.tasks, c.slots, c.share, got, c.want)
		}
	}
}
