package pruning

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/connectors/hive"
)

// Decision is what dynamic pruning decided for one scan: the partitions
// that survive, and, when a target is a file column, the row-group test
// and the row filter. It is a run-time object: scans ask for it when
// they start and never keep it in the plan.
type Decision struct {
	// Partitions are the partitions that survive, a subset of the ones
	// Prune was given, in the same order.
	Partitions []*hive.Partition
	// Ledger is what each filter held, for EXPLAIN ANALYZE.
	Ledger []Ledger
	// files are the targets on file columns: they test row groups by
	// min/max and rows by value. Empty when every target is a partition
	// column (or the dimension was empty).
	files []boundTarget
}

// Ledger is what one dynamic filter held when a scan asked for it: its
// distinct keys while exact, the bytes of its bloom filter once it
// degraded.
type Ledger struct {
	Collector int // collector ID
	Key       int // key column of the collector (0 for single-key ones)
	Exact     bool
	Keys      int64 // distinct keys, when Exact
	Bloom     int64 // bloom filter bytes, when not Exact
}

// boundTarget is a target with its filter and the way to apply it.
type boundTarget struct {
	Target
	f         *runtimeFilter
	name      string // the column's name in the table (and scan) schema
	partition int    // index into Partition.Values, or -1 for a file column
}

// Prune decides for a scan of t whose partitions after static pruning are
// parts, filtered by targets (several filters from several dimensions
// are intersected: a partition, row group or row survives only if every
// filter lets it). Every collector a target reads must be complete (its
// stage finished, which the OrderEnforce above the scan guarantees); an
// incomplete one is an ErrIncomplete error, never a silent fall-back to
// unfiltered data. The answer depends only on its arguments and the
// frozen filters, so every task of the scan computes the same one.
func (c *Coordinator) Prune(ctx context.Context, t *hive.Table, parts []*hive.Partition, targets []Target) (*Decision, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(targets) == 0 {
		return nil, fmt.Errorf("%w: dynamic pruning of %s without filters", ErrInternal, t.Name)
	}
	bound := make([]boundTarget, len(targets))
	empty := false
	var ledger []Ledger
	for i, tg := range targets {
		if tg.Column < 0 || tg.Column >= len(t.Schema.Fields()) {
			return nil, fmt.Errorf("%w: dynamic filter %d targets column #%d of %s, which has %d columns", ErrInternal, tg.CollectorID, tg.Column, t.Name, len(t.Schema.Fields()))
		}
		field := t.Schema.Field(tg.Column)
		kind, ok := kindOf(field.Type)
		if !ok {
			return nil, fmt.Errorf("%w: dynamic filter %d on %s.%s: columns of type %s cannot be pruned dynamically", ErrUnsupported, tg.CollectorID, t.Name, field.Name, field.Type)
		}
		f, err := c.Collector(tg.CollectorID).filter(tg.Key)
		if err != nil {
			return nil, err
		}
		if !f.empty && f.kind != kind {
			return nil, fmt.Errorf("%w: dynamic filter %d collected %s keys but %s.%s is %s", ErrInternal, tg.CollectorID, f.kind, t.Name, field.Name, field.Type)
		}
		b := boundTarget{Target: tg, f: f, name: field.Name, partition: -1}
		if tg.Column >= t.NumFileColumns {
			b.partition = tg.Column - t.NumFileColumns
		}
		bound[i] = b
		empty = empty || f.empty
		entry := Ledger{Collector: tg.CollectorID, Key: tg.Key, Exact: f.empty || f.exact}
		switch {
		case f.empty:
		case f.exact:
			entry.Keys = int64(f.count)
		default:
			entry.Bloom = f.bloom.bytes
		}
		ledger = append(ledger, entry)
	}

	d := &Decision{Partitions: []*hive.Partition{}, Ledger: ledger}
	if empty {
		return d, nil
	}
	for _, part := range parts {
		if keepPartition(part, bound) {
			d.Partitions = append(d.Partitions, part)
		}
	}
	for _, b := range bound {
		if b.partition < 0 {
			d.files = append(d.files, b)
		}
	}
	return d, nil
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

// FileColumns are the names of the file columns FilterRows tests, in
// its order (a scan decodes them first, hive.RowFilter).
func (d *Decision) FileColumns() []string {
	out := make([]string, len(d.files))
	for i, b := range d.files {
		out[i] = b.name
	}
	return out
}

// FiltersFiles reports whether the decision tests row groups and rows
// (some target is a file column); when false, KeepRowGroup keeps every
// row group and there is no row filter.
func (d *Decision) FiltersFiles() bool { return len(d.files) > 0 }

// KeepRowGroup reports whether row group rg of f may hold a collected key
// in every file-column target: false when the target column is all NULL
// or its min/max range holds no key.
func (d *Decision) KeepRowGroup(f *hive.File, rg int) bool {
	if rg < 0 || rg >= len(f.RowGroups) {
		return true
	}
	g := &f.RowGroups[rg]
	for _, b := range d.files {
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

// FilterRows returns the mask (true = keep) of the rows of batch whose
// file-column targets all hold a collected key; the caller releases it.
// Columns are found in the batch by name (a scan's output fields are the
// table's); a target column the scan does not output is left to the join.
func (d *Decision) FilterRows(batch arrow.RecordBatch, alloc memory.Allocator) (*array.Boolean, error) {
	n := int(batch.NumRows())
	nbytes := int(bitutil.BytesForBits(int64(n)))
	buf := memory.NewResizableBuffer(alloc)
	buf.Resize(nbytes)
	out := buf.Bytes()
	bitutil.SetBitsTo(out, 0, int64(n), true)
	tmp := make([]byte, nbytes)
	for i, f := range batch.Schema().Fields() {
		if err := d.MaskColumn(f.Name, batch.Column(i), out, tmp); err != nil {
			buf.Release()
			return nil, err
		}
	}
	data := array.NewData(arrow.FixedWidthTypes.Boolean, n, []*memory.Buffer{nil, buf}, nil, 0, 0)
	mask := array.NewBooleanData(data)
	data.Release()
	buf.Release()
	return mask, nil
}

// MaskColumn clears in out (a bitmap of a.Len() bits) the rows of a, the
// values of file column name, that cannot hold a collected key of every
// target on that column, NULLs included; it leaves out alone when no
// target is on name. tmp is scratch of len(out) bytes. A reader tests a
// scan's filter columns one at a time, each on the rows the ones before
// it kept (hive.RowFilter), so a second key column is gathered and tested
// only for the few rows the first kept.
func (d *Decision) MaskColumn(name string, a arrow.Array, out, tmp []byte) error {
	for _, b := range d.files {
		if b.name != name {
			continue
		}
		clear(tmp)
		if err := b.f.fillMask(a, tmp); err != nil {
			return fmt.Errorf("dynamic filter %d on %s: %w", b.CollectorID, b.name, err)
		}
		for i := range out {
			out[i] &= tmp[i]
		}
	}
	return nil
}
