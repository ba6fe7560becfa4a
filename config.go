package fsql

import (
	"fmt"
	"maps"
	"math"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fsql-dev/fsql/connectors/hive"
	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/internal/suggest"
	"github.com/fsql-dev/fsql/planner"
	fsqlruntime "github.com/fsql-dev/fsql/runtime"
	"github.com/fsql-dev/fsql/runtime/policy"
	"github.com/fsql-dev/fsql/shuffle/keygroup"
	"github.com/fsql-dev/fsql/spill"
	"github.com/fsql-dev/fsql/sql"
)

// Config is every knob of an engine. Where Apache Flink has a name for a
// knob fsql reuses it, so users can carry their knowledge over. Set it from
// text with Set (the CLI's --set key=value); the zero value is not valid,
// start from DefaultConfig.
type Config struct {
	// Parallelism is the number of tasks of every stage
	// (parallelism.default). Default: the number of CPUs.
	Parallelism int
	// MaxParallelism is the number of key groups of every hash exchange
	// (pipeline.max-parallelism), 1..32768, or 0 for unset (the default,
	// also written "auto"): then, as in Flink, the key-group count is
	// computeDefaultMaxParallelism of the parallelism in force, 1.5 times
	// it rounded up to a power of two, at least 128 (see KeyGroups).
	// Adaptive scheduling uses AdaptiveMaxParallelism instead.
	MaxParallelism int
	// TaskManagers is the number of in-process workers the engine runs
	// (minicluster.number-of-taskmanagers). Default 1.
	TaskManagers int
	// Slots is the number of task slots of each worker
	// (taskmanager.numberOfTaskSlots). Default: GOMAXPROCS.
	Slots int
	// MemoryBudget is the per-query limit in bytes on join, aggregate, sort
	// and shuffle buffers (execution.memory.query-budget). Default 8 GiB.
	// A query whose buffers outgrow it spills to TmpDirs (see Spill).
	MemoryBudget int64
	// Spill lets operators that outgrow their share of MemoryBudget write
	// to disk and finish the query there (execution.spill.enabled). Off,
	// passing the budget fails the query with a resources error. Default
	// true.
	Spill bool
	// TmpDirs are the directories spill files go in (io.tmp.dirs, as
	// Flink: separated by commas or the path-list separator; a string so
	// Config stays comparable). Empty (the default) is the system's
	// temporary directory.
	TmpDirs string
	// SpillCompression is the codec of spill files: lz4 (default), zstd or
	// none (execution.spill.compression).
	SpillCompression spill.Compression
	// BroadcastThreshold is the estimated size in bytes under which a join's
	// build side is broadcast instead of shuffled
	// (table.optimizer.join.broadcast-threshold). Default 10 MiB.
	BroadcastThreshold int64
	// DynamicFiltering turns dynamic partition pruning on
	// (table.optimizer.dynamic-filtering.enabled). Default true.
	DynamicFiltering bool
	// DynamicFilterMaxValues is how many distinct join keys a dynamic
	// filter collects exactly; past it the filter degrades to a bloom
	// filter plus min/max (table.exec.dynamic-filtering.max-values).
	// Default 65536.
	DynamicFilterMaxValues int

	// Adaptive decides each stage's parallelism from the bytes of its
	// inputs when the stage is scheduled
	// (execution.batch.adaptive.auto-parallelism.enabled). With it on,
	// Parallelism is ignored and MaxParallelism gives way to
	// AdaptiveMaxParallelism as the key-group count. Default true.
	Adaptive bool
	// AdaptiveBytesPerTask is the input volume one task should get
	// (execution.batch.adaptive.auto-parallelism.avg-data-volume-per-task).
	// Default 16 MiB, Flink's.
	AdaptiveBytesPerTask int64
	// AdaptiveMinBytesPerTask is the least input a task is given when a
	// stage is raised to fill the workers' slots
	// (execution.batch.adaptive.auto-parallelism.min-data-volume-per-task,
	// fsql's own key; Flink sizes tasks for throughput only); with it, a
	// parallelism above the slots is rounded up to a multiple of them.
	// Default 64 KiB, also when zero; negative turns both off (the key's
	// value 0).
	AdaptiveMinBytesPerTask int64
	// AdaptiveMinParallelism and AdaptiveMaxParallelism clamp the decided
	// parallelism (execution.batch.adaptive.auto-parallelism.min-parallelism,
	// ...max-parallelism). Defaults 1 and 128. The max is also the number of
	// key groups of every hash exchange while Adaptive is on.
	AdaptiveMinParallelism int
	AdaptiveMaxParallelism int
	// SkewFactor and SkewThreshold: a key group of a hash join whose bytes
	// exceed both SkewFactor times the median key group and SkewThreshold
	// is split across several tasks
	// (execution.batch.adaptive.skewed-join-optimization.skewed-factor,
	// ...skewed-threshold). Defaults 4 and 256 MiB.
	SkewFactor    float64
	SkewThreshold int64

	// Speculative runs a copy of an attempt the slow-task detector judged
	// slow, on another worker, and commits whichever finishes first
	// (execution.batch.speculative.enabled). Default true; see README,
	// "Speculative execution and failover", for why.
	Speculative bool
	// SpeculativeMaxAttempts is the most attempts of one task running at
	// once (execution.batch.speculative.max-concurrent-executions).
	// Default 2.
	SpeculativeMaxAttempts int
	// BlockSlowNodeDuration is how long the worker of a slow attempt gets
	// no new attempt, renewed while slow attempts run there
	// (execution.batch.speculative.block-slow-node-duration). Default 1
	// minute, Flink's.
	BlockSlowNodeDuration time.Duration
	// SlowTaskDetector is the detector's rule and thresholds (the
	// slow-task-detector.* keys; defaults in
	// policy.DefaultDetectorConfig: check every 100 ms, ratio 0.75,
	// multiplier 1.5, lower bound 200 ms, mode progress).
	SlowTaskDetector policy.DetectorConfig
	// RestartAttempts is how many times one task is retried after
	// attempts that failed with a retryable error
	// (restart-strategy.fixed-delay.attempts); RestartDelay the wait
	// before each retry (restart-strategy.fixed-delay.delay). Defaults 3
	// and 100 ms.
	RestartAttempts int
	RestartDelay    time.Duration
	// ShuffleMode is how exchanges move data between stages
	// (execution.batch-shuffle-mode, Flink's values):
	// ALL_EXCHANGES_BLOCKING starts a stage when its producers finished;
	// the two hybrid modes also start a consumer of gather, broadcast and
	// forward edges while its producers run, when the free slots hold
	// both (HYBRID_SELECTIVE behaves as HYBRID_FULL for now). Default
	// blocking, until the hybrid benchmark decides otherwise.
	ShuffleMode fsqlruntime.ShuffleMode

	// PathsOutsideData lets queries name files outside the data directory
	// as tables: absolute paths, paths through "..", symlinks that lead
	// out (path-tables.outside-data-dir). Default false, so a program
	// embedding fsql for others does not open every file it may read; the
	// command line sets it.
	PathsOutsideData bool
	// TruncateNanos reads Parquet nanosecond TIMESTAMP and TIME values
	// (and INT96) with their sub-microsecond digits dropped
	// (parquet.nanos-truncate). Default false: such a value fails the
	// query, since fsql's DATETIME, TIMESTAMP and TIME hold microseconds,
	// as MySQL's do.
	TruncateNanos bool
	// CSV says how CSV files are read (the csv.* keys; defaults in
	// hive.DefaultCSVOptions).
	CSV hive.CSVOptions
	// Write says how written tables' Parquet files are laid out:
	// parquet.compression (zstd by default; snappy, gzip, lz4, brotli,
	// none), sink.rolling-policy.file-size (the target file size, 128 MiB
	// by default: a writing task starts a new file once its file reached
	// it) and parquet.row-group-rows (122,880 by default; row groups are
	// what min/max statistics skip).
	Write hive.WriteOptions

	// DisabledRules names logical optimizer rules to skip, comma-separated
	// (see planner.RuleNames), so a verification run can check that each
	// rule leaves every answer unchanged (table.optimizer.disabled-rules;
	// fsql's own key). Set and Open reject unknown names. A string, so a
	// Config stays comparable. Default none.
	DisabledRules string
}

