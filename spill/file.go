package spill

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// writeBuffer is the size of a Writer's buffer in front of the file.
const writeBuffer = 64 << 10

// WriterMemory is what one open Writer holds outside Arrow buffers (its
// write buffer, the IPC writer's scratch), for callers that charge it.
const WriterMemory = writeBuffer + 16<<10

// Writer appends batches of one schema to a new spill file. It is used
// from one goroutine. Call Finish to get the File, or Abort on error
// paths; one of them must be called.
type Writer struct {
	m            *Manager
	path, dir    string
	schema       *arrow.Schema // as given
	storage      *arrow.Schema // extension types replaced by their storage
	ext          []bool
	f            *os.File
	bw           *bufio.Writer
	cw           countingWriter
	w            *ipc.FileWriter
	rows, recs   int64
	ended        bool
	writeFailure error
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// Create starts a file for batches of schema. purpose names the file (an
// operator, "sort-run"), for whoever looks into the folder.
func (m *Manager) Create(purpose string, schema *arrow.Schema) (*Writer, error) {
	if m == nil {
		return nil, fmt.Errorf("%w: no spill manager (spilling is off)", ErrSpill)
	}
	storage, ext, err := storageSchema(schema)
	if err != nil {
		return nil, err
	}
	path, dir, err := m.newPath(purpose)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, dirErr(dir, err)
	}
	wr := &Writer{m: m, path: path, dir: dir, schema: schema, storage: storage, ext: ext, f: f}
	wr.bw = bufio.NewWriterSize(f, writeBuffer)
	wr.cw.w = wr.bw
	opts := []ipc.Option{ipc.WithSchema(storage), ipc.WithAllocator(memory.DefaultAllocator)}
	switch m.cfg.Compression {
	case LZ4:
		opts = append(opts, ipc.WithLZ4())
	case Zstd:
		opts = append(opts, ipc.WithZstd())
	}
	w, err := ipc.NewFileWriter(&wr.cw, opts...)
	if err != nil {
		f.Close()
		os.Remove(path)
		return nil, writeErr(dir, path, err)
	}
	wr.w = w
	m.files.Add(1)
	return wr, nil
}

// storageSchema replaces top-level extension types by their storage.
func storageSchema(s *arrow.Schema) (*arrow.Schema, []bool, error) {
	fs := make([]arrow.Field, s.NumFields())
	ext := make([]bool, s.NumFields())
	any := false
	for i, f := range s.Fields() {
		if et, ok := f.Type.(arrow.ExtensionType); ok {
			f.Type = et.StorageType()
			ext[i], any = true, true
		}
		if hasNestedExtension(f.Type) {
			return nil, nil, fmt.Errorf("%w: column %s of type %s: spilling nested extension types is not supported", ErrSpill, f.Name, f.Type)
		}
		fs[i] = f
	}
	if !any {
		return s, ext, nil
	}
	md := s.Metadata()
	return arrow.NewSchema(fs, &md), ext, nil
}

func hasNestedExtension(t arrow.DataType) bool {
	nt, ok := t.(arrow.NestedType)
	if !ok {
		return false
	}
	for _, f := range nt.Fields() {
		if f.Type.ID() == arrow.EXTENSION || hasNestedExtension(f.Type) {
			return true
		}
	}
	return false
}

// Write appends b as one record (a slice writes only its rows). The
// caller keeps its reference to b.
func (w *Writer) Write(b arrow.RecordBatch) error {
	if w.ended {
		return fmt.Errorf("%w: write to a finished spill file %s", ErrSpill, filepath.Base(w.path))
	}
	if w.writeFailure != nil {
		return w.writeFailure
	}
	if int(b.NumCols()) != len(w.ext) {
		return fmt.Errorf("%w: batch of %d columns written to a spill file of %d", ErrSpill, b.NumCols(), len(w.ext))
	}
	rec := w.storageBatch(b)
	defer rec.Release()
	_, err := w.writeStorage(rec)
	return err
}

