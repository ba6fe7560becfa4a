package pruning

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
)

// CoordinatorConfig sets the runtime filters of one run.
type CoordinatorConfig struct {
	// MaxValues caps the distinct keys (over all tasks) a collector keeps
	// exactly, per key column; past it the filter degrades to a bloom
	// filter plus min/max, so memory stays bounded. Zero means 65536.
	MaxValues int
}

// DefaultMaxValues is CoordinatorConfig.MaxValues when unset.
const DefaultMaxValues = 65536

// Coordinator joins the two halves of dynamic partition pruning for one
// run of a plan: the dimension side's collectors write keys into it
// (Collector, by the collector's ID), and the fact scans read decisions
// from it (Prune, with the scan's Targets). The runtime creates one per
// run and hands it to every task through its task context, so a plan
// holds only collector IDs and runs any number of times, each run with
// fresh filters. Safe for concurrent use by every task of the run.
type Coordinator struct {
	cfg        CoordinatorConfig
	mu         sync.Mutex
	collectors map[int]*Collector
}

// NewCoordinator returns a coordinator for one run.
func NewCoordinator(cfg CoordinatorConfig) *Coordinator {
	if cfg.MaxValues <= 0 {
		cfg.MaxValues = DefaultMaxValues
	}
	return &Coordinator{cfg: cfg, collectors: map[int]*Collector{}}
}

// Collector returns the collector of ID id, the same object for the same
// id, created empty on first use.
func (c *Coordinator) Collector(id int) *Collector {
	c.mu.Lock()
	defer c.mu.Unlock()
	col, ok := c.collectors[id]
	if !ok {
		col = &Collector{id: id, maxValues: c.cfg.MaxValues}
		c.collectors[id] = col
	}
	return col
}

// Target is one filter on a fact scan: the keys of collector CollectorID
// (its key column Key, 0 for single-key collectors) tested against
// Column, an index into hive.Table.Schema of the fact join key: a
// partition column prunes partitions, a file column prunes row groups by
// their min/max and rows by value. Targets are plan data: the planner
// puts them on the scan, and the scan hands them to Prune when it runs.
type Target struct {
	CollectorID int
	Column      int
	// Key is the index into the collector's Keys; 0 for a single key.
	Key int
	// Name is the fact column's name for EXPLAIN; optional.
	Name string
}

// Describe is the EXPLAIN text of a scan's targets, e.g. "dynamic filter
// on ss_sold_date_sk from collector 1".
func Describe(targets []Target) string {
	var b strings.Builder
	b.WriteString("dynamic filter on ")
	for i, t := range targets {
		if i > 0 {
			b.WriteString(", ")
		}
		name := t.Name
		if name == "" {
			name = fmt.Sprintf("#%d", t.Column)
		}
		fmt.Fprintf(&b, "%s from collector %d", name, t.CollectorID)
		if t.Key != 0 {
			fmt.Fprintf(&b, " key %d", t.Key)
		}
	}
	return b.String()
}

// CollectorIDs lists the distinct collectors targets read, in order.
func CollectorIDs(targets []Target) []int {
	ids := make([]int, 0, len(targets))
	for _, t := range targets {
		if !slices.Contains(ids, t.CollectorID) {
			ids = append(ids, t.CollectorID)
		}
	}
	return ids
}

// Collector gathers one DynamicFilterDataCollector's keys from all the
// tasks of its stage.
type Collector struct {
	id        int
	maxValues int

	mu          sync.Mutex
	parallelism int // 0 until the first call
	finished    []bool
	nFinished   int
	keys        []*keyBuilder
	frozen      []*runtimeFilter // built on first use after completion
}

func (c *Collector) checkTask(task, parallelism int) error {
	if parallelism < 1 || task < 0 || task >= parallelism {
		return fmt.Errorf("%w: dynamic filter %d: task %d of %d", ErrInternal, c.id, task, parallelism)
	}
	if c.parallelism == 0 {
		c.parallelism = parallelism
		c.finished = make([]bool, parallelism)
	} else if c.parallelism != parallelism {
		return fmt.Errorf("%w: dynamic filter %d: tasks disagree on the parallelism (%d and %d)", ErrInternal, c.id, c.parallelism, parallelism)
	}
	return nil
}

// Add takes one batch's evaluated key columns (one array per collector
// key, same length) from task of parallelism tasks. The caller releases
// the arrays after Add returns; the collector copies what it keeps.
func (c *Collector) Add(task, parallelism int, keys []arrow.Array) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.checkTask(task, parallelism); err != nil {
		return err
	}
	if c.frozen != nil || c.finished[task] {
		return fmt.Errorf("%w: dynamic filter %d: task %d added keys after it finished", ErrInternal, c.id, task)
	}
	if c.keys == nil {
		c.keys = make([]*keyBuilder, len(keys))
		for i := range c.keys {
			c.keys[i] = &keyBuilder{maxValues: c.maxValues}
		}
	} else if len(keys) != len(c.keys) {
		return fmt.Errorf("%w: dynamic filter %d: got %d key columns, then %d", ErrInternal, c.id, len(c.keys), len(keys))
	}
	for i, a := range keys {
		if err := c.keys[i].add(a); err != nil {
			return fmt.Errorf("%w: dynamic filter %d, key %d: %v", ErrUnsupported, c.id, i, err)
		}
	}
	return nil
}

// Finish is called once by every task at the end of its input, never on
// error or cancellation: the filter is complete only when all
// parallelism tasks finished. A repeated Finish of the same task counts
// once.
func (c *Collector) Finish(task, parallelism int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.checkTask(task, parallelism); err != nil {
		return err
	}
	if !c.finished[task] {
		c.finished[task] = true
		c.nFinished++
	}
	return nil
}

// filter returns the frozen filter of key column key, or an error while
// some task has not finished: a partial key set would drop matching rows.
func (c *Collector) filter(key int) (*runtimeFilter, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.parallelism == 0 || c.nFinished < c.parallelism {
		return nil, fmt.Errorf("dynamic filter %d %w: %d of %d tasks finished (the scan ran before its collector's stage completed)",
			c.id, ErrIncomplete, c.nFinished, c.parallelism)
	}
	if c.frozen == nil {
		c.frozen = make([]*runtimeFilter, len(c.keys))
		for i, k := range c.keys {
			c.frozen[i] = k.freeze()
		}
	}
	if len(c.frozen) == 0 {
		// No task saw a row: the dimension side is empty, nothing joins.
		return &runtimeFilter{empty: true}, nil
	}
	if key < 0 || key >= len(c.frozen) {
		return nil, fmt.Errorf("%w: dynamic filter %d has %d key columns, a scan asks for #%d", ErrInternal, c.id, len(c.frozen), key)
	}
	return c.frozen[key], nil
}