// KeyGroups is the number of key groups of every hash exchange, fixed at
// plan time: AdaptiveMaxParallelism while adaptive scheduling is on (so
// any decided parallelism fits), else MaxParallelism when set, else Flink's
// default for Parallelism (keygroup.DefaultMaxParallelism: 128 up to a
// parallelism of 85, then 1.5 times the parallelism rounded up to a power
// of two), so any parallelism.default up to 32768 works.
func (c Config) KeyGroups() int {
	switch {
	case c.Adaptive:
		return c.AdaptiveMaxParallelism
	case c.MaxParallelism > 0:
		return c.MaxParallelism
	}
	return keygroup.DefaultMaxParallelism(c.Parallelism)
}

// DefaultConfig returns the defaults documented on each field.
func DefaultConfig() Config {
	spec, restart := policy.DefaultSpeculationConfig(), policy.DefaultRestartConfig()
	return Config{
		Parallelism:            runtime.NumCPU(),
		MaxParallelism:         0,
		TaskManagers:           1,
		Slots:                  runtime.GOMAXPROCS(0),
		MemoryBudget:           8 << 30,
		Spill:                  true,
		SpillCompression:       spill.LZ4,
		BroadcastThreshold:     10 << 20,
		DynamicFiltering:       true,
		DynamicFilterMaxValues: 65536,

		Adaptive:                true,
		AdaptiveBytesPerTask:    16 << 20,
		AdaptiveMinBytesPerTask: 64 << 10,
		AdaptiveMinParallelism:  1,
		AdaptiveMaxParallelism:  128,
		SkewFactor:              4,
		SkewThreshold:           256 << 20,

		Speculative:            spec.Enabled,
		SpeculativeMaxAttempts: spec.MaxConcurrent,
		BlockSlowNodeDuration:  spec.BlockDuration,
		SlowTaskDetector:       spec.Detector,
		RestartAttempts:        restart.Attempts,
		RestartDelay:           restart.Delay,

		CSV: hive.DefaultCSVOptions(),

		Write: hive.WriteOptions{Compression: "zstd", RowGroupRows: hive.DefaultRowGroupRows, TargetFileSize: hive.DefaultTargetFileSize},
	}
}

