package spill

import (
	"fmt"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// An operator that spills by partition (a hash join's sides, an
// aggregate's groups, a DISTINCT aggregate's values) used to write one
// file per partition, each batch cut into as many small records as
// partitions got rows. Under a small budget that is many tiny files and
// records, and their fixed costs (a file created, opened and removed, an
// IPC schema and footer, a compressor frame per buffer of every record)
// outweigh the bytes: 16 files of a few KiB each at every spill. A
// PartWriter writes every partition of one spill into one file instead,
// and gathers each partition's rows until they make a record worth
// writing (PartRecordBytes or PartRecordRows), so records stay large
// whatever the fan-out. Finish returns one File per partition, the list
// of its records in the shared file; reading one reads only those.

// PartRecordBytes is the most Arrow bytes a partition's gathered rows
// reach before they are written as one record. A caller lowers it to
// what its reader can hold (CreateParts' recordBytes): a record read back
// is a batch in flight, which must not outgrow the share that reads it.
const PartRecordBytes = 64 << 10

// PartRecordRows is the row count at which a partition's gathered rows
// are written as one record (exec's batch size).
const PartRecordRows = 8192

// PartPendingBytes bounds what one PartWriter holds gathered over all its
// partitions: past it the largest partition is written out. It is, with
// WriterMemory, what a PartWriter holds outside the memory budget.
const PartPendingBytes = 256 << 10

// PartWriter writes the partitions of one spill into one file. It is used
// from one goroutine. Call Finish or Abort; one of them must be called.
type PartWriter struct {
	m       *Manager
	purpose string
	schema  *arrow.Schema
	w       *Writer // created with the first record
	record  int64   // gathered bytes that make a record
	parts   []pendingPart
	pending int64
	ended   bool
}

// pendingPart is one partition: its rows gathered and not written yet,
// and the records written.
type pendingPart struct {
	batches     []arrow.RecordBatch
	rows, size  int64 // gathered
	recs        []int32
	nrows, disk int64 // written
}

// CreateParts starts a file for n partitions of batches of schema, whose
// records gather a partition's rows up to recordBytes Arrow bytes (at
// most PartRecordBytes; a batch larger than that is a record of its own);
// the file is created at the first record written.
func (m *Manager) CreateParts(purpose string, schema *arrow.Schema, n int, recordBytes int64) (*PartWriter, error) {
	if m == nil {
		return nil, fmt.Errorf("%w: no spill manager (spilling is off)", ErrSpill)
	}
	if n <= 0 {
		return nil, fmt.Errorf("%w: a spill of %d partitions", ErrSpill, n)
	}
	if _, _, err := storageSchema(schema); err != nil {
		return nil, err
	}
	return &PartWriter{m: m, purpose: purpose, schema: schema, parts: make([]pendingPart, n),
		record: min(max(recordBytes, 0), PartRecordBytes)}, nil
}

// Partitions is the number of partitions.
func (pw *PartWriter) Partitions() int { return len(pw.parts) }

// Write adds b's rows to partition p. The caller keeps its reference to
// b; the writer may hold another until the rows are written.
func (pw *PartWriter) Write(p int, b arrow.RecordBatch) error {
	if pw.ended {
		return fmt.Errorf("%w: write to a finished spill of partitions (%s)", ErrSpill, pw.purpose)
	}
	if p < 0 || p >= len(pw.parts) {
		return fmt.Errorf("%w: partition %d of a spill of %d", ErrSpill, p, len(pw.parts))
	}
	if int(b.NumCols()) != pw.schema.NumFields() {
		return fmt.Errorf("%w: batch of %d columns written to a spill file of %d", ErrSpill, b.NumCols(), pw.schema.NumFields())
	}
	if b.NumRows() == 0 {
		return nil
	}
	part := &pw.parts[p]
	b.Retain()
	size := batchSize(b)
	part.batches = append(part.batches, b)
	part.rows += b.NumRows()
	part.size += size
	pw.pending += size
	if part.rows >= PartRecordRows || part.size >= pw.record {
		if err := pw.flush(p); err != nil {
			return err
		}
	}
	for pw.pending > PartPendingBytes {
		if err := pw.flush(pw.largest()); err != nil {
			return err
		}
	}
	return nil
}

// largest is the partition holding the most gathered bytes.
func (pw *PartWriter) largest() int {
	big := 0
	for p := range pw.parts {
		if pw.parts[p].size > pw.parts[big].size {
			big = p
		}
	}
	return big
}

// flush writes partition p's gathered rows as one record.
func (pw *PartWriter) flush(p int) error {
	part := &pw.parts[p]
	if len(part.batches) == 0 {
		return nil
	}
	if pw.w == nil {
		w, err := pw.m.Create(pw.purpose, pw.schema)
		if err != nil {
			return err
		}
		pw.w = w
	}
	rec, err := pw.gather(part.batches)
	pw.pending -= part.size
	for _, b := range part.batches {
		b.Release()
	}
	part.batches, part.rows, part.size = nil, 0, 0
	if err != nil {
		return err
	}
	defer rec.Release()
	disk, err := pw.w.writeStorage(rec)
	if err != nil {
		return err
	}
	part.recs = append(part.recs, int32(pw.w.recs-1))
	part.nrows += rec.NumRows()
	part.disk += disk
	return nil
}

// gather makes one record of the storage schema from batches.
func (pw *PartWriter) gather(batches []arrow.RecordBatch) (arrow.RecordBatch, error) {
	w := pw.w
	if len(batches) == 1 {
		return w.storageBatch(batches[0]), nil
	}
	ncol := int(batches[0].NumCols())
	cols := make([]arrow.Array, ncol)
	release := func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}
	var rows int64
	per := make([][]arrow.Array, len(batches))
	for i, b := range batches {
		per[i] = w.storageCols(b)
		rows += b.NumRows()
	}
	parts := make([]arrow.Array, len(batches))
	for c := 0; c < ncol; c++ {
		for i := range batches {
			parts[i] = per[i][c]
		}
		a, err := array.Concatenate(parts, memory.DefaultAllocator)
		if err != nil {
			release()
			return nil, fmt.Errorf("%w: gathering rows of spill file %s: %w", ErrSpill, pw.purpose, err)
		}
		cols[c] = a
	}
	rec := array.NewRecordBatch(w.storage, cols, rows)
	release()
	return rec, nil
}

