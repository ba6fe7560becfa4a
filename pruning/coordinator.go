package pruning

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/connectors/hive"
	"github.com/fsql-dev/fsql/exec"
)

// CoordinatorConfig sets the runtime filters of one query.
type CoordinatorConfig struct {
	// MaxValues caps the distinct keys (over all tasks) a collector keeps
	// exactly, per key column; past it the filter degrades to a bloom
	// filter plus min/max, so memory stays bounded. Zero means 65536.
	MaxValues int
}

// DefaultMaxValues is CoordinatorConfig.MaxValues when unset.
const DefaultMaxValues = 65536

// Coordinator joins the two halves of dynamic partition pruning for one
// query: the dimension side's collectors write keys into it
// (Collector), and the fact scans read filters from it (Pruner). Safe for
// concurrent use by every task of the query.
type Coordinator struct {
	cfg        CoordinatorConfig
	mu         sync.Mutex
	collectors map[int]*collector
}

// NewCoordinator returns a coordinator for one query.
func NewCoordinator(cfg CoordinatorConfig) *Coordinator {
	if cfg.MaxValues <= 0 {
		cfg.MaxValues = DefaultMaxValues
	}
	return &Coordinator{cfg: cfg, collectors: map[int]*collector{}}
}

// Collector returns the sink of collector id, the same object for the
// same id.
func (c *Coordinator) Collector(id int) exec.DynamicFilterSink { return c.collector(id) }

func (c *Coordinator) collector(id int) *collector {
	c.mu.Lock()
	defer c.mu.Unlock()
	col, ok := c.collectors[id]
	if !ok {
		col = &collector{id: id, maxValues: c.cfg.MaxValues}
		c.collectors[id] = col
	}
	return col
}

// Target is one filter on a fact scan: the keys of collector CollectorID
// (its key column Key, 0 for single-key collectors) tested against
// Column, an index into hive.Table.Schema of the fact join key: a
// partition column prunes partitions, a file column prunes row groups by
// their min/max and rows by value.
type Target struct {
	CollectorID int
	Column      int
	// Key is the index into the collector's Keys; 0 for a single key.
	Key int
	// Name is the fact column's name for EXPLAIN; optional.
	Name string
}

// Pruner returns the exec.DynamicPruner of one fact scan. Several targets
// (filters from several dimensions on the same scan) are intersected: a
// partition, row group or row survives only if every filter lets it.
func (c *Coordinator) Pruner(targets []Target) exec.DynamicPruner {
	return &pruner{c: c, targets: append([]Target(nil), targets...)}
}

// collector gathers one DynamicFilterDataCollector's keys from all tasks.
type collector struct {
	id        int
	maxValues int

	mu          sync.Mutex
	parallelism int // 0 until the first call
	finished    []bool
	nFinished   int
	keys        []*keyBuilder
	frozen      []*runtimeFilter // built on first use after completion
}

func (c *collector) checkTask(task, parallelism int) error {
	if parallelism < 1 || task < 0 || task >= parallelism {
		return fmt.Errorf("%w: dynamic filter %d: task %d of %d", exec.ErrInternal, c.id, task, parallelism)
	}
	if c.parallelism == 0 {
		c.parallelism = parallelism
		c.finished = make([]bool, parallelism)
	} else if c.parallelism != parallelism {
		return fmt.Errorf("%w: dynamic filter %d: tasks disagree on the parallelism (%d and %d)", exec.ErrInternal, c.id, c.parallelism, parallelism)
	}
	return nil
}

// Add implements exec.DynamicFilterSink.
func (c *collector) Add(task, parallelism int, keys []arrow.Array) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.checkTask(task, parallelism); err != nil {
		return err
	}
	if c.frozen != nil || c.finished[task] {
		return fmt.Errorf("%w: dynamic filter %d: task %d added keys after it finished", exec.ErrInternal, c.id, task)
	}
	if c.keys == nil {
		c.keys = make([]*keyBuilder, len(keys))
		for i := range c.keys {
			c.keys[i] = &keyBuilder{maxValues: c.maxValues}
		}
	} else if len(keys) != len(c.keys) {
		return fmt.Errorf("%w: dynamic filter %d: got %d key columns, then %d", exec.ErrInternal, c.id, len(c.keys), len(keys))
	}
	for i, a := range keys {
		if err := c.keys[i].add(a); err != nil {
			return fmt.Errorf("%w: dynamic filter %d, key %d: %v", exec.ErrNotImplemented, c.id, i, err)
		}
	}
	return nil
}