// catalogOptions is the connector's part of Config.
func (c Config) catalogOptions() hive.Options {
	return hive.Options{OutsideDataDir: c.PathsOutsideData, TruncateNanos: c.TruncateNanos, CSV: c.CSV}
}

// check rejects settings no engine can run with: a parallelism above
// the key groups of a hash exchange.
func (c Config) check() error {
	p := c.Parallelism
	if c.Adaptive { // parallelism.default is ignored; the key groups are the adaptive max
		p = c.AdaptiveMinParallelism
	}
	if err := keygroup.Check(p, c.KeyGroups()); err != nil {
		return errs.New(errs.ErWrongValueForVar, "%w", err)
	}
	_, err := disabledRules(c.DisabledRules)
	return err
}

// disabledRules checks the names of Config.DisabledRules against the
// optimizer's rules, so a misspelt name cannot silently disable nothing,
// and returns them as the optimizer takes them.
func disabledRules(list string) (map[string]bool, error) {
	var out map[string]bool
	known := planner.RuleNames()
	for _, n := range strings.Split(list, ",") {
		if n = strings.TrimSpace(n); n == "" {
			continue
		}
		if out == nil {
			out = map[string]bool{}
		}
		if !slices.Contains(known, n) {
			return nil, errs.New(errs.ErWrongValueForVar, "table.optimizer.disabled-rules: unknown rule %q; the rules are %s", n, strings.Join(known, ", "))
		}
		out[n] = true
	}
	return out, nil
}

// variables are the settings as SHOW VARIABLES lists them.
func (c Config) variables() []sql.Variable {
	ss := c.Settings()
	out := make([]sql.Variable, len(ss))
	for i, s := range ss {
		out[i] = sql.Variable{Name: s.Key, Value: s.Value}
	}
	return out
}

// configKey is one entry of the key table: what the key means (fsql
// help), how text sets it (--set, SET, Config.Set) and how its value
// reads back as text (SHOW VARIABLES, Config.Get). get's text must set the
// same value again: SET key = DEFAULT sets the default's text.
//
// Every key is settable in a Session: keys the engine reads when it
// opens (the worker pool, the catalog's options) are honoured by the
// session's own pool or catalog (Session.resources). sessionCheck, when
// set, vets a session's new value against the engine's: a session may
// narrow what the engine allows, never widen it.
type configKey struct {
	doc          string
	set          func(c *Config, v string) error
	get          func(c *Config) string
	sessionCheck func(engine, session *Config) error
}

