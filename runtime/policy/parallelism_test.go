package policy

import (
	"strings"
	"testing"
)

func TestDecideParallelism(t *testing.T) {
	const mb = 1 << 20
	on := AdaptiveConfig{Enabled: true, BytesPerTask: 16 * mb, MinBytesPerTask: mb, MinParallelism: 1, MaxParallelism: 128}
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
		{"files clamp", ParallelismInput{Bytes: 1000 * mb, Files: 3}, on, 4, 3, "lowered to 3 scan splits"},
		{"single task", ParallelismInput{Bytes: 1000 * mb, Single: true}, on, 4, 1, "single task"},
		// Free slots raise a stage whose bytes ask for fewer tasks, down to
		// MinBytesPerTask (1 MiB here) per task.
		{"fills free slots", ParallelismInput{Bytes: 9 * mb, KeyGroups: 128, FreeSlots: 4}, on, 4, 4, "raised to 4 of 4 slots"},
		{"fill keeps a megabyte per task", ParallelismInput{Bytes: 3*mb + 1, KeyGroups: 128, FreeSlots: 8}, on, 4, 4, "raised to 4 of 8 slots"},
		{"too small to fill", ParallelismInput{Bytes: mb / 2, KeyGroups: 128, FreeSlots: 8}, on, 4, 1, "-> 1"},
		{"no slot known", ParallelismInput{Bytes: 9 * mb, KeyGroups: 128}, on, 4, 1, "-> 1"},
		{"bytes already ask for more", ParallelismInput{Bytes: 64 * mb, KeyGroups: 128, FreeSlots: 2}, on, 4, 4, "-> 4"},
		{"fill off", ParallelismInput{Bytes: 9 * mb, KeyGroups: 128, FreeSlots: 4}, AdaptiveConfig{Enabled: true, MinBytesPerTask: -1}, 4, 1, "-> 1"},
		{"fill within the files", ParallelismInput{Bytes: 9 * mb, Files: 2, FreeSlots: 4}, on, 4, 2, "lowered to 2 scan splits"},
		{"single task ignores free slots", ParallelismInput{Bytes: 9 * mb, Single: true, FreeSlots: 4}, on, 4, 1, "single task"},
		// A blocking start is spread over all the slots, busy ones too:
		// its tasks queue and take a slot as a sibling stage lets it go.
		{"busy slots count", ParallelismInput{Bytes: 9 * mb, KeyGroups: 128, FreeSlots: 0, Slots: 2}, on, 4, 2, "raised to 2 of 2 slots"},
		{"one slot free of two", ParallelismInput{Bytes: 9 * mb, KeyGroups: 128, FreeSlots: 1, Slots: 2}, on, 4, 2, "raised to 2 of 2 slots"},
		{"slots keep a megabyte per task", ParallelismInput{Bytes: mb + 1, KeyGroups: 128, Slots: 8}, on, 4, 2, "raised to 2 of 8 slots"},
		// Above the slots, whole waves: a multiple of them.
		{"three tasks on two slots", ParallelismInput{Bytes: 40 * mb, KeyGroups: 128, Slots: 2}, on, 4, 4, "-> 3, rounded up to 4, whole waves of 2 slots"},
		{"five tasks on four slots", ParallelismInput{Bytes: 65 * mb, KeyGroups: 128, Slots: 4}, on, 4, 8, "rounded up to 8"},
		{"already whole waves", ParallelismInput{Bytes: 64 * mb, KeyGroups: 128, Slots: 2}, on, 4, 4, "-> 4"},
		{"waves within the files", ParallelismInput{Bytes: 40 * mb, Files: 3, Slots: 2}, on, 4, 3, "rounded up to 4, whole waves of 2 slots, lowered to 3 scan splits"},
		{"waves within the key groups", ParallelismInput{Bytes: 90 * mb, KeyGroups: 5, Slots: 4}, on, 4, 5, "rounded up to 8, whole waves of 4 slots, lowered to 5 key groups"},
		{"waves within max-parallelism", ParallelismInput{Bytes: 200 * mb, Slots: 8}, AdaptiveConfig{Enabled: true, MaxParallelism: 10}, 4, 10, "rounded up to 16, whole waves of 8 slots, lowered to max-parallelism 10"},
		{"waves off with the fill", ParallelismInput{Bytes: 40 * mb, KeyGroups: 128, Slots: 2}, AdaptiveConfig{Enabled: true, MinBytesPerTask: -1}, 4, 3, "-> 3"},
		{"one slot, no waves", ParallelismInput{Bytes: 40 * mb, KeyGroups: 128, Slots: 1}, on, 4, 3, "-> 3"},
		// A broadcast input takes at most half of the per-task target.
		{"broadcast share", ParallelismInput{Bytes: 64 * mb, BroadcastBytes: 8 * mb, KeyGroups: 128}, on, 4, 8, "target 8.0MiB"},
		{"broadcast capped", ParallelismInput{Bytes: 64 * mb, BroadcastBytes: 100 * mb, KeyGroups: 128}, on, 4, 8, "broadcast 100.0MiB"},
		{"defaults when zero", ParallelismInput{Bytes: 32 * mb}, AdaptiveConfig{Enabled: true}, 4, 2, "target 16.0MiB"},
		// The default least input per filling task is 64 KiB.
		{"default fill", ParallelismInput{Bytes: 200 << 10, KeyGroups: 128, Slots: 2}, AdaptiveConfig{Enabled: true}, 4, 2, "raised to 2 of 2 slots (at least 64.0KiB per task)"},
		{"default fill keeps 64 KiB per task", ParallelismInput{Bytes: 130 << 10, KeyGroups: 128, Slots: 4}, AdaptiveConfig{Enabled: true}, 4, 3, "raised to 3 of 4 slots"},
		{"default too small to fill", ParallelismInput{Bytes: 64 << 10, KeyGroups: 128, Slots: 2}, AdaptiveConfig{Enabled: true}, 4, 1, "-> 1"},
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

// TestDecisionString pins whole EXPLAIN ANALYZE lines: the clamps in the
// order the rule applies them, and none where none applied.
func TestDecisionString(t *testing.T) {
	const mb = 1 << 20
	on := AdaptiveConfig{Enabled: true, BytesPerTask: 16 * mb, MinBytesPerTask: mb, MinParallelism: 1, MaxParallelism: 128}
	for _, c := range []struct {
		in   ParallelismInput
		cfg  AdaptiveConfig
		want string
	}{
		{ParallelismInput{Bytes: 40 * mb, KeyGroups: 128, Slots: 2}, on,
			"parallelism 4: adaptive, parallelism.default ignored; input 40.0MiB, target 16.0MiB per task -> 3, rounded up to 4, whole waves of 2 slots"},
		{ParallelismInput{Bytes: 40 * mb, KeyGroups: 128, Slots: 2}, AdaptiveConfig{Enabled: true, MinBytesPerTask: -1},
			"parallelism 3: adaptive, parallelism.default ignored; input 40.0MiB, target 16.0MiB per task -> 3"},
		{ParallelismInput{Bytes: 40 * mb, KeyGroups: 128, Slots: 1}, on,
			"parallelism 3: adaptive, parallelism.default ignored; input 40.0MiB, target 16.0MiB per task -> 3"},
		{ParallelismInput{Bytes: 9 * mb, Files: 4, FreeSlots: 1, Slots: 2}, on,
			"parallelism 2: adaptive, parallelism.default ignored; input 9.0MiB, target 16.0MiB per task -> 1, raised to 2 of 2 slots (at least 1.0MiB per task)"},
	} {
		if got := DecideParallelism(c.in, c.cfg, 4).String(); got != c.want {
			t.Errorf("%+v:\n got %s\nwant %s", c.in, got, c.want)
		}
	}
	// A stage with no split input, set afterwards to a forward
	// producer's tasks (the scheduler appends the clamp), names the
	// parallelism it runs at, not 1.
	for _, c := range []struct {
		cfg  AdaptiveConfig
		want string
	}{
		{on, "parallelism 2: no split input, set to the producer's 2 tasks (forward input)"},
		{AdaptiveConfig{}, "parallelism 2: no split input, set to the producer's 2 tasks (forward input); adaptive off"},
	} {
		d := DecideParallelism(ParallelismInput{Single: true, Slots: 2}, c.cfg, 4)
		d.Parallelism = 2
		d.Clamps = append(d.Clamps, "set to the producer's 2 tasks (forward input)")
		if got := d.String(); got != c.want {
			t.Errorf("forward:\n got %s\nwant %s", got, c.want)
		}
	}
}