// storageBatch is b with its extension columns replaced by their
// storage (b itself, retained, when it has none).
func (w *Writer) storageBatch(b arrow.RecordBatch) arrow.RecordBatch {
	if w.storage == w.schema {
		b.Retain()
		return b
	}
	return array.NewRecordBatch(w.storage, w.storageCols(b), b.NumRows())
}

func (w *Writer) storageCols(b arrow.RecordBatch) []arrow.Array {
	cols := make([]arrow.Array, b.NumCols())
	for i, c := range b.Columns() {
		cols[i] = c
		if w.ext[i] {
			cols[i] = c.(array.ExtensionArray).Storage()
		}
	}
	return cols
}

// writeStorage appends rec, of the storage schema, as one record and
// returns the bytes it took in the file.
func (w *Writer) writeStorage(rec arrow.RecordBatch) (int64, error) {
	before := w.cw.n
	if err := w.w.Write(rec); err != nil {
		w.writeFailure = writeErr(w.dir, w.path, err)
		return 0, w.writeFailure
	}
	w.rows += rec.NumRows()
	w.recs++
	return w.cw.n - before, nil
}

// Rows is the number of rows written so far.
func (w *Writer) Rows() int64 { return w.rows }

// Records is the number of records (batches) written so far.
func (w *Writer) Records() int64 { return w.recs }

// Finish closes the file and returns it for reading.
func (w *Writer) Finish() (*File, error) {
	if w.ended {
		return nil, fmt.Errorf("%w: spill file %s finished twice", ErrSpill, filepath.Base(w.path))
	}
	w.ended = true
	err := w.writeFailure
	if err == nil {
		if cerr := w.w.Close(); cerr != nil {
			err = writeErr(w.dir, w.path, cerr)
		}
	}
	if err == nil {
		if ferr := w.bw.Flush(); ferr != nil {
			err = writeErr(w.dir, w.path, ferr)
		}
	}
	if cerr := w.f.Close(); cerr != nil && err == nil {
		err = writeErr(w.dir, w.path, cerr)
	}
	if err != nil {
		os.Remove(w.path)
		return nil, err
	}
	w.m.bytes.Add(w.cw.n)
	w.m.rows.Add(w.rows)
	return &File{m: w.m, path: w.path, dir: w.dir, schema: w.schema, ext: w.ext, rows: w.rows, recs: w.recs, bytes: w.cw.n}, nil
}

// Abort drops the file (error and cancellation paths). Safe after Finish.
func (w *Writer) Abort() {
	if w.ended {
		return
	}
	w.ended = true
	if w.writeFailure == nil {
		_ = w.w.Close()
	}
	w.f.Close()
	os.Remove(w.path)
}

// File is a finished spill file, or one partition of a file a
// PartWriter wrote: then it is the records of that partition, and the
// file on disk goes when the last of its partitions is removed.
type File struct {
	m          *Manager
	path, dir  string
	schema     *arrow.Schema
	ext        []bool
	rows, recs int64
	bytes      int64
	removed    atomic.Bool
	// part lists the partition's records in the file (nil: a whole
	// file); shared counts the partitions of the file not removed yet.
	part   []int32
	shared *atomic.Int64
}

// Rows is the number of rows in the file.
func (f *File) Rows() int64 { return f.rows }

// Records is the number of records (batches) in the file.
func (f *File) Records() int { return int(f.recs) }

// Bytes is the file's size on disk.
func (f *File) Bytes() int64 { return f.bytes }

// Schema is the schema the file was written with.
func (f *File) Schema() *arrow.Schema { return f.schema }

// Path is where the file lives.
func (f *File) Path() string { return f.path }

// Remove deletes the file; readers still open keep what they read. Safe
// to call more than once, and after Manager.Close.
func (f *File) Remove() {
	if f == nil || !f.removed.CompareAndSwap(false, true) {
		return
	}
	if f.shared != nil && f.shared.Add(-1) > 0 {
		return // other partitions of the file are still to be read
	}
	os.Remove(f.path)
}

