package pruning

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fsql-dev/fsql/errs"
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
// tasks of its stage. Each attempt of a task stages its keys apart; the
// runtime commits one attempt per task, whose keys are then merged into
// the filter, and discards the others. So a task counts once however many
// attempts ran, and a failed attempt's keys never reach the filter.
type Collector struct {
	id        int
	maxValues int

	mu          sync.Mutex
	parallelism int // 0 until the first call
	committed   []bool
	attemptOf   []int // the committed attempt of each task
	nCommitted  int
	keys        []*keyBuilder // the committed attempts' keys, merged
	staged      map[attemptKey]*stagedKeys
	frozen      []*runtimeFilter // built on first use after completion
}

type attemptKey struct{ task, attempt int }

// stagedKeys is one attempt's keys, and whether it read its input to the
// end.
type stagedKeys struct {
	keys     []*keyBuilder
	finished bool
}

// stagedMaxValues is how many distinct keys an attempt stages exactly
// before its own set degrades to a bloom filter. It is above the
// collector's cap so the committed filter is built from exact keys, and
// degrades exactly where a single set would, unless one attempt alone
// saw more than this many keys; then its bloom filter is OR-ed into the
// collector's, which only raises the false-positive rate.
const stagedMaxValues = 1 << 18

func (c *Collector) checkTask(task, parallelism int) error {
	if parallelism < 1 || task < 0 || task >= parallelism {
		return fmt.Errorf("%w: dynamic filter %d: task %d of %d", ErrInternal, c.id, task, parallelism)
	}
	if c.parallelism == 0 {
		c.parallelism = parallelism
		c.committed = make([]bool, parallelism)
		c.attemptOf = make([]int, parallelism)
	} else if c.parallelism != parallelism {
		return fmt.Errorf("%w: dynamic filter %d: tasks disagree on the parallelism (%d and %d)", ErrInternal, c.id, c.parallelism, parallelism)
	}
	return nil
}

// stage returns attempt's staged keys, creating them on first use.
func (c *Collector) stage(task, attempt int) *stagedKeys {
	if c.staged == nil {
		c.staged = map[attemptKey]*stagedKeys{}
	}
	k := attemptKey{task, attempt}
	st := c.staged[k]
	if st == nil {
		st = &stagedKeys{}
		c.staged[k] = st
	}
	return st
}

// Add takes one batch's evaluated key columns (one array per collector
// key, same length) from attempt of task of parallelism tasks, staged for
// that attempt. The caller releases the arrays after Add returns; the
// collector copies what it keeps. An attempt still running after its
// task committed another (the loser of two) may go on adding; its keys
// are discarded.
func (c *Collector) Add(task, attempt, parallelism int, keys []arrow.Array) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.checkTask(task, parallelism); err != nil {
		return err
	}
	if c.committed[task] && c.attemptOf[task] == attempt {
		return fmt.Errorf("%w: dynamic filter %d: attempt %d of task %d added keys after it finished", ErrInternal, c.id, attempt, task)
	}
	st := c.stage(task, attempt)
	if st.finished {
		return fmt.Errorf("%w: dynamic filter %d: attempt %d of task %d added keys after it finished", ErrInternal, c.id, attempt, task)
	}
	if st.keys == nil {
		st.keys = make([]*keyBuilder, len(keys))
		for i := range st.keys {
			st.keys[i] = &keyBuilder{maxValues: max(c.maxValues, stagedMaxValues)}
		}
	} else if len(keys) != len(st.keys) {
		return fmt.Errorf("%w: dynamic filter %d: got %d key columns, then %d", ErrInternal, c.id, len(st.keys), len(keys))
	}
	for i, a := range keys {
		if err := st.keys[i].add(a); err != nil {
			return errs.Wrap(errs.Unsupported, "dynamic filter %d, key %d: %w", c.id, i, err)
		}
	}
	return nil
}

// Finish is called once by an attempt at the end of its input, never on
// error or cancellation: the attempt may then be committed.
func (c *Collector) Finish(task, attempt, parallelism int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.checkTask(task, parallelism); err != nil {
		return err
	}
	c.stage(task, attempt).finished = true
	return nil
}

// Commit makes a finished attempt's keys its task's: the runtime calls it
// for the one attempt of each task it commits. The filter is complete once
// every task of the parallelism committed. A task commits once; an
// attempt that did not finish its input cannot be committed (its keys may
// be partial).
func (c *Collector) Commit(task, attempt int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.parallelism == 0 || task < 0 || task >= c.parallelism {
		return fmt.Errorf("%w: dynamic filter %d: commit of task %d, which never ran", ErrInternal, c.id, task)
	}
	if c.committed[task] {
		return fmt.Errorf("%w: dynamic filter %d: task %d committed twice", ErrInternal, c.id, task)
	}
	k := attemptKey{task, attempt}
	st := c.staged[k]
	if st == nil || !st.finished {
		return fmt.Errorf("%w: dynamic filter %d: attempt %d of task %d committed before it finished its input", ErrInternal, c.id, attempt, task)
	}
	if c.frozen != nil {
		return fmt.Errorf("%w: dynamic filter %d: task %d committed after the filter was read", ErrInternal, c.id, task)
	}
	if st.keys != nil {
		if c.keys == nil {
			c.keys = make([]*keyBuilder, len(st.keys))
			for i := range c.keys {
				c.keys[i] = &keyBuilder{maxValues: c.maxValues}
			}
		} else if len(c.keys) != len(st.keys) {
			return fmt.Errorf("%w: dynamic filter %d: got %d key columns, then %d", ErrInternal, c.id, len(c.keys), len(st.keys))
		}
		for i, kb := range st.keys {
			if err := c.keys[i].merge(kb); err != nil {
				return errs.Wrap(errs.Internal, "dynamic filter %d, key %d: %w", c.id, i, err)
			}
		}
	}
	delete(c.staged, k)
	c.committed[task], c.attemptOf[task] = true, attempt
	c.nCommitted++
	return nil
}

// Discard drops an attempt's staged keys.
func (c *Collector) Discard(task, attempt int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.staged, attemptKey{task, attempt})
}

// filter returns the frozen filter of key column key, or an error while
// some task has not committed: a partial key set would drop matching rows.
func (c *Collector) filter(key int) (*runtimeFilter, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.parallelism == 0 || c.nCommitted < c.parallelism {
		return nil, fmt.Errorf("dynamic filter %d %w: %d of %d tasks finished (the scan ran before its collector's stage completed)",
			c.id, ErrIncomplete, c.nCommitted, c.parallelism)
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