var configKeys = map[string]configKey{
	"parallelism.default": {
		doc: "tasks per stage (default: the number of CPUs)",
		set: func(c *Config, v string) error { return setInt(&c.Parallelism, v, 1, 32768) },
		get: func(c *Config) string { return strconv.Itoa(c.Parallelism) },
	},
	"pipeline.max-parallelism": {
		doc: "key groups per hash exchange (0 or auto: from parallelism.default, as Flink)",
		set: func(c *Config, v string) error {
			if strings.EqualFold(v, "auto") || v == "0" {
				c.MaxParallelism = 0
				return nil
			}
			if err := setInt(&c.MaxParallelism, v, 1, 32768); err != nil {
				return fmt.Errorf("want auto, 0 or an integer in 1..32768, got %q", v)
			}
			return nil
		},
		get: func(c *Config) string {
			if c.MaxParallelism == 0 {
				return "auto"
			}
			return strconv.Itoa(c.MaxParallelism)
		},
	},
	"taskmanager.numberOfTaskSlots": {
		doc: "task slots of each in-process worker (default: GOMAXPROCS)",
		set: func(c *Config, v string) error { return setInt(&c.Slots, v, 1, 4096) },
		get: func(c *Config) string { return strconv.Itoa(c.Slots) },
	},
	"minicluster.number-of-taskmanagers": {
		doc: "in-process workers the engine runs",
		set: func(c *Config, v string) error { return setInt(&c.TaskManagers, v, 1, 256) },
		get: func(c *Config) string { return strconv.Itoa(c.TaskManagers) },
	},
	"execution.memory.query-budget": {
		doc: "bytes a query may hold in join, aggregate, sort and shuffle buffers (0: no limit)",
		set: func(c *Config, v string) error { return setBytes(&c.MemoryBudget, v) },
		get: func(c *Config) string { return formatBytes(c.MemoryBudget) },
	},
	"parquet.compression": {
		doc: "codec of written Parquet files: zstd, snappy, gzip, lz4, brotli or none",
		set: func(c *Config, v string) error {
			if _, err := (hive.WriteOptions{Compression: v}).Normalized(); err != nil {
				return err
			}
			c.Write.Compression = strings.ToLower(v)
			return nil
		},
		get: func(c *Config) string { return c.Write.Compression },
	},
	"sink.rolling-policy.file-size": {
		doc: "target size of a written Parquet file",
		set: func(c *Config, v string) error { return setBytes(&c.Write.TargetFileSize, v) },
		get: func(c *Config) string { return formatBytes(c.Write.TargetFileSize) },
	},
	"parquet.row-group-rows": {
		doc: "rows per row group of written Parquet files",
		set: func(c *Config, v string) error {
			n := int(c.Write.RowGroupRows)
			err := setInt(&n, v, 1, 1<<30)
			c.Write.RowGroupRows = int64(n)
			return err
		},
		get: func(c *Config) string { return strconv.FormatInt(c.Write.RowGroupRows, 10) },
	},
	"execution.spill.enabled": {
		doc: "spill sort, top-N, window, hash aggregate and shuffle buffers to io.tmp.dirs past the budget (false: fail instead)",
		set: func(c *Config, v string) error { return setBool(&c.Spill, v) },
		get: func(c *Config) string { return strconv.FormatBool(c.Spill) },
	},
	"execution.spill.compression": {
		doc: "codec of spill files: lz4, zstd or none",
		set: func(c *Config, v string) error {
			comp, err := spill.ParseCompression(v)
			if err != nil {
				return err
			}
			c.SpillCompression = comp
			return nil
		},
		get: func(c *Config) string { return c.SpillCompression.String() },
	},
	"io.tmp.dirs": {
		doc: "directories for spill files, separated by commas (default: the system temporary directory)",
		set: func(c *Config, v string) error {
			c.TmpDirs = strings.Join(spill.ParseDirs(v), ",")
			return nil
		},
		get: func(c *Config) string { return c.TmpDirs },
	},
	"table.optimizer.join.broadcast-threshold": {
		doc: "build sides estimated smaller than this are broadcast",
		set: func(c *Config, v string) error { return setBytes(&c.BroadcastThreshold, v) },
		get: func(c *Config) string { return formatBytes(c.BroadcastThreshold) },
	},
	"table.exec.dynamic-filtering.max-values": {
		doc: "distinct keys a dynamic filter holds before degrading to bloom + min/max",
		set: func(c *Config, v string) error { return setInt(&c.DynamicFilterMaxValues, v, 1, 1<<26) },
		get: func(c *Config) string { return strconv.Itoa(c.DynamicFilterMaxValues) },
	},
	"table.optimizer.dynamic-filtering.enabled": {
		doc: "dynamic partition pruning",
		set: func(c *Config, v string) error { return setBool(&c.DynamicFiltering, v) },
		get: func(c *Config) string { return strconv.FormatBool(c.DynamicFiltering) },
	},
	"execution.batch.adaptive.auto-parallelism.enabled": {
		doc: "decide each stage's parallelism from its input bytes (parallelism.default is then ignored)",
		set: func(c *Config, v string) error { return setBool(&c.Adaptive, v) },
		get: func(c *Config) string { return strconv.FormatBool(c.Adaptive) },
	},
	"execution.batch.adaptive.auto-parallelism.avg-data-volume-per-task": {
		doc: "input bytes one task should get",
		set: func(c *Config, v string) error {
			var n int64
			if err := setBytes(&n, v); err != nil {
				return err
			}
			if n < 1 {
				return fmt.Errorf("want a positive byte size, got %q", v)
			}
			c.AdaptiveBytesPerTask = n
			return nil
		},
		get: func(c *Config) string { return formatBytes(c.AdaptiveBytesPerTask) },
	},
	"execution.batch.adaptive.auto-parallelism.min-data-volume-per-task": {
		doc: "least input bytes a task gets when a stage is raised to fill the slots (above them, parallelism is a multiple of the slots); 0 turns both off",
		set: func(c *Config, v string) error {
			var n int64
			if err := setBytes(&n, v); err != nil {
				return err
			}
			switch {
			case n < 0:
				return fmt.Errorf("want a byte size, got %q", v)
			case n == 0:
				n = -1 // off; a zero field means the default
			}
			c.AdaptiveMinBytesPerTask = n
			return nil
		},
		get: func(c *Config) string {
			if c.AdaptiveMinBytesPerTask < 0 {
				return "0"
			}
			return formatBytes(c.AdaptiveMinBytesPerTask)
		},
	},
	"execution.batch.adaptive.auto-parallelism.min-parallelism": {
		doc: "lowest decided parallelism",
		set: func(c *Config, v string) error { return setInt(&c.AdaptiveMinParallelism, v, 1, 32768) },
		get: func(c *Config) string { return strconv.Itoa(c.AdaptiveMinParallelism) },
	},
	"execution.batch.adaptive.auto-parallelism.max-parallelism": {
		doc: "highest decided parallelism; the key-group count while adaptive",
		set: func(c *Config, v string) error { return setInt(&c.AdaptiveMaxParallelism, v, 1, 32768) },
		get: func(c *Config) string { return strconv.Itoa(c.AdaptiveMaxParallelism) },
	},
	"execution.batch.adaptive.skewed-join-optimization.skewed-factor": {
		doc: "a join key group this many times the median is skewed",
		set: func(c *Config, v string) error {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f < 1 || math.IsInf(f, 0) {
				return fmt.Errorf("want a number of at least 1, got %q", v)
			}
			c.SkewFactor = f
			return nil
		},
		get: func(c *Config) string { return strconv.FormatFloat(c.SkewFactor, 'g', -1, 64) },
	},
	"table.optimizer.disabled-rules": {
		doc: "optimizer rules to skip, comma-separated, for checking a rule's effect (" + strings.Join(planner.RuleNames(), ", ") + ")",
		set: func(c *Config, v string) error {
			rules, err := disabledRules(v)
			if err != nil {
				return err
			}
			c.DisabledRules = strings.Join(slices.Sorted(maps.Keys(rules)), ",")
			return nil
		},
		get: func(c *Config) string { return c.DisabledRules },
	},
	"execution.batch.adaptive.skewed-join-optimization.skewed-threshold": {
		doc: "a join key group must also be larger than this to be skewed",
		set: func(c *Config, v string) error { return setBytes(&c.SkewThreshold, v) },
		get: func(c *Config) string { return formatBytes(c.SkewThreshold) },
	},
	"execution.batch.speculative.enabled": {
		doc: "run copies of slow attempts on other workers; the first to finish wins",
		set: func(c *Config, v string) error { return setBool(&c.Speculative, v) },
		get: func(c *Config) string { return strconv.FormatBool(c.Speculative) },
	},
	"execution.batch.speculative.max-concurrent-executions": {
		doc: "most attempts of one task running at once (1: no copies)",
		set: func(c *Config, v string) error { return setInt(&c.SpeculativeMaxAttempts, v, 1, 64) },
		get: func(c *Config) string { return strconv.Itoa(c.SpeculativeMaxAttempts) },
	},
	"execution.batch.speculative.block-slow-node-duration": {
		doc: "how long a slow attempt's worker gets no new attempt (0: no blocklist)",
		set: func(c *Config, v string) error { return setDuration(&c.BlockSlowNodeDuration, v, false) },
		get: func(c *Config) string { return formatDuration(c.BlockSlowNodeDuration) },
	},
	"slow-task-detector.check-interval": {
		doc: "how often the slow-task detector runs",
		set: func(c *Config, v string) error { return setDuration(&c.SlowTaskDetector.CheckInterval, v, true) },
		get: func(c *Config) string { return formatDuration(c.SlowTaskDetector.CheckInterval) },
	},
	"slow-task-detector.execution-time.baseline-ratio": {
		doc: "share of a stage's tasks that must finish before its attempts are judged, in [0, 1)",
		set: func(c *Config, v string) error {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f < 0 || f >= 1 {
				return fmt.Errorf("want a number in [0, 1), got %q", v)
			}
			c.SlowTaskDetector.BaselineRatio = f
			return nil
		},
		get: func(c *Config) string { return strconv.FormatFloat(c.SlowTaskDetector.BaselineRatio, 'g', -1, 64) },
	},
	"slow-task-detector.execution-time.baseline-multiplier": {
		doc: "the finished tasks' median time per input byte is multiplied by this into the baseline",
		set: func(c *Config, v string) error {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f < 1 || math.IsInf(f, 0) {
				return fmt.Errorf("want a number of at least 1, got %q", v)
			}
			c.SlowTaskDetector.BaselineMultiplier = f
			return nil
		},
		get: func(c *Config) string { return strconv.FormatFloat(c.SlowTaskDetector.BaselineMultiplier, 'g', -1, 64) },
	},
	"slow-task-detector.execution-time.baseline-lower-bound": {
		doc: "no attempt younger than this is slow",
		set: func(c *Config, v string) error { return setDuration(&c.SlowTaskDetector.BaselineLowerBound, v, false) },
		get: func(c *Config) string { return formatDuration(c.SlowTaskDetector.BaselineLowerBound) },
	},
	"slow-task-detector.mode": {
		doc: "progress (input-bytes weighted baseline and time left at the attempt's own rate), input-bytes (Flink 1.17) or time-only (Flink 1.16)",
		set: func(c *Config, v string) error {
			m, err := policy.ParseDetectorMode(v)
			if err != nil {
				return err
			}
			c.SlowTaskDetector.Mode = m
			return nil
		},
		get: func(c *Config) string { return c.SlowTaskDetector.Mode.String() },
	},
	"execution.batch-shuffle-mode": {
		doc: "ALL_EXCHANGES_BLOCKING (a stage starts when its producers finished), ALL_EXCHANGES_HYBRID_FULL or ALL_EXCHANGES_HYBRID_SELECTIVE (consumers of gather, broadcast and forward edges may start while producers run, when slots allow)",
		set: func(c *Config, v string) error {
			m, err := fsqlruntime.ParseShuffleMode(v)
			if err != nil {
				return err
			}
			c.ShuffleMode = m
			return nil
		},
		get: func(c *Config) string { return c.ShuffleMode.String() },
	},
	"restart-strategy.fixed-delay.attempts": {
		doc: "retries of one task after attempts failed with a transient error (0: none)",
		set: func(c *Config, v string) error { return setInt(&c.RestartAttempts, v, 0, 1000) },
		get: func(c *Config) string { return strconv.Itoa(c.RestartAttempts) },
	},
	"restart-strategy.fixed-delay.delay": {
		doc: "wait before a failed attempt's retry on the worker where it failed (a retry on another worker starts at once)",
		set: func(c *Config, v string) error { return setDuration(&c.RestartDelay, v, false) },
		get: func(c *Config) string { return formatDuration(c.RestartDelay) },
	},
	"path-tables.outside-data-dir": {
		doc: "queries may name files outside the data directory (absolute paths, ..); the command line's default is true",
		set: func(c *Config, v string) error { return setBool(&c.PathsOutsideData, v) },
		get: func(c *Config) string { return strconv.FormatBool(c.PathsOutsideData) },
		// The embedding program decides which files its users' SQL may
		// open; SET must not widen that.
		sessionCheck: func(engine, session *Config) error {
			if session.PathsOutsideData && !engine.PathsOutsideData {
				return fmt.Errorf("the engine was opened with false, and a session cannot allow what the engine does not (set it before Open, or fsql --set)")
			}
			return nil
		},
	},
	"parquet.nanos-truncate": {
		doc: "drop the sub-microsecond digits of Parquet nanosecond timestamps and times instead of failing",
		set: func(c *Config, v string) error { return setBool(&c.TruncateNanos, v) },
		get: func(c *Config) string { return strconv.FormatBool(c.TruncateNanos) },
	},
	"csv.field-delimiter": {
		doc: "the character between CSV fields (\\t or tab for a tab)",
		set: func(c *Config, v string) error { return setChar(&c.CSV.Delimiter, v, false) },
		get: func(c *Config) string { return charText(c.CSV.Delimiter) },
	},
	"csv.quote-character": {
		doc: "the character enclosing CSV fields; empty: no quoting",
		set: func(c *Config, v string) error { return setChar(&c.CSV.Quote, v, true) },
		get: func(c *Config) string { return charText(c.CSV.Quote) },
	},
	"csv.escape-character": {
		doc: "the character that takes the next one literally (MySQL's ESCAPED BY); empty (default): none",
		set: func(c *Config, v string) error { return setChar(&c.CSV.Escape, v, true) },
		get: func(c *Config) string { return charText(c.CSV.Escape) },
	},
	"csv.header": {
		doc: "the first CSV record names the columns",
		set: func(c *Config, v string) error { return setBool(&c.CSV.Header, v) },
		get: func(c *Config) string { return strconv.FormatBool(c.CSV.Header) },
	},
	"csv.null-literal": {
		doc: "unquoted CSV text read as NULL besides the empty field (default \\N); empty: only the empty field",
		set: func(c *Config, v string) error { c.CSV.NullLiteral = v; return nil },
		get: func(c *Config) string { return c.CSV.NullLiteral },
	},
	"csv.sample-rows": {
		doc: "CSV records per file read to detect column types; 0: whole files",
		set: func(c *Config, v string) error { return setInt(&c.CSV.SampleRows, v, 0, 1<<30) },
		get: func(c *Config) string { return strconv.Itoa(c.CSV.SampleRows) },
	},
	"csv.split-size": {
		doc: "a CSV file bigger than this is read in byte ranges of about this size, one task each (each starting at a record, quoted line breaks included); 0: every file by one task",
		set: func(c *Config, v string) error { return setBytes(&c.CSV.SplitSize, v) },
		get: func(c *Config) string { return formatBytes(c.CSV.SplitSize) },
	},
}

