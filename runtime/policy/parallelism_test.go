package policy

import (
	"strings"
	"testing"
)

func TestDecideParallelism(t *testing.T) {
	const mb = 1 << 20
	on := AdaptiveConfig{Enabled: true, BytesPerTask: 16 * mb, MinParallelism: 1, MaxParallelism: 128}
	for _, c := range []struct {
		name   string
		in     ParallelismInput
		cfg    AdaptiveConfig
		fixed  int
		want   int
		reason string
	}{
		{"uniform", ParallelismInput{Bytes: 64 * mb, KeyGroups: 128}, on, 4, 4, "-> 4"},
		{"rounds up", ParallelismInput{Bytes: 64*mb + 1, KeyGroups: 128}, on, 4, 5, "-> 5"},
		{"empty", ParallelismInput{KeyGroups: 128}, on, 4, 1, "raised to min-parallelism 1"},
		{"min clamp", ParallelismInput{Bytes: mb, KeyGroups: 128}, AdaptiveConfig{Enabled: true, BytesPerTask: 16 * mb, MinParallelism: 3, MaxParallelism: 128}, 4, 3, "raised to min-parallelism 3"},
		{"max clamp", ParallelismInput{Bytes: 10000 * mb, KeyGroups: 1024}, on, 4, 128, "lowered to max-parallelism 128"},
		{"key groups clamp", ParallelismInput{Bytes: 1000 * mb, KeyGroups: 10}, on, 4, 10, "lowered to 10 key groups"},
		{"files clamp", ParallelismInput{Bytes: 1000 * mb, Files: 3}, on, 4, 3, "lowered to 3 files"},
		{"single task", ParallelismInput{Bytes: 1000 * mb, Single: true}, on, 4, 1, "single task"},
		// Free slots raise a stage whose bytes ask for fewer tasks, down to
		// MinBytesPerTask (1 MiB by default) per task.
		{"fills free slots", ParallelismInput{Bytes: 9 * mb, KeyGroups: 128, FreeSlots: 4}, on, 4, 4, "raised to 4 free slots"},
		{"fill keeps a megabyte per task", ParallelismInput{Bytes: 3*mb + 1, KeyGroups: 128, FreeSlots: 8}, on, 4, 4, "raised to 4 free slots"},
		{"too small to fill", ParallelismInput{Bytes: mb / 2, KeyGroups: 128, FreeSlots: 8}, on, 4, 1, "-> 1"},
		{"no free slot", ParallelismInput{Bytes: 9 * mb, KeyGroups: 128}, on, 4, 1, "-> 1"},
		{"bytes already ask for more", ParallelismInput{Bytes: 64 * mb, KeyGroups: 128, FreeSlots: 2}, on, 4, 4, "-> 4"},
		{"fill off", ParallelismInput{Bytes: 9 * mb, KeyGroups: 128, FreeSlots: 4}, AdaptiveConfig{Enabled: true, MinBytesPerTask: -1}, 4, 1, "-> 1"},
		{"fill within the files", ParallelismInput{Bytes: 9 * mb, Files: 2, FreeSlots: 4}, on, 4, 2, "lowered to 2 files"},
		{"single task ignores free slots", ParallelismInput{Bytes: 9 * mb, Single: true, FreeSlots: 4}, on, 4, 1, "single task"},
		// A broadcast input takes at most half of the per-task target.
		{"broadcast share", ParallelismInput{Bytes: 64 * mb, BroadcastBytes: 8 * mb, KeyGroups: 128}, on, 4, 8, "target 8.0MiB"},
		{"broadcast capped", ParallelismInput{Bytes: 64 * mb, BroadcastBytes: 100 * mb, KeyGroups: 128}, on, 4, 8, "broadcast 100.0MiB"},
		{"defaults when zero", ParallelismInput{Bytes: 32 * mb}, AdaptiveConfig{Enabled: true}, 4, 2, "target 16.0MiB"},
		{"off", ParallelismInput{Bytes: 1000 * mb}, AdaptiveConfig{}, 6, 6, "parallelism.default (adaptive off)"},
		{"off single", ParallelismInput{Single: true}, AdaptiveConfig{}, 6, 1, "single task"},
	} {
		d := DecideParallelism(c.in, c.cfg, c.fixed)
		if d.Parallelism != c.want {
			t.Errorf("%s: parallelism %d, want %d (%s)", c.name, d.Parallelism, c.want, d)
		}
		if !strings.Contains(d.String(), c.reason) {
			t.Errorf("%s: reason %q does not mention %q", c.name, d, c.reason)
		}
		if c.cfg.Enabled && !c.in.Single && !strings.Contains(d.String(), "parallelism.default ignored") {
			t.Errorf("%s: adaptive reason %q does not say parallelism.default is ignored", c.name, d)
		}
	}
}