// Finish implements exec.DynamicFilterSink. A repeated Finish of the same
// task counts once.
func (c *collector) Finish(task, parallelism int) error {
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
func (c *collector) filter(key int) (*runtimeFilter, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.parallelism == 0 || c.nFinished < c.parallelism {
		return nil, fmt.Errorf("%w: dynamic filter %d incomplete: %d of %d tasks finished (the scan ran before its collector's stage completed)",
			exec.ErrExecution, c.id, c.nFinished, c.parallelism)
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
		return nil, fmt.Errorf("%w: dynamic filter %d has %d key columns, a scan asks for #%d", exec.ErrInternal, c.id, len(c.frozen), key)
	}
	return c.frozen[key], nil
}

// pruner is one fact scan's view of the coordinator. Its decision is
// computed once, by the first task to ask, and shared by the others.
type pruner struct {
	c       *Coordinator
	targets []Target

	mu     sync.Mutex
	table  *hive.Table
	parts  []*hive.Partition
	result *exec.DynamicPruning
}

// CollectorIDs implements exec.DynamicFilterSources, so the stage cut can
// check the scan waits for every collector it reads.
func (p *pruner) CollectorIDs() []int {
	ids := make([]int, 0, len(p.targets))
	for _, t := range p.targets {
		if !slices.Contains(ids, t.CollectorID) {
			ids = append(ids, t.CollectorID)
		}
	}
	return ids
}

func (p *pruner) String() string {
	var b strings.Builder
	b.WriteString("dynamic filter on ")
	for i, t := range p.targets {
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

// boundTarget is a target with its filter and the way to apply it.
type boundTarget struct {
	Target
	f         *runtimeFilter
	name      string // the column's name in the table (and scan) schema
	partition int    // index into Partition.Values, or -1 for a file column
}

// Prune implements exec.DynamicPruner. It is cheap after the first call
// for the same table and partitions (a cached decision); the first call
// freezes the filters (sorting exact key sets) and tests every partition.
func (p *pruner) Prune(ctx context.Context, t *hive.Table, parts []*hive.Partition) (*exec.DynamicPruning, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.result != nil && p.table == t && slicesEqual(p.parts, parts) {
		return p.result, nil
	}
	if len(p.targets) == 0 {
		return nil, fmt.Errorf("%w: dynamic pruner of %s has no filters", exec.ErrInternal, t.Name)
	}
	bound := make([]boundTarget, len(p.targets))
	empty := false
	var ledger []exec.CollectorLedger
	for i, tg := range p.targets {
		if tg.Column < 0 || tg.Column >= len(t.Schema.Fields()) {
			return nil, fmt.Errorf("%w: dynamic filter %d targets column #%d of %s, which has %d columns", exec.ErrInternal, tg.CollectorID, tg.Column, t.Name, len(t.Schema.Fields()))
		}
		field := t.Schema.Field(tg.Column)
		kind, ok := kindOf(field.Type)
		if !ok {
			return nil, fmt.Errorf("%w: dynamic filter %d on %s.%s: columns of type %s cannot be pruned dynamically", exec.ErrNotImplemented, tg.CollectorID, t.Name, field.Name, field.Type)
		}
		f, err := p.c.collector(tg.CollectorID).filter(tg.Key)
		if err != nil {
			return nil, err
		}
		if !f.empty && f.kind != kind {
			return nil, fmt.Errorf("%w: dynamic filter %d collected %s keys but %s.%s is %s", exec.ErrInternal, tg.CollectorID, f.kind, t.Name, field.Name, field.Type)
		}
		b := boundTarget{Target: tg, f: f, name: field.Name, partition: -1}
		if tg.Column >= t.NumFileColumns {
			b.partition = tg.Column - t.NumFileColumns
		}
		bound[i] = b
		empty = empty || f.empty
		entry := exec.CollectorLedger{Collector: tg.CollectorID, Key: tg.Key, Exact: f.empty || f.exact}
		switch {
		case f.empty:
		case f.exact:
			entry.Keys = int64(f.count)
		default:
			entry.Bloom = f.bloom.bytes
		}
		ledger = append(ledger, entry)
	}

	dp := &exec.DynamicPruning{Partitions: []*hive.Partition{}, Ledger: ledger}
	if !empty {
		for _, part := range parts {
			if keepPartition(part, bound) {
				dp.Partitions = append(dp.Partitions, part)
			}
		}
		var files []boundTarget
		for _, b := range bound {
			if b.partition < 0 {
				files = append(files, b)
			}
		}
		if len(files) > 0 {
			dp.KeepRowGroup = keepRowGroup(files)
			dp.RowFilter = rowFilter(files)
		}
	}
	p.table, p.parts, p.result = t, parts, dp
	return dp, nil
}

func slicesEqual(a, b []*hive.Partition) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// keepPartition tests the partition's folder values; a NULL value
// (__HIVE_DEFAULT_PARTITION__) never matches a key.
func keepPartition(part *hive.Partition, bound []boundTarget) bool {
	for _, b := range bound {
		if b.partition < 0 {
			continue
		}
		if b.partition >= len(part.Values) || !b.f.matchValue(part.Values[b.partition]) {
			return false
		}
	}
	return true
}

// keepRowGroup drops row groups whose target column is all NULL or whose
// min/max range holds no collected key.
func keepRowGroup(files []boundTarget) func(f *hive.File, rg int) bool {
	return func(f *hive.File, rg int) bool {
		if rg < 0 || rg >= len(f.RowGroups) {
			return true
		}
		g := &f.RowGroups[rg]
		for _, b := range files {
			if b.Column >= len(g.Columns) {
				continue
			}
			s := g.Columns[b.Column]
			if g.NumRows > 0 && s.NullCount == g.NumRows {
				return false
			}
			if s.HasMinMax && !b.f.mayHoldRange(s.Min, s.Max) {
				return false
			}
		}
		return true
	}
}

// rowFilter builds the mask of rows whose target columns all hold a
// collected key. Columns are found in the batch by name (a scan's output
// fields are the table's); a target column the scan does not output is
// left to the join.
func rowFilter(files []boundTarget) func(arrow.RecordBatch, memory.Allocator) (*array.Boolean, error) {
	return func(batch arrow.RecordBatch, alloc memory.Allocator) (*array.Boolean, error) {
		n := int(batch.NumRows())
		nbytes := int(bitutil.BytesForBits(int64(n)))
		buf := memory.NewResizableBuffer(alloc)
		buf.Resize(nbytes)
		out := buf.Bytes()
		applied := false
		var tmp []byte
		for _, b := range files {
			col := columnByName(batch.Schema(), b.name)
			if col < 0 {
				continue
			}
			dst := out
			if applied {
				if tmp == nil {
					tmp = make([]byte, nbytes)
				} else {
					clear(tmp)
				}
				dst = tmp
			} else {
				clear(out)
			}
			if err := b.f.fillMask(batch.Column(col), dst); err != nil {
				buf.Release()
				return nil, fmt.Errorf("dynamic filter %d on %s: %w", b.CollectorID, b.name, err)
			}
			if applied {
				for i := range out {
					out[i] &= tmp[i]
				}
			}
			applied = true
		}
		if !applied {
			bitutil.SetBitsTo(out, 0, int64(n), true)
		}
		data := array.NewData(arrow.FixedWidthTypes.Boolean, n, []*memory.Buffer{nil, buf}, nil, 0, 0)
		mask := array.NewBooleanData(data)
		data.Release()
		buf.Release()
		return mask, nil
	}
}

func columnByName(s *arrow.Schema, name string) int {
	for i, f := range s.Fields() {
		if f.Name == name {
			return i
		}
	}
	return -1
}
