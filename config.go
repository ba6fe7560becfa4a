package fsql

import (
	"fmt"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"github.com/fsql-dev/fsql/connectors/hive"
	"github.com/fsql-dev/fsql/shuffle/keygroup"
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
	MemoryBudget int64
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
	return Config{
		Parallelism:            runtime.NumCPU(),
		MaxParallelism:         0,
		TaskManagers:           1,
		Slots:                  runtime.GOMAXPROCS(0),
		MemoryBudget:           8 << 30,
		BroadcastThreshold:     10 << 20,
		DynamicFiltering:       true,
		DynamicFilterMaxValues: 65536,

		Adaptive:               true,
		AdaptiveBytesPerTask:   16 << 20,
		AdaptiveMinParallelism: 1,
		AdaptiveMaxParallelism: 128,
		SkewFactor:             4,
		SkewThreshold:          256 << 20,

		CSV: hive.DefaultCSVOptions(),
	}
}

// catalogOptions is the connector's part of Config.
func (c Config) catalogOptions() hive.Options {
	return hive.Options{OutsideDataDir: c.PathsOutsideData, TruncateNanos: c.TruncateNanos, CSV: c.CSV}
}

type configKey struct {
	doc string
	set func(c *Config, v string) error
}

var configKeys = map[string]configKey{
	"parallelism.default": {"tasks per stage", func(c *Config, v string) error {
		return setInt(&c.Parallelism, v, 1, 32768)
	}},
	"pipeline.max-parallelism": {"key groups per hash exchange (0 or auto: from parallelism.default, as Flink)", func(c *Config, v string) error {
		if strings.EqualFold(v, "auto") || v == "0" {
			c.MaxParallelism = 0
			return nil
		}
		if err := setInt(&c.MaxParallelism, v, 1, 32768); err != nil {
			return fmt.Errorf("want auto, 0 or an integer in 1..32768, got %q", v)
		}
		return nil
	}},
	"taskmanager.numberOfTaskSlots": {"task slots of each in-process worker", func(c *Config, v string) error {
		return setInt(&c.Slots, v, 1, 4096)
	}},
	"minicluster.number-of-taskmanagers": {"in-process workers the engine runs", func(c *Config, v string) error {
		return setInt(&c.TaskManagers, v, 1, 256)
	}},
	"execution.memory.query-budget": {"bytes a query may hold in buffers", func(c *Config, v string) error {
		return setBytes(&c.MemoryBudget, v)
	}},
	"table.optimizer.join.broadcast-threshold": {"build sides smaller than this are broadcast", func(c *Config, v string) error {
		return setBytes(&c.BroadcastThreshold, v)
	}},
	"table.exec.dynamic-filtering.max-values": {"distinct keys a dynamic filter holds before degrading to bloom + min/max", func(c *Config, v string) error {
		return setInt(&c.DynamicFilterMaxValues, v, 1, 1<<26)
	}},
	"table.optimizer.dynamic-filtering.enabled": {"dynamic partition pruning", func(c *Config, v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("want true or false, got %q", v)
		}
		c.DynamicFiltering = b
		return nil
	}},
	"execution.batch.adaptive.auto-parallelism.enabled": {"decide each stage's parallelism from its input bytes (parallelism.default is then ignored)", func(c *Config, v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("want true or false, got %q", v)
		}
		c.Adaptive = b
		return nil
	}},
	"execution.batch.adaptive.auto-parallelism.avg-data-volume-per-task": {"input bytes one task should get", func(c *Config, v string) error {
		var n int64
		if err := setBytes(&n, v); err != nil {
			return err
		}
		if n < 1 {
			return fmt.Errorf("want a positive byte size, got %q", v)
		}
		c.AdaptiveBytesPerTask = n
		return nil
	}},
	"execution.batch.adaptive.auto-parallelism.min-parallelism": {"lowest decided parallelism", func(c *Config, v string) error {
		return setInt(&c.AdaptiveMinParallelism, v, 1, 32768)
	}},
	"execution.batch.adaptive.auto-parallelism.max-parallelism": {"highest decided parallelism; the key-group count while adaptive", func(c *Config, v string) error {
		return setInt(&c.AdaptiveMaxParallelism, v, 1, 32768)
	}},
	"execution.batch.adaptive.skewed-join-optimization.skewed-factor": {"a join key group this many times the median is skewed", func(c *Config, v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 1 {
			return fmt.Errorf("want a number of at least 1, got %q", v)
		}
		c.SkewFactor = f
		return nil
	}},
	"execution.batch.adaptive.skewed-join-optimization.skewed-threshold": {"a join key group must also be larger than this to be skewed", func(c *Config, v string) error {
		return setBytes(&c.SkewThreshold, v)
	}},
	"path-tables.outside-data-dir": {"queries may name files outside the data directory (absolute paths, ..); the command line's default is true", func(c *Config, v string) error {
		return setBool(&c.PathsOutsideData, v)
	}},
	"parquet.nanos-truncate": {"drop the sub-microsecond digits of Parquet nanosecond timestamps and times instead of failing", func(c *Config, v string) error {
		return setBool(&c.TruncateNanos, v)
	}},
	"csv.field-delimiter": {"the character between CSV fields (\\t or tab for a tab)", func(c *Config, v string) error {
		return setChar(&c.CSV.Delimiter, v, false)
	}},
	"csv.quote-character": {"the character enclosing CSV fields; empty: no quoting", func(c *Config, v string) error {
		return setChar(&c.CSV.Quote, v, true)
	}},
	"csv.escape-character": {"the character that takes the next one literally (MySQL's ESCAPED BY); empty (default): none", func(c *Config, v string) error {
		return setChar(&c.CSV.Escape, v, true)
	}},
	"csv.header": {"the first CSV record names the columns", func(c *Config, v string) error {
		return setBool(&c.CSV.Header, v)
	}},
	"csv.null-literal": {"unquoted CSV text read as NULL besides the empty field (default \\N); empty: only the empty field", func(c *Config, v string) error {
		c.CSV.NullLiteral = v
		return nil
	}},
	"csv.sample-rows": {"CSV records per file read to detect column types; 0: whole files", func(c *Config, v string) error {
		return setInt(&c.CSV.SampleRows, v, 0, 1<<30)
	}},
}

func setBool(dst *bool, v string) error {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return fmt.Errorf("want true or false, got %q", v)
	}
	*dst = b
	return nil
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

// ConfigKeys lists the keys Set accepts, sorted.
func ConfigKeys() []string {
	keys := make([]string, 0, len(configKeys))
	for k := range configKeys {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Set changes the knob named key (a Flink-style name such as
// parallelism.default) to the value written as text.
func (c *Config) Set(key, value string) error {
	k, ok := configKeys[strings.TrimSpace(key)]
	if !ok {
		return fmt.Errorf("unknown config key %q; known keys: %s", key, strings.Join(ConfigKeys(), ", "))
	}
	if err := k.set(c, strings.TrimSpace(value)); err != nil {
		return fmt.Errorf("config key %s: %w", key, err)
	}
	return nil
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
	if err != nil || n < 0 {
		return fmt.Errorf("want a byte size such as 1048576, 64mb or 8gb, got %q", v)
	}
	*dst = n * mult
	return nil
}
