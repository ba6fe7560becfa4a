package hive

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// In-memory tables are Tables whose "files" are Arrow record batches the
// process holds (package connectors/memtable keeps them and their
// versions). Making them Tables lets every query read them as it reads a
// folder: the binder, the planner's estimates, row-group skipping by
// min/max statistics, split assignment, EXPLAIN and the plan wire form
// see one kind of table. Each chunk is one File with one partition-less
// Partition, its row groups slices of memoryRowGroupRows rows with exact
// statistics.

// MemoryChunk is one immutable piece of an in-memory table.
type MemoryChunk struct {
	// ID is unique in the process: it names the chunk's File, so a plan
	// decoded against a later version of the table sees whether its
	// chunks are still the ones it was planned with.
	ID int64
	// Batch holds the table's columns in Schema order, as plain storage
	// types (no extension types). It must never change nor be released
	// while a table holding it may be read.
	Batch arrow.RecordBatch
	// Created is when the chunk was made (the File's modification time).
	Created time.Time
}

// memoryRowGroupRows is the row count of an in-memory chunk's row groups:
// the unit of min/max skipping.
const memoryRowGroupRows = DefaultBatchSize

// MemoryDir is the Dir of the in-memory table called name: no folder, a
// name that no path of the data directory has.
func MemoryDir(name string) string { return "memory:" + strings.ToLower(name) }

// NewMemoryTable makes the Table of an in-memory table: schema holds its
// columns (all of them file columns; in-memory tables have no partition
// folders), files its chunks (NewMemoryFile, made once per chunk and
// shared by every version of the table that holds it). source is what
// made the table (kept in Table.Source for the binder: column
// definitions, defaults).
func NewMemoryTable(name string, schema *arrow.Schema, files []*File, source any) *Table {
	fields := make([]arrow.Field, schema.NumFields())
	for i, f := range schema.Fields() {
		f.Nullable = true // as every table column (see Table.Schema)
		fields[i] = f
	}
	dir := MemoryDir(name)
	t := &Table{
		Name: name, Dir: dir, Format: Memory,
		Schema: arrow.NewSchema(fields, nil), NumFileColumns: len(fields),
		Source: source,
	}
	t.Partitions = []*Partition{{Dir: dir, Files: files}}
	return t
}

// NewMemoryFile is the File of one chunk of the in-memory table called
// name, with a row group per memoryRowGroupRows rows and their
// statistics.
func NewMemoryFile(name string, c MemoryChunk) *File {
	dir := MemoryDir(name)
	n := c.Batch.NumRows()
	f := &File{
		Path: fmt.Sprintf("%s/chunk-%d", dir, c.ID), NumRows: n, ModTime: c.Created,
		mem: c.Batch,
	}
	for off := int64(0); off < n; off += memoryRowGroupRows {
		end := min(off+memoryRowGroupRows, n)
		rg := RowGroup{NumRows: end - off}
		for _, col := range c.Batch.Columns() {
			cs := columnStatsOf(col, int(off), int(end))
			rg.Bytes += cs.Bytes
			rg.Columns = append(rg.Columns, cs)
		}
		f.Size += rg.Bytes
		f.RowGroups = append(f.RowGroups, rg)
	}
	return f
}

// MemoryBatch is the batch of a File NewMemoryFile made (nil for any
// other File).
func MemoryBatch(f *File) arrow.RecordBatch { return f.mem }

// columnStatsOf computes the statistics of rows [from, to) of a: exact
// NULL count, min and max for the types row-group skipping compares, and
// the bytes the rows take (what a scan of them costs).
func columnStatsOf(a arrow.Array, from, to int) ColumnStats {
	cs := ColumnStats{}
	rows := to - from
	for i := from; i < to; i++ {
		if a.IsNull(i) {
			cs.NullCount++
		}
	}
	cs.Bytes = int64(rows) * 8
	if fw, ok := a.DataType().(arrow.FixedWidthDataType); ok && fw.BitWidth() >= 8 {
		cs.Bytes = int64(rows) * int64(fw.BitWidth()/8)
	}
	var lo, hi any
	take := func(v any, less func(a, b any) bool) {
		if lo == nil || less(v, lo) {
			lo = v
		}
		if hi == nil || less(hi, v) {
			hi = v
		}
	}
	switch c := a.(type) {
	case *array.Int32:
		for i := from; i < to; i++ {
			if c.IsValid(i) {
				take(c.Value(i), func(a, b any) bool { return a.(int32) < b.(int32) })
			}
		}
	case *array.Int64:
		for i := from; i < to; i++ {
			if c.IsValid(i) {
				take(c.Value(i), func(a, b any) bool { return a.(int64) < b.(int64) })
			}
		}
	case *array.Uint64:
		for i := from; i < to; i++ {
			if c.IsValid(i) {
				take(c.Value(i), func(a, b any) bool { return a.(uint64) < b.(uint64) })
			}
		}
	case *array.Float64:
		for i := from; i < to; i++ {
			if c.IsValid(i) {
				if math.IsNaN(c.Value(i)) {
					return cs // NaN has no place in min/max: no statistics
				}
				take(c.Value(i), func(a, b any) bool { return a.(float64) < b.(float64) })
			}
		}
	case *array.Date32:
		for i := from; i < to; i++ {
			if c.IsValid(i) {
				take(c.Value(i), func(a, b any) bool { return a.(arrow.Date32) < b.(arrow.Date32) })
			}
		}
	case *array.Timestamp:
		for i := from; i < to; i++ {
			if c.IsValid(i) {
				take(c.Value(i), func(a, b any) bool { return a.(arrow.Timestamp) < b.(arrow.Timestamp) })
			}
		}
	case *array.Time64:
		for i := from; i < to; i++ {
			if c.IsValid(i) {
				take(c.Value(i), func(a, b any) bool { return a.(arrow.Time64) < b.(arrow.Time64) })
			}
		}
	case *array.Decimal128:
		for i := from; i < to; i++ {
			if c.IsValid(i) {
				take(c.Value(i), func(a, b any) bool { return a.(decimal128.Num).Less(b.(decimal128.Num)) })
			}
		}
	case *array.Boolean:
		cs.Bytes = int64(rows+7) / 8
		for i := from; i < to; i++ {
			if c.IsValid(i) {
				take(c.Value(i), func(a, b any) bool { return !a.(bool) && b.(bool) })
			}
		}
	case *array.String:
		offs := c.ValueOffsets()
		cs.Bytes = int64(offs[to]-offs[from]) + int64(rows)*4
		for i := from; i < to; i++ {
			if c.IsValid(i) {
				// A copy: min and max outlive no batch, but keep them
				// independent of the chunk's buffers anyway.
				take(strings.Clone(c.Value(i)), func(a, b any) bool { return a.(string) < b.(string) })
			}
		}
	case *array.Binary:
		offs := c.ValueOffsets()
		cs.Bytes = int64(offs[to]-offs[from]) + int64(rows)*4
		return cs // binary values have no min/max the pruning compares
	default:
		return cs
	}
	if lo != nil {
		cs.HasMinMax, cs.Min, cs.Max = true, lo, hi
	}
	return cs
}

