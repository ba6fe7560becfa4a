package hive

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/fsql-dev/fsql/internal/mempool"
)

// DefaultBatchSize is used when ScanOptions.BatchSize is not set.
const DefaultBatchSize = 8192

// ScanOptions says what part of a file to read.
type ScanOptions struct {
	// Columns are indexes into Table.Schema, partition columns included, in
	// the order the batches carry them. An empty list reads no column and
	// returns batches that only count rows.
	Columns []int
	// RowGroups lists the row groups to read, ascending; nil reads all.
	RowGroups []int
	// BatchSize is the most rows per batch; batches never span row groups.
	BatchSize int
	// Alloc allocates every Arrow buffer. nil, or a plain
	// *memory.GoAllocator (memory.DefaultAllocator, the engine's default, is
	// one; they are all equal), means a shared recycling pool instead: a
	// scan builds batch after batch of the same shape, and reusing the
	// buffers of released batches costs far less than fresh zeroed memory
	// from the Go allocator and its collection. A plain Go allocator
	// neither counts nor limits, so nothing but speed changes. Any other
	// allocator (a checked one in tests, a wrapper) is used as given.
	Alloc memory.Allocator
	// Filter, when set, drops rows of a Parquet file before the columns it
	// does not read are decoded (late materialisation, late.go); CSV and
	// in-memory tables ignore it (FileReader.Filtered says which).
	Filter RowFilter
}

// scanPool recycles the buffers of scan batches read without an explicit
// allocator. Its buffers are reused as soon as a batch is released, so a
// string or slice taken from a batch (array.String.Value aliases the
// buffer) must not be used after the batch's release.
var scanPool = mempool.New()

// FileReader reads one data file of a table as Arrow record batches.
type FileReader struct {
	table  *Table
	part   *Partition
	file   *File
	schema *arrow.Schema
	opts   ScanOptions

	osf *os.File
	buf []byte     // the open row group's prefetched column chunks
	csv *csvReader // set for a CSV file: it reads the rows, the rest of the reader adds constants
	mem *memReader // set for a chunk of an in-memory table: it reads everything

	rowGroups []int
	rgPos     int   // index into rowGroups of the next group to open
	rgLeft    int64 // rows left in the open row group
	decoders  []*columnDecoder
	widen     []arrow.DataType // per output column: the table type to widen the file's values to, or nil
	values    []any            // per output column read from no file column: a partition value, or nil (NULL) for a column the file lacks
	consts    []arrow.Array    // those constants at full batch size, sliced per batch
	bytesRead int64
	lateSel   []int32 // nextFiltered's selection, reused from batch to batch
	checked   bool    // checkUnchanged ran
	closed    bool
}

// FileError is an error reading one data file. OpenFile and
// FileReader.Next return every error about their file as one (not the
// context's, nor a column's error that is the table's, Table.ColumnError),
// and this package's messages about a file name it, so a caller adding
// context knows from the type, not the text, that the file is named.
type FileError struct {
	Path string
	Err  error
}

func (e *FileError) Error() string { return e.Err.Error() }

// Unwrap returns the cause, which carries the error's kind.
func (e *FileError) Unwrap() error { return e.Err }

// inFile makes err a *FileError of path, unless it already is one or it
// is io.EOF or the context's.
func inFile(ctx context.Context, path string, err error) error {
	var fe *FileError
	if err == nil || err == io.EOF || (ctx != nil && ctx.Err() != nil) || (errors.As(err, &fe) && fe.Path == path) {
		return err
	}
	return &FileError{Path: path, Err: err}
}

// OpenFile starts reading file f of partition p. Reading a file column
// whose files disagree on its type, or that fsql cannot read (nested),
// fails here with the column's error (Table.ColumnError); any other error
// is a *FileError.
func (t *Table) OpenFile(p *Partition, f *File, opts ScanOptions) (*FileReader, error) {
	for _, c := range opts.Columns {
		if err := t.ColumnError(c); err != nil {
			return nil, err
		}
	}
	r, err := t.openReader(p, f, opts)
	if err != nil {
		t.noteChanged(err)
		return nil, inFile(nil, f.Path, err)
	}
	return r, nil
}

// noteChanged makes the next view list the table again when err says one
// of its files changed: a change no event showed (watch.go) must not be
// served again.
func (t *Table) noteChanged(err error) {
	if errors.Is(err, ErrChanged) {
		readerFoundChange(t.Dir)
	}
}