// Reader reads a File back. Next is for one goroutine; At may be called
// from several at once.
type Reader struct {
	file  *File
	alloc memory.Allocator
	f     *os.File
	r     *ipc.FileReader
	next  int
	mu    sync.Mutex
	done  bool
}

// Open opens the file for reading; batches are allocated from alloc.
func (f *File) Open(alloc memory.Allocator) (*Reader, error) {
	if alloc == nil {
		alloc = memory.DefaultAllocator
	}
	if f.removed.Load() {
		return nil, fmt.Errorf("%w: spill file %s was already removed", ErrSpill, filepath.Base(f.path))
	}
	osf, err := os.Open(f.path)
	if err != nil {
		return nil, fmt.Errorf("%w: opening spill file %s in io.tmp.dirs directory %s: %w (was the directory cleaned while the query ran?)", ErrSpill, filepath.Base(f.path), f.dir, err)
	}
	r, err := ipc.NewFileReader(osf, ipc.WithAllocator(alloc))
	if err != nil {
		osf.Close()
		return nil, fmt.Errorf("%w: reading spill file %s in %s: %w", ErrSpill, filepath.Base(f.path), f.dir, err)
	}
	return &Reader{file: f, alloc: alloc, f: osf, r: r}, nil
}

// Next returns the next batch, which the caller owns, or io.EOF.
func (r *Reader) Next() (arrow.RecordBatch, error) {
	if r.done || r.next >= r.Records() {
		return nil, io.EOF
	}
	b, err := r.At(r.next)
	if err != nil {
		return nil, err
	}
	r.next++
	return b, nil
}

// At returns record i, which the caller owns.
func (r *Reader) At(i int) (arrow.RecordBatch, error) {
	r.mu.Lock()
	if r.done {
		r.mu.Unlock()
		return nil, fmt.Errorf("%w: read from a closed spill reader", ErrSpill)
	}
	r.mu.Unlock()
	rec := i
	if part := r.file.part; part != nil {
		if i < 0 || i >= len(part) {
			return nil, fmt.Errorf("%w: record %d of a partition of %d records in spill file %s", ErrSpill, i, len(part), filepath.Base(r.file.path))
		}
		rec = int(part[i])
	}
	b, err := r.r.RecordBatchAt(rec)
	if err != nil {
		return nil, fmt.Errorf("%w: reading record %d of spill file %s in %s: %w", ErrSpill, i, filepath.Base(r.file.path), r.file.dir, err)
	}
	if r.file.schema == nil || !anyTrue(r.file.ext) {
		if r.file.schema != nil {
			nb := array.NewRecordBatch(r.file.schema, b.Columns(), b.NumRows())
			b.Release()
			return nb, nil
		}
		return b, nil
	}
	cols := make([]arrow.Array, b.NumCols())
	for c, a := range b.Columns() {
		if r.file.ext[c] {
			cols[c] = array.NewExtensionArrayWithStorage(r.file.schema.Field(c).Type.(arrow.ExtensionType), a)
		} else {
			a.Retain()
			cols[c] = a
		}
	}
	nb := array.NewRecordBatch(r.file.schema, cols, b.NumRows())
	b.Release()
	for _, c := range cols {
		c.Release()
	}
	return nb, nil
}

func anyTrue(bs []bool) bool {
	for _, b := range bs {
		if b {
			return true
		}
	}
	return false
}

// Records is the number of records in the file (in the partition, for
// a partition of a shared file).
func (r *Reader) Records() int {
	if r.file.part != nil {
		return len(r.file.part)
	}
	return r.r.NumRecords()
}

// Close releases the reader. Idempotent.
func (r *Reader) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return
	}
	r.done = true
	r.r.Close()
	r.f.Close()
}
