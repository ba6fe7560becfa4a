package policy

import (
	"fmt"
	"strings"
)

// AdaptiveConfig is the adaptive batch scheduler's configuration (Flink's
// execution.batch.adaptive.* keys). With Enabled, a stage's parallelism is
// decided when the stage is scheduled, from the bytes its producers wrote
// (or the bytes of the files it scans), instead of a fixed parallelism.
type AdaptiveConfig struct {
	Enabled bool
	// BytesPerTask is the input volume one task should get
	// (avg-data-volume-per-task). Zero means 16 MiB.
	BytesPerTask int64
	// MinBytesPerTask is the least input a task is given to fill slots
	// that would otherwise idle (fsql's
	// min-data-volume-per-task; Flink sizes for throughput only). Zero
	// means DefaultMinBytesPerTask (64 KiB); negative turns filling (and
	// the rounding to whole waves) off.
	MinBytesPerTask int64
	// MinParallelism and MaxParallelism clamp the decision. Zero means 1
	// and 128.
	MinParallelism, MaxParallelism int
	// SkewFactor and SkewThreshold: a key group of a shuffled hash join is
	// skewed when its bytes on one side exceed SkewFactor times that side's
	// median key group and SkewThreshold; it is then split across tasks
	// where the join type allows. SkewFactor 0 turns splitting off.
	SkewFactor    float64
	SkewThreshold int64
	// BroadcastThreshold turns a shuffled inner or semi hash join into a
	// broadcast join at run time when its build side produced fewer bytes;
	// zero turns the switch off.
	BroadcastThreshold int64
}

// DefaultMinBytesPerTask is the least input a task gets when it is
// started only to fill a slot. A task's fixed cost (opening its streams
// and the exchange readers of 128 key groups, the scheduler's round trip)
// is about 0.1 ms: an empty task of a tiny stage ran 70-500 µs in EXPLAIN
// ANALYZE at scale 1, while stages of 200 KiB to 1 MiB of input (joins
// and aggregates over a shuffle, dimension scans with string filters)
// ran 17-60 ms, one task beside an idle slot under the former 1 MiB. At
// 64 KiB a task still does several times its fixed cost.
const DefaultMinBytesPerTask = 64 << 10

// DefaultAdaptiveConfig is Flink's defaults, enabled, with the skew and
// broadcast defaults of fsql's Config.
func DefaultAdaptiveConfig() AdaptiveConfig {
	return AdaptiveConfig{
		Enabled: true, BytesPerTask: 16 << 20, MinBytesPerTask: DefaultMinBytesPerTask, MinParallelism: 1, MaxParallelism: 128,
		SkewFactor: 4, SkewThreshold: 256 << 20, BroadcastThreshold: 10 << 20,
	}
}

// Normalized fills zero fields with their defaults.
func (c AdaptiveConfig) Normalized() AdaptiveConfig {
	if c.BytesPerTask <= 0 {
		c.BytesPerTask = 16 << 20
	}
	if c.MinBytesPerTask == 0 {
		c.MinBytesPerTask = DefaultMinBytesPerTask
	}
	if c.MinParallelism <= 0 {
		c.MinParallelism = 1
	}
	if c.MaxParallelism <= 0 {
		c.MaxParallelism = 128
	}
	if c.MaxParallelism < c.MinParallelism {
		c.MaxParallelism = c.MinParallelism
	}
	return c
}

// ParallelismInput is what a stage's parallelism is decided from.
type ParallelismInput struct {
	// Bytes is the volume split among the tasks: what the producers of
	// hash inputs wrote, plus the bytes of the files the stage scans.
	Bytes int64
	// BroadcastBytes is what every task reads whole (broadcast inputs).
	BroadcastBytes int64
	// Single says the stage must run as one task (it reads a gather
	// exchange, holds a constant relation, or has no split input).
	Single bool
	// KeyGroups is the key-group count of the stage's hash inputs, 0 when
	// it has none: more tasks than key groups would own nothing.
	KeyGroups int
	// Files is the number of scan splits with rows left (files, or
	// row-group pieces of a file) the stage reads, 0 when it scans none:
	// more tasks than splits would idle.
	Files int
	// FreeSlots is the slots free and not claimed by queued attempts when
	// the stage is scheduled (from Scheduler.FreeSlots, the runtime's one
	// definition), for EXPLAIN ANALYZE and for a stage that must start
	// all its tasks at once (a pipelined start passes it as Slots too).
	FreeSlots int
	// Slots is the capacity the stage's tasks are spread over: every slot
	// of the workers that take new attempts, busy or not, for a stage
	// whose tasks may queue (a blocking start). A slot busy now frees
	// while the stage runs: a stage sized by the free slots alone ran as
	// one task when a sibling stage held the other slot a moment, then
	// left that slot idle for its whole run. Zero means FreeSlots.
	Slots int
}

// ParallelismDecision is a stage's decided parallelism and why, for
// EXPLAIN ANALYZE.
type ParallelismDecision struct {
	Parallelism int
	Adaptive    bool
	In          ParallelismInput
	// PerTask is the target bytes per task after the broadcast share.
	PerTask int64
	// Wanted is ceil(Bytes / PerTask) before the clamps.
	Wanted int
	// Clamps name the limits that changed Wanted, in the order applied.
	Clamps []string
}