func (t *Table) openReader(p *Partition, f *File, opts ScanOptions) (*FileReader, error) {
	if opts.BatchSize <= 0 {
		opts.BatchSize = DefaultBatchSize
	}
	if _, plain := opts.Alloc.(*memory.GoAllocator); plain || opts.Alloc == nil {
		opts.Alloc = scanPool
	}
	fields := make([]arrow.Field, len(opts.Columns))
	for i, c := range opts.Columns {
		if c < 0 || c >= len(t.Schema.Fields()) {
			return nil, fmt.Errorf("column #%d out of range for table %s with %d columns", c, t.Name, len(t.Schema.Fields()))
		}
		fields[i] = t.Schema.Field(c)
	}
	rgs := opts.RowGroups
	if rgs == nil {
		rgs = make([]int, len(f.RowGroups))
		for i := range rgs {
			rgs[i] = i
		}
	}
	for _, rg := range rgs {
		if rg < 0 || rg >= len(f.RowGroups) {
			return nil, fmt.Errorf("row group %d out of range for %s with %d row groups", rg, f.Path, len(f.RowGroups))
		}
	}
	if t.Format == Memory {
		return t.openMemory(p, f, opts, fields, rgs)
	}
	n := len(opts.Columns)
	r := &FileReader{table: t, part: p, file: f, schema: arrow.NewSchema(fields, nil), opts: opts, rowGroups: rgs,
		decoders: make([]*columnDecoder, n), widen: make([]arrow.DataType, n),
		values: make([]any, n), consts: make([]arrow.Array, n)}
	needFile := false
	csvCols := make([]int, n) // per output column: the CSV field to read, or -1
	for i, c := range opts.Columns {
		csvCols[i] = -1
		if c >= t.NumFileColumns {
			r.values[i] = p.Values[c-t.NumFileColumns]
			continue
		}
		k := f.fileColumn(c)
		if k < 0 {
			continue // the file lacks the column: NULL
		}
		needFile = true
		ci := f.cols[k]
		if t.Format == CSV {
			csvCols[i] = k
			continue
		}
		if ci.unreadable != nil {
			return nil, ci.unreadable
		}
		r.decoders[i] = newColumnDecoder(ci, opts.Alloc, t.opts.TruncateNanos)
		if to := t.columns[c].typ; !arrow.TypeEqual(ci.arrow, to) {
			r.widen[i] = to
		}
	}
	if len(rgs) == 0 {
		return r, nil
	}
	if t.Format == CSV {
		// Even COUNT(*) reads a CSV file: its row count is only estimated.
		cr, err := openCSV(t, f, csvCols, r.schema, opts, rgs)
		if err != nil {
			return nil, err
		}
		r.csv = cr
		return r, nil
	}
	if !needFile {
		// Only row counts are read, from the snapshot's footer; the file
		// must still be the version they came from.
		now, err := statStamp(f.Path)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrChanged, f.Path, err)
		}
		if err := checkStamp(f, now, "after the query was planned"); err != nil {
			return nil, err
		}
		return r, nil
	}
	if err := r.open(); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// open opens the file and checks it is the version the table's snapshot
// holds: the same size and modification time, and the same footer bytes
// (which also catches a rewrite that kept both). The footer is not
// parsed again: the snapshot's File says where every chunk is.
func (r *FileReader) open() error {
	f := r.file
	osf, now, err := openFile(f.Path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: %s was removed after the query was planned; run the query again", ErrChanged, f.Path)
		}
		return err
	}
	r.osf = osf
	if err := checkStamp(f, now, "after the query was planned"); err != nil {
		return err
	}
	if f.footer.length == 0 {
		return nil // a File made without a footer (tests); nothing to compare
	}
	raw := make([]byte, f.footer.length+8)
	if _, err := osf.ReadAt(raw, f.Size-int64(len(raw))); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrCorrupt, f.Path, err)
	}
	if int64(le32(raw[len(raw)-8:])) != f.footer.length || string(raw[len(raw)-4:]) != parquetMagic ||
		crc32.ChecksumIEEE(raw[:len(raw)-8]) != f.footer.crc {
		return fmt.Errorf("%w: %s was rewritten after the query was planned (same size and modification time, another footer); run the query again", ErrChanged, f.Path)
	}
	return nil
}

// checkUnchanged is called once the last row group is read: a file
// written to while it was read (in place, not replaced) fails the query
// rather than give a mix of two versions.
func (r *FileReader) checkUnchanged() error {
	if r.csv != nil {
		return r.csv.checkUnchanged()
	}
	if r.osf == nil {
		return nil
	}
	st, err := r.osf.Stat()
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrCorrupt, r.file.Path, err)
	}
	return checkStamp(r.file, stampOf(st), "while the query read it")
}

