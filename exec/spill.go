package exec

import (
	"context"
	"errors"
	"io"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/spill"
)

// This file is what the operators share to spill: creating and finishing
// files with the operator's counters kept, and reading them back as
// streams and merge sources.

// spillErr reports a failure to spill as resources exhausted: the query
// could not get the room it needed, in memory or on disk.
func spillErr(who string, err error) error {
	if errors.Is(err, ErrResourcesExhausted) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return errs.Wrap(errs.Resources, "%s could not spill: %w", who, err)
}

// canSpill reports whether err from a Reservation asks the operator to
// spill (it is past its share or the budget) and the task can; not when
// the budget is too small to give the operator any share (errNoShare).
func (tc *TaskContext) canSpill(err error) bool {
	return tc.Spill != nil && errors.Is(err, ErrResourcesExhausted) && !errors.Is(err, errNoShare)
}

// spillFile is one file an operator writes, counted in its stats.
type spillFile struct {
	tc  *TaskContext
	who string
	w   *spill.Writer
}

func (tc *TaskContext) createSpill(who, purpose string, schema *arrow.Schema) (*spillFile, error) {
	w, err := tc.Spill.Create(purpose, schema)
	if err != nil {
		return nil, spillErr(who, err)
	}
	return &spillFile{tc: tc, who: who, w: w}, nil
}

func (f *spillFile) write(b arrow.RecordBatch) error {
	if err := f.w.Write(b); err != nil {
		return spillErr(f.who, err)
	}
	return nil
}

// writeCols writes n rows of cols in batches of BatchSize rows.
func (f *spillFile) writeCols(schema *arrow.Schema, cols []arrow.Array, n int) error {
	for start := 0; start < n; start += BatchSize {
		end := min(start+BatchSize, n)
		b := newBatch(schema, sliceArrays(cols, start, end), end-start)
		err := f.write(b)
		b.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

func (f *spillFile) finish() (*spill.File, error) {
	file, err := f.w.Finish()
	if err != nil {
		return nil, spillErr(f.who, err)
	}
	if op := f.tc.Op; op != nil {
		op.Spill.Bytes.Add(file.Bytes())
		op.Spill.Rows.Add(file.Rows())
		op.Spill.Files.Add(1)
	}
	return file, nil
}

func (f *spillFile) abort() { f.w.Abort() }

// spillParts is one spill of partitions an operator writes into one
// file (spill.PartWriter: a join's side at one level, an aggregate's
// groups), counted in its stats as one file. Its methods take a nil
// receiver as a spill that wrote nothing.
type spillParts struct {
	tc  *TaskContext
	who string
	w   *spill.PartWriter
}

func (tc *TaskContext) createSpillParts(who, purpose string, schema *arrow.Schema, n int, res *Reservation) (*spillParts, error) {
	w, err := tc.Spill.CreateParts(purpose, schema, n, spillRecordBytes(res.Share()))
	if err != nil {
		return nil, spillErr(who, err)
	}
	return &spillParts{tc: tc, who: who, w: w}, nil
}

// spillRecordBytes is how large the records of a spill of partitions
// may grow, for an operator whose share is share bytes (-1: undivided):
// a quarter of the share, since the partition is read back a record at
// a time under the same share (a hash join's chunks of a hot key need
// several records to a share), and at most spill.PartRecordBytes.
func spillRecordBytes(share int64) int64 {
	if share < 0 {
		return spill.PartRecordBytes
	}
	return min(share/4, spill.PartRecordBytes)
}

// write adds b's rows to partition p; the caller keeps b.
func (f *spillParts) write(p int, b arrow.RecordBatch) error {
	if err := f.w.Write(p, b); err != nil {
		return spillErr(f.who, err)
	}
	return nil
}

// writeCols adds n rows of cols to partition p, in batches of BatchSize
// rows.
func (f *spillParts) writeCols(p int, schema *arrow.Schema, cols []arrow.Array, n int) error {
	for start := 0; start < n; start += BatchSize {
		end := min(start+BatchSize, n)
		b := newBatch(schema, sliceArrays(cols, start, end), end-start)
		err := f.write(p, b)
		b.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// finish closes the file and hands each partition that got rows to
// keep, in partition order.
func (f *spillParts) finish(keep func(p int, file *spill.File)) error {
	if f == nil {
		return nil
	}
	files, err := f.w.Finish()
	if err != nil {
		return spillErr(f.who, err)
	}
	var bytes, rows int64
	for p, file := range files {
		if file == nil {
			continue
		}
		bytes += file.Bytes()
		rows += file.Rows()
		keep(p, file)
	}
	if op := f.tc.Op; op != nil && f.w.Files() > 0 {
		op.Spill.Bytes.Add(bytes)
		op.Spill.Rows.Add(rows)
		op.Spill.Files.Add(int64(f.w.Files()))
	}
	return nil
}

func (f *spillParts) abort() {
	if f != nil {
		f.w.Abort()
	}
}

// finishSpills finishes every writer of files (nil entries are skipped)
// and hands each finished file to keep, in order. After the first error
// the remaining writers are aborted, so no file is left behind half
// written; that error is returned.
func finishSpills(files []*spillFile, keep func(i int, f *spill.File)) error {
	var first error
	for i, w := range files {
		if w == nil {
			continue
		}
		if first != nil {
			w.abort()
			continue
		}
		f, err := w.finish()
		if err != nil {
			first = err
			continue
		}
		keep(i, f)
	}
	return first
}

// notePasses records how many passes over spilled data a task made.
func (tc *TaskContext) notePasses(n int) {
	if tc.Op != nil {
		tc.Op.Spill.NotePasses(int64(n))
	}
}

// fileStream reads a spill file back as a Stream (and a merge source),
// removing the file when closed if it owns it.
type fileStream struct {
	who    string
	f      *spill.File
	r      *spill.Reader
	remove bool
}

func (tc *TaskContext) openSpill(who string, f *spill.File, remove bool) (*fileStream, error) {
	r, err := f.Open(allocOf(tc))
	if err != nil {
		if remove {
			f.Remove()
		}
		return nil, spillErr(who, err)
	}
	return &fileStream{who: who, f: f, r: r, remove: remove}, nil
}

func (s *fileStream) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.r == nil {
		return nil, io.EOF
	}
	b, err := s.r.Next()
	if err == io.EOF {
		return nil, io.EOF
	}
	if err != nil {
		return nil, spillErr(s.who, err)
	}
	return b, nil
}

func (s *fileStream) Close() {
	if s.r != nil {
		s.r.Close()
		s.r = nil
	}
	if s.remove {
		s.f.Remove()
	}
}

func (s *fileStream) next(ctx context.Context) (arrow.RecordBatch, error) { return s.Next(ctx) }
func (s *fileStream) close()                                              { s.Close() }

// colsSource hands out sorted columns held in memory as a merge source.
type colsSource struct {
	schema *arrow.Schema
	cols   []arrow.Array
	n, pos int
}

func (s *colsSource) next(context.Context) (arrow.RecordBatch, error) {
	if s.pos >= s.n {
		return nil, io.EOF
	}
	end := min(s.pos+BatchSize, s.n)
	b := newBatch(s.schema, sliceArrays(s.cols, s.pos, end), end-s.pos)
	s.pos = end
	return b, nil
}

func (s *colsSource) close() {
	releaseArrays(s.cols)
	s.cols = nil
	s.pos = s.n
}