// setChar accepts one ASCII character, or \t / tab for a tab; empty only
// where the setting can be off.
func setChar(dst *byte, v string, emptyOK bool) error {
	switch {
	case v == "" && emptyOK:
		*dst = 0
	case v == `\t` || strings.EqualFold(v, "tab"):
		*dst = '\t'
	case len(v) == 1 && v[0] < 0x80 && v[0] != '\n' && v[0] != '\r':
		*dst = v[0]
	default:
		return fmt.Errorf("want one ASCII character (or \\t), got %q", v)
	}
	return nil
}

// charText is a setChar value as text: "" for none, \t for a tab.
func charText(b byte) string {
	switch b {
	case 0:
		return ""
	case '\t':
		return `\t`
	}
	return string(rune(b))
}

// ConfigKeys lists the keys Set accepts, sorted.
func ConfigKeys() []string {
	keys := make([]string, 0, len(configKeys))
	for k := range configKeys {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Setting is one configuration key, its value as text and what it means.
type Setting struct {
	Key   string
	Value string
	Doc   string
}

// Settings lists every key with its value in c, sorted by key (what
// SHOW VARIABLES prints; fsql help prints DefaultConfig's).
func (c Config) Settings() []Setting {
	out := make([]Setting, 0, len(configKeys))
	for _, k := range ConfigKeys() {
		e := configKeys[k]
		out = append(out, Setting{Key: k, Value: e.get(&c), Doc: e.doc})
	}
	return out
}

// Set changes the knob named key (a Flink-style name such as
// parallelism.default; case does not matter) to the value written as
// text. Numbers are decimal; byte sizes take a unit (64mb, 8gb);
// booleans are true/false, on/off or 1/0. An unknown key fails with the
// closest known keys (errs.ErUnknownSystemVariable); a value the key does
// not accept is errs.ErWrongValueForVar.
func (c *Config) Set(key, value string) error {
	name, err := c.set(key, value)
	if err != nil && name != "" {
		return errs.New(errs.ErWrongValueForVar, "config key %s: %w", name, err)
	}
	return err
}

// set is Set without the key in the message of a bad value: it returns
// the key's name as the table spells it and the value's error, or no
// name and the unknown-key error.
func (c *Config) set(key, value string) (string, error) {
	name, k, err := lookupKey(key)
	if err != nil {
		return "", err
	}
	return name, k.set(c, strings.TrimSpace(value))
}

// Get returns the value of the knob named key as text that Set accepts.
func (c *Config) Get(key string) (string, error) {
	_, k, err := lookupKey(key)
	if err != nil {
		return "", err
	}
	return k.get(c), nil
}

// lookupKey finds a key as written, else ignoring case (SQL's SET is
// case-insensitive, and no two keys differ only in case).
func lookupKey(key string) (string, configKey, error) {
	key = strings.TrimSpace(key)
	if k, ok := configKeys[key]; ok {
		return key, k, nil
	}
	for name, k := range configKeys {
		if strings.EqualFold(name, key) {
			return name, k, nil
		}
	}
	hint := suggest.Phrase(suggest.Closest(key, ConfigKeys()), nil)
	if hint == "" {
		hint = "; fsql help lists the keys"
	} else {
		hint += " (fsql help lists the keys)"
	}
	return "", configKey{}, errs.New(errs.ErUnknownSystemVariable, "unknown config key %q%s", key, hint)
}

// setBool accepts MySQL's and Flink's spellings: true/false, on/off, 1/0.
func setBool(dst *bool, v string) error {
	switch strings.ToLower(v) {
	case "true", "on", "1", "t":
		*dst = true
	case "false", "off", "0", "f":
		*dst = false
	default:
		return fmt.Errorf("want true or false (on/off, 1/0), got %q", v)
	}
	return nil
}

// formatBytes writes n in the largest unit that divides it, as setBytes
// reads it: 8gb, 10mb, 1000.
func formatBytes(n int64) string {
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"gb", 1 << 30}, {"mb", 1 << 20}, {"kb", 1 << 10}} {
		if n != 0 && n%u.m == 0 {
			return strconv.FormatInt(n/u.m, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

func setInt(dst *int, v string, lo, hi int) error {
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return fmt.Errorf("want an integer in %d..%d, got %q", lo, hi, v)
	}
	*dst = n
	return nil
}

// setBytes accepts a plain byte count or one with a unit: 64mb, 8 gb, 512k.
func setBytes(dst *int64, v string) error {
	s := strings.ToLower(strings.ReplaceAll(v, " ", ""))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"kb", 1 << 10}, {"mb", 1 << 20}, {"gb", 1 << 30}, {"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"b", 1}} {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSuffix(s, u.suffix), u.m
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/mult {
		return fmt.Errorf("want a byte size such as 1048576, 64mb or 8gb, got %q", v)
	}
	*dst = n * mult
	return nil
}

// setDuration accepts a Go duration (100ms, 1.5s, 1m) or Flink's form, a
// number and a unit with or without a space (100 ms, 1 min, 2 h); a bare
// number is milliseconds, as in Flink. positive refuses zero.
func setDuration(dst *time.Duration, v string, positive bool) error {
	bad := fmt.Errorf("want a duration such as 100ms, 1 s or 1 min, got %q", v)
	s := strings.ToLower(strings.ReplaceAll(v, " ", ""))
	d, err := time.ParseDuration(s)
	if err != nil {
		i := 0
		for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
			i++
		}
		n, perr := strconv.ParseFloat(s[:i], 64)
		if perr != nil {
			return bad
		}
		units := map[string]time.Duration{
			"": time.Millisecond, "ns": time.Nanosecond, "nano": time.Nanosecond, "nanos": time.Nanosecond,
			"us": time.Microsecond, "µs": time.Microsecond, "micro": time.Microsecond, "micros": time.Microsecond,
			"ms": time.Millisecond, "milli": time.Millisecond, "millis": time.Millisecond,
			"s": time.Second, "sec": time.Second, "secs": time.Second, "second": time.Second, "seconds": time.Second,
			"m": time.Minute, "min": time.Minute, "mins": time.Minute, "minute": time.Minute, "minutes": time.Minute,
			"h": time.Hour, "hour": time.Hour, "hours": time.Hour,
		}
		u, ok := units[s[i:]]
		if !ok || n > float64(math.MaxInt64)/float64(u) {
			return bad
		}
		d = time.Duration(n * float64(u))
	}
	if d < 0 || (positive && d == 0) {
		if positive {
			return fmt.Errorf("want a positive duration, got %q", v)
		}
		return fmt.Errorf("want a duration of at least 0, got %q", v)
	}
	*dst = d
	return nil
}

// formatDuration is d as setDuration reads it back, in the largest whole
// unit: 1min, 2s, 100ms (Go's form for anything finer).
func formatDuration(d time.Duration) string {
	switch {
	case d == 0:
		return "0ms"
	case d%time.Minute == 0:
		return strconv.FormatInt(int64(d/time.Minute), 10) + "min"
	case d%time.Second == 0:
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	case d%time.Millisecond == 0:
		return strconv.FormatInt(int64(d/time.Millisecond), 10) + "ms"
	}
	return d.String()
}