// Schema is the schema of every batch Next returns.
func (r *FileReader) Schema() *arrow.Schema { return r.schema }

// BytesRead is the compressed size of the column chunks read so far (of a
// CSV file: the bytes read).
func (r *FileReader) BytesRead() int64 {
	if r.csv != nil {
		return r.csv.bytesRead()
	}
	if r.mem != nil {
		return r.mem.bytes
	}
	return r.bytesRead
}

// Next returns the next batch, or (nil, io.EOF) after the last one. An
// error other than the context's is a *FileError.
func (r *FileReader) Next(ctx context.Context) (arrow.RecordBatch, error) {
	rec, err := r.next(ctx)
	if err != nil {
		r.table.noteChanged(err)
		return nil, inFile(ctx, r.file.Path, err)
	}
	return rec, nil
}

func (r *FileReader) next(ctx context.Context) (rec arrow.RecordBatch, err error) {
	if r.closed {
		return nil, io.EOF
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if r.csv != nil {
		return r.nextCSV(ctx)
	}
	if r.mem != nil {
		return r.mem.next(r)
	}
	for r.rgLeft == 0 {
		if r.rgPos >= len(r.rowGroups) {
			if !r.checked {
				r.checked = true
				if err := r.checkUnchanged(); err != nil {
					return nil, err
				}
			}
			return nil, io.EOF
		}
		if err := r.openRowGroup(r.rowGroups[r.rgPos]); err != nil {
			return nil, err
		}
		r.rgPos++
	}
	n := int(min(int64(r.opts.BatchSize), r.rgLeft))
	if r.opts.Filter != nil && r.osf != nil {
		rec, err := r.nextFiltered(n)
		if rec == nil && err == nil {
			return r.next(ctx) // no row of these n survived
		}
		return rec, err
	}
	cols := make([]arrow.Array, len(r.decoders))
	release := func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}
	for i := range r.decoders {
		a, err := r.readColumn(i, n)
		if err != nil {
			release()
			return nil, err
		}
		cols[i] = a
	}
	r.rgLeft -= int64(n)
	rec = array.NewRecordBatch(r.schema, cols, int64(n))
	release()
	return rec, nil
}

// readColumn decodes the next n rows of output column i (a constant for
// a column read from no file column), widened to the table's type.
func (r *FileReader) readColumn(i, n int) (arrow.Array, error) {
	d := r.decoders[i]
	if d == nil {
		return r.constantArray(i, n), nil
	}
	a, err := d.read(n)
	if err != nil {
		return nil, r.columnErr(d, err)
	}
	if to := r.widen[i]; to != nil {
		w, err := convertArray(r.opts.Alloc, a, to)
		a.Release()
		if err != nil {
			return nil, fmt.Errorf("%s: column %s: %w", r.file.Path, d.info.name, err)
		}
		a = w
	}
	return a, nil
}

// columnErr says which file and column a decoder's error is about.
func (r *FileReader) columnErr(d *columnDecoder, err error) error {
	if errors.Is(err, ErrUnsupported) {
		return fmt.Errorf("%s: column %s: %w", r.file.Path, d.info.name, err)
	}
	return fmt.Errorf("%w: %s: column %s: %w", ErrCorrupt, r.file.Path, d.info.name, err)
}

// nextCSV returns the CSV reader's next batch with the constant columns
// (partition values, columns the file lacks) filled in.
func (r *FileReader) nextCSV(ctx context.Context) (arrow.RecordBatch, error) {
	n, cols, err := r.csv.next(ctx)
	if err == io.EOF && !r.checked {
		r.checked = true
		if err := r.checkUnchanged(); err != nil {
			return nil, err
		}
	}
	if err != nil {
		return nil, err
	}
	for i := range cols {
		if cols[i] == nil {
			cols[i] = r.constantArray(i, n)
		}
	}
	rec := array.NewRecordBatch(r.schema, cols, int64(n))
	for _, c := range cols {
		c.Release()
	}
	return rec, nil
}

// coalesceGap is the largest gap between two column chunks a row group's
// read spans: reading a little more is cheaper than another system call
// (the chunks of a small file come in one read), and the span never holds
// more than coalesceMax bytes.
const (
	coalesceGap = 256 << 10
	coalesceMax = 16 << 20
)