// String is the decision as one EXPLAIN ANALYZE line.
func (d ParallelismDecision) String() string {
	if d.In.Single {
		// A stage with no split input may still be set to a forward
		// producer's task count afterwards (a clamp): say so, instead of
		// "parallelism 1" under a header that shows the tasks it ran.
		s := "parallelism 1: single task (gather, constant or broadcast-only input)"
		if len(d.Clamps) > 0 {
			s = fmt.Sprintf("parallelism %d: no split input, %s", d.Parallelism, strings.Join(d.Clamps, ", "))
		}
		if !d.Adaptive {
			s += "; adaptive off"
		}
		return s
	}
	if !d.Adaptive {
		return fmt.Sprintf("parallelism %d: parallelism.default (adaptive off)", d.Parallelism)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "parallelism %d: adaptive, parallelism.default ignored; input %s", d.Parallelism, FormatBytes(d.In.Bytes))
	if d.In.BroadcastBytes > 0 {
		fmt.Fprintf(&sb, " + broadcast %s per task", FormatBytes(d.In.BroadcastBytes))
	}
	fmt.Fprintf(&sb, ", target %s per task -> %d", FormatBytes(d.PerTask), d.Wanted)
	if len(d.Clamps) > 0 {
		fmt.Fprintf(&sb, ", %s", strings.Join(d.Clamps, ", "))
	}
	return sb.String()
}

// DecideParallelism is the scheduler's one decision per stage. Adaptive,
// in this order:
//
//  1. Flink's rule: ceil(Bytes / per-task target), at least
//     min-parallelism. As in Flink, a broadcast input lowers the per-task
//     target by its size, at most by half, since every task reads it
//     whole.
//  2. Fill the slots: fewer tasks than slots only makes the query wait
//     (Flink sizes tasks for a busy cluster; fsql also minimises latency
//     on its own workers), so the parallelism is raised to the slots
//     (Slots, else FreeSlots) while each task keeps MinBytesPerTask.
//  3. Whole waves: above the slots, the parallelism is rounded up to a
//     multiple of them. Tasks of one stage get even bytes, so they run
//     in waves of one task per slot; 3 even tasks on 2 slots take two
//     waves of a third of the work each (2/3 of it in wall time) where 2
//     or 4 tasks take half of it.
//  4. Clamps: max-parallelism, the key groups of hash inputs, the scan
//     splits of a source (a file's kept row groups; a task with no split
//     or key group would idle).
//
// MinBytesPerTask below zero turns steps 2 and 3 off (Flink's rule
// alone). Single-task stages get 1. Adaptive off: fixed, or 1 for
// single-task stages.
func DecideParallelism(in ParallelismInput, cfg AdaptiveConfig, fixed int) ParallelismDecision {
	d := ParallelismDecision{Adaptive: cfg.Enabled, In: in}
	if in.Single {
		d.Parallelism, d.Wanted = 1, 1
		return d
	}
	if !cfg.Enabled {
		d.Parallelism, d.Wanted = max(fixed, 1), max(fixed, 1)
		return d
	}
	cfg = cfg.Normalized()
	d.PerTask = cfg.BytesPerTask - min(in.BroadcastBytes, cfg.BytesPerTask/2)
	d.Wanted = int(min((in.Bytes+d.PerTask-1)/d.PerTask, int64(1<<30)))
	p := d.Wanted
	if p < cfg.MinParallelism {
		p = cfg.MinParallelism
		d.Clamps = append(d.Clamps, fmt.Sprintf("raised to min-parallelism %d", p))
	}
	slots := in.Slots
	if slots <= 0 {
		slots = in.FreeSlots
	}
	if cfg.MinBytesPerTask > 0 && slots > p {
		fill := int(min(int64(slots), (in.Bytes+cfg.MinBytesPerTask-1)/cfg.MinBytesPerTask))
		if fill > p {
			p = fill
			d.Clamps = append(d.Clamps, fmt.Sprintf("raised to %d of %d slots (at least %s per task)", p, slots, FormatBytes(cfg.MinBytesPerTask)))
		}
	}
	if cfg.MinBytesPerTask > 0 && slots > 1 && p > slots && p%slots != 0 {
		p = (p + slots - 1) / slots * slots
		d.Clamps = append(d.Clamps, fmt.Sprintf("rounded up to %d, whole waves of %d slots", p, slots))
	}
	if p > cfg.MaxParallelism {
		p = cfg.MaxParallelism
		d.Clamps = append(d.Clamps, fmt.Sprintf("lowered to max-parallelism %d", p))
	}
	if in.KeyGroups > 0 && p > in.KeyGroups {
		p = in.KeyGroups
		d.Clamps = append(d.Clamps, fmt.Sprintf("lowered to %d key groups", p))
	}
	if in.Files > 0 && p > in.Files {
		p = in.Files
		d.Clamps = append(d.Clamps, fmt.Sprintf("lowered to %d scan splits", p))
	}
	d.Parallelism = max(p, 1)
	return d
}