// Finish writes what is gathered, closes the file and returns each
// partition's File (nil for a partition without rows), in partition
// order. After an error nothing is left on disk.
func (pw *PartWriter) Finish() ([]*File, error) {
	if pw.ended {
		return nil, fmt.Errorf("%w: spill of partitions (%s) finished twice", ErrSpill, pw.purpose)
	}
	for p := range pw.parts {
		if err := pw.flush(p); err != nil {
			pw.Abort()
			return nil, err
		}
	}
	pw.ended = true
	out := make([]*File, len(pw.parts))
	if pw.w == nil {
		return out, nil
	}
	whole, err := pw.w.Finish()
	if err != nil {
		return nil, err
	}
	shared := new(atomic.Int64)
	for p := range pw.parts {
		part := &pw.parts[p]
		if len(part.recs) == 0 {
			continue
		}
		shared.Add(1)
		out[p] = &File{m: whole.m, path: whole.path, dir: whole.dir, schema: whole.schema, ext: whole.ext,
			rows: part.nrows, recs: int64(len(part.recs)), bytes: part.disk, part: part.recs, shared: shared}
	}
	return out, nil
}

// Files is the number of files on disk: 1 once a record was written, 0
// before.
func (pw *PartWriter) Files() int {
	if pw.w == nil {
		return 0
	}
	return 1
}

// Bytes is what the file took on disk so far.
func (pw *PartWriter) Bytes() int64 {
	if pw.w == nil {
		return 0
	}
	return pw.w.cw.n
}

// Rows is the number of rows written so far (not counting those still
// gathered).
func (pw *PartWriter) Rows() int64 {
	if pw.w == nil {
		return 0
	}
	return pw.w.rows
}

// Abort drops what is gathered and the file. Safe after Finish (the
// partitions' Files stay; remove them with File.Remove).
func (pw *PartWriter) Abort() {
	for p := range pw.parts {
		part := &pw.parts[p]
		for _, b := range part.batches {
			b.Release()
		}
		part.batches, part.rows, part.size = nil, 0, 0
	}
	pw.pending = 0
	if pw.ended {
		return
	}
	pw.ended = true
	if pw.w != nil {
		pw.w.Abort()
	}
}

// batchSize is the Arrow size of b's buffers (whole buffers, so a slice
// counts what it keeps alive).
func batchSize(b arrow.RecordBatch) int64 {
	var n int64
	for _, c := range b.Columns() {
		n += dataSize(c.Data())
	}
	return n
}

func dataSize(d arrow.ArrayData) int64 {
	var n int64
	for _, buf := range d.Buffers() {
		if buf != nil {
			n += int64(buf.Len())
		}
	}
	for _, c := range d.Children() {
		n += dataSize(c)
	}
	if dict, ok := d.Dictionary().(*array.Data); ok && dict != nil {
		n += dataSize(dict)
	}
	return n
}