func (r *FileReader) openRowGroup(rg int) error {
	r.rgLeft = r.file.RowGroups[rg].NumRows
	if r.osf == nil {
		return nil
	}
	leaves := numLeaves(r.file.cols)
	type want struct {
		dec int
		loc chunkLoc
	}
	var wants []want
	for i, d := range r.decoders {
		if d == nil {
			continue
		}
		if d.info.leaf >= leaves || rg*leaves+d.info.leaf >= len(r.file.chunks) {
			return fmt.Errorf("%w: %s: row group %d lacks column %s", ErrCorrupt, r.file.Path, rg, d.info.name)
		}
		wants = append(wants, want{i, r.file.chunks[rg*leaves+d.info.leaf]})
		r.bytesRead += r.file.RowGroups[rg].Columns[r.opts.Columns[i]].Bytes
	}
	sort.Slice(wants, func(a, b int) bool { return wants[a].loc.start < wants[b].loc.start })
	// Spans of chunks close enough to read at once, each into its part of
	// one buffer; a chunk left out of every span reads itself in windows.
	var total int64
	type span struct {
		from, to int // wants[from:to]
		start    int64
		end      int64
	}
	var spans []span
	for i, w := range wants {
		end := w.loc.start + w.loc.length
		if n := len(spans); n > 0 && w.loc.start-spans[n-1].end <= coalesceGap && max(end, spans[n-1].end)-spans[n-1].start <= coalesceMax {
			s := &spans[n-1]
			s.to, s.end = i+1, max(s.end, end)
			continue
		}
		spans = append(spans, span{from: i, to: i + 1, start: w.loc.start, end: end})
	}
	for _, s := range spans {
		if s.end-s.start <= coalesceMax {
			total += s.end - s.start
		}
	}
	r.buf = grow(r.buf, int(total))
	off := int64(0)
	for _, s := range spans {
		var bytes []byte
		if n := s.end - s.start; n <= coalesceMax {
			bytes = r.buf[off : off+n : off+n]
			off += n
			if _, err := r.osf.ReadAt(bytes, s.start); err != nil {
				return fmt.Errorf("%w: %s: reading row group %d: %w", ErrCorrupt, r.file.Path, rg, err)
			}
		}
		for _, w := range wants[s.from:s.to] {
			var pre []byte
			if bytes != nil {
				pre = bytes[w.loc.start-s.start : w.loc.start-s.start+w.loc.length]
			}
			if err := r.decoders[w.dec].reset(r.osf, w.loc, pre); err != nil {
				return fmt.Errorf("%s: column %s: %w", r.file.Path, r.decoders[w.dec].info.name, err)
			}
		}
	}
	return nil
}

// constantArray returns n rows of output column i's constant: a partition
// value, or NULL for a column the file lacks.
func (r *FileReader) constantArray(i, n int) arrow.Array {
	if r.consts[i] == nil || r.consts[i].Len() < n {
		if r.consts[i] != nil {
			r.consts[i].Release()
		}
		// Big enough for every batch of this file, and no bigger: tiny
		// files (one row group of a few rows) are common in partitioned
		// tables.
		var most int64
		for _, rg := range r.rowGroups {
			most = max(most, r.file.RowGroups[rg].NumRows)
		}
		if r.csv != nil {
			most = int64(r.opts.BatchSize) // a CSV file's row count is an estimate
		}
		size := max(n, int(min(int64(r.opts.BatchSize), most)))
		r.consts[i] = constantArray(r.opts.Alloc, r.schema.Field(i).Type, r.values[i], size)
	}
	if r.consts[i].Len() == n {
		r.consts[i].Retain()
		return r.consts[i]
	}
	return array.NewSlice(r.consts[i], 0, int64(n))
}

func constantArray(alloc memory.Allocator, typ arrow.DataType, v any, n int) arrow.Array {
	if v == nil {
		return array.MakeArrayOfNull(alloc, typ, n)
	}
	b := array.NewBuilder(alloc, typ)
	defer b.Release()
	b.Reserve(n)
	switch b := b.(type) {
	case *array.Int32Builder:
		x := v.(int32)
		for range n {
			b.UnsafeAppend(x)
		}
	case *array.Int64Builder:
		x := v.(int64)
		for range n {
			b.UnsafeAppend(x)
		}
	case *array.Date32Builder:
		x := v.(arrow.Date32)
		for range n {
			b.UnsafeAppend(x)
		}
	case *array.StringBuilder:
		x := v.(string)
		b.ReserveData(n * len(x))
		for range n {
			b.Append(x)
		}
	}
	return b.NewArray()
}

// Close releases the file and every buffer the reader holds. Idempotent.
func (r *FileReader) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	for _, d := range r.decoders {
		if d != nil {
			d.close()
		}
	}
	for _, c := range r.consts {
		if c != nil {
			c.Release()
		}
	}
	if r.csv != nil {
		return r.csv.close()
	}
	if r.osf != nil {
		return r.osf.Close()
	}
	return nil
}