// MemoryType reports whether an in-memory table can hold a column of
// type t: the types a table read from Parquet has, so every operator
// handles them.
func MemoryType(t arrow.DataType) error {
	switch t.ID() {
	case arrow.BOOL, arrow.INT32, arrow.INT64, arrow.UINT64, arrow.FLOAT64, arrow.STRING, arrow.BINARY,
		arrow.DATE32, arrow.DECIMAL128:
		return nil
	case arrow.TIMESTAMP:
		if ts := t.(*arrow.TimestampType); ts.Unit == arrow.Microsecond && (ts.TimeZone == "" || ts.TimeZone == "UTC") {
			return nil
		}
	case arrow.TIME64:
		if t.(*arrow.Time64Type).Unit == arrow.Microsecond {
			return nil
		}
	}
	return fmt.Errorf("%w: a column of type %s in a table held in memory (fsql's columns are BOOLEAN, INT, BIGINT, BIGINT UNSIGNED, DOUBLE, DECIMAL, VARCHAR, VARBINARY, DATE, DATETIME, TIMESTAMP and TIME: cast it to one, e.g. int8 to int32)", ErrUnsupported, t)
}

// memReader reads the row groups of one chunk as slices of its batch:
// no copy, the slices share the chunk's buffers (which stay alive, see
// MemoryChunk.Batch).
type memReader struct {
	batch arrow.RecordBatch
	cols  []int
	rgs   []int
	pos   int   // index into rgs of the row group being read
	off   int64 // next row of that row group, from its start
	bytes int64
}

func (m *memReader) next(r *FileReader) (arrow.RecordBatch, error) {
	for m.pos < len(m.rgs) {
		rg := m.rgs[m.pos]
		start := int64(rg) * memoryRowGroupRows
		rows := r.file.RowGroups[rg].NumRows
		if m.off >= rows {
			m.pos, m.off = m.pos+1, 0
			continue
		}
		n := min(int64(r.opts.BatchSize), rows-m.off)
		from := start + m.off
		cols := make([]arrow.Array, len(m.cols))
		for i, c := range m.cols {
			cols[i] = array.NewSlice(m.batch.Column(c), from, from+n)
			m.bytes += r.file.RowGroups[rg].Columns[c].Bytes * n / rows
		}
		m.off += n
		rec := array.NewRecordBatch(r.schema, cols, n)
		for _, c := range cols {
			c.Release()
		}
		return rec, nil
	}
	return nil, io.EOF
}

// openMemory starts reading row groups rgs of chunk f.
func (t *Table) openMemory(p *Partition, f *File, opts ScanOptions, fields []arrow.Field, rgs []int) (*FileReader, error) {
	if f.mem == nil {
		return nil, fmt.Errorf("%w: %s is not a chunk of in-memory table %s", ErrCorrupt, f.Path, t.Name)
	}
	for _, c := range opts.Columns {
		if c >= int(f.mem.NumCols()) {
			return nil, fmt.Errorf("%w: %s has %d columns, column #%d was asked for", ErrCorrupt, f.Path, f.mem.NumCols(), c)
		}
	}
	r := &FileReader{table: t, part: p, file: f, schema: arrow.NewSchema(fields, nil), opts: opts, rowGroups: rgs}
	r.mem = &memReader{batch: f.mem, cols: opts.Columns, rgs: rgs}
	return r, nil
}

// MemorySource lists the in-memory tables a catalog answers for beside
// the folders of its data directory (package connectors/memtable keeps
// them). Each view of the catalog (open, Snapshot) takes the tables once,
// so one query reads one version of every in-memory table, whatever is
// written meanwhile.
type MemorySource interface {
	// MemoryTables returns the tables as they are now, by lower-cased
	// name. Neither the map nor its tables change afterwards.
	MemoryTables() map[string]*Table
}

// IsMemory reports whether the view has an in-memory table called name
// (case-insensitive).
func (c *Catalog) IsMemory(name string) bool {
	_, ok := c.mem[strings.ToLower(name)]
	return ok
}
