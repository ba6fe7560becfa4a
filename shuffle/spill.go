package shuffle

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/spill"
)

// Spilling of exchange output (the store's side of issue "spill to
// disk", shuffle buffers). Output at rest, committed or staged, is
// charged to the query's budget; the store is one of the budget's
// evictors, so when a reservation anywhere in the query would pass the
// budget, the budget asks the store to write batches to disk and give
// their bytes back: committed output first, the last producer's last
// batch first (readers read producers in order, so that is read last),
// then the staged output of running attempts. A write that finds no
// room even after the evictions goes to disk itself.
//
// Files are package spill's Arrow IPC files. Each spilled batch is cut
// along key-group boundaries into records of at least cutRows rows (the
// bounds stay in memory beside the record numbers), so a consumer reads
// back only the records holding its key-group range, with spill.Reader.At.
// Committed batches evicted together share one file, finished before
// their memory is let go (a failed write leaves them in memory); a
// staging's spilled batches go to the staging's own file, finished when
// the attempt commits (nobody reads a staging before) and removed when it
// is discarded. Release removes every file, and the run's spill manager
// removes its folder whatever the outcome, cancellation included.

// cutRows is the fewest rows of a record of a spilled batch, unless the
// batch has fewer: records of a key group each (about 64 rows of an
// 8K-row batch over 128 key groups) would cost more in IPC framing and
// per-buffer compression than the rows a consumer skips by reading a
// record that also holds a neighbour's key groups.
const cutRows = 1024

// diskConfig is how a store spills: the run's manager, the allocator
// batches are read back into, and the exchange's counters.
type diskConfig struct {
	m     *spill.Manager
	alloc memory.Allocator
	stats *exec.OperatorStats // nil when the run collects none
}

// diskFile is one spill file of a store: being written (w) or finished
// (f).
type diskFile struct {
	schema *arrow.Schema
	w      *spill.Writer
	f      *spill.File
}

// remove drops the file, finished or not.
func (d *diskFile) remove() {
	if d.w != nil {
		d.w.Abort()
		d.w = nil
	}
	d.f.Remove()
}

// diskFiles is a series of files written one after the other: a new one
// starts when a batch's schema differs from the current file's (the
// glued batches of one exchange may differ in nullability flags).
type diskFiles struct {
	files []*diskFile // the last one may still be written
}

// diskRec says that rows [from, to) of a spilled batch are record rec of
// its file.
type diskRec struct {
	rec      int
	from, to int64
}

// diskRead is one record a reader still has to read, and the part of it
// (rows [from, to) of the record) it hands out.
type diskRead struct {
	file     *diskFile
	rec      int
	from, to int64
}

// reads are the records holding rows [from, to) of sb, which is spilled.
func (sb *storedBatch) reads(from, to int64) []diskRead {
	var out []diskRead
	for _, r := range sb.recs {
		lo, hi := max(from, r.from), min(to, r.to)
		if lo < hi {
			out = append(out, diskRead{file: sb.file, rec: r.rec, from: lo - r.from, to: hi - r.from})
		}
	}
	return out
}

// cuts is where sb's batch is cut into records: at key-group bounds, each
// part at least cutRows rows but the last.
func cuts(sb *storedBatch) [][2]int64 {
	var out [][2]int64
	start := int64(0)
	for i, e := range sb.ends {
		end := int64(e)
		if end-start >= cutRows || i == len(sb.ends)-1 {
			if end > start {
				out = append(out, [2]int64{start, end})
			}
			start = end
		}
	}
	return out
}

// write appends sb's batch, cut into records, to the current file of fs,
// starting one (for its schema) if needed, and returns the file and the
// records; sb itself is not changed. Call with s.mu held.
func (s *memStore) write(fs *diskFiles, sb *storedBatch) (*diskFile, []diskRec, error) {
	var cur *diskFile
	if n := len(fs.files); n > 0 && fs.files[n-1].w != nil {
		cur = fs.files[n-1]
	}
	schema := sb.b.Schema()
	if cur != nil && !cur.schema.Equal(schema) {
		if err := s.finishFile(cur); err != nil {
			return nil, nil, err
		}
		cur = nil
	}
	if cur == nil {
		w, err := s.disk.m.Create("shuffle", schema)
		if err != nil {
			return nil, nil, shuffleSpillErr(err)
		}
		cur = &diskFile{schema: schema, w: w}
		fs.files = append(fs.files, cur)
	}
	var recs []diskRec
	for _, c := range cuts(sb) {
		part := sb.b.NewSlice(c[0], c[1])
		rec := int(cur.w.Records())
		err := cur.w.Write(part)
		part.Release()
		if err != nil {
			return nil, nil, shuffleSpillErr(err)
		}
		recs = append(recs, diskRec{rec: rec, from: c[0], to: c[1]})
	}
	return cur, recs, nil
}

// finishFile closes d for reading and counts it in the exchange's
// statistics.
func (s *memStore) finishFile(d *diskFile) error {
	f, err := d.w.Finish()
	d.w = nil
	if err != nil {
		return shuffleSpillErr(err)
	}
	d.f = f
	if st := s.disk.stats; st != nil {
		st.Spill.Bytes.Add(f.Bytes())
		st.Spill.Rows.Add(f.Rows())
		st.Spill.Files.Add(1)
		st.Spill.NotePasses(1)
	}
	return nil
}

// finish finishes the file of fs still being written, if any.
func (s *memStore) finish(fs *diskFiles) error {
	if n := len(fs.files); n > 0 && fs.files[n-1].w != nil {
		return s.finishFile(fs.files[n-1])
	}
	return nil
}

// remove drops every file of fs.
func (fs *diskFiles) remove() {
	for _, f := range fs.files {
		f.remove()
	}
	fs.files = nil
}

// spill writes sb, a batch of st, to st's file and lets its memory go.
// A failure breaks the staging: batches already written there are lost
// with the file, so the attempt fails. Call with s.mu held.
func (st *memStaging) spill(sb *storedBatch) error {
	s := st.s
	file, recs, err := s.write(&st.disk, sb)
	if err != nil {
		st.broken = err
		return err
	}
	s.releaseBatch(sb)
	sb.file, sb.recs = file, recs
	return nil
}

// Evict implements exec.Evictor: it writes batches held in memory to
// disk until about want bytes went back to the budget (see the comment
// at the top of this file for the order) and returns the bytes given
// back.
func (s *memStore) Evict(want int64) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.released || s.disk == nil {
		return 0
	}
	got := s.evictCommitted(want)
	for _, st := range s.staged {
		for _, sb := range st.batches {
			if got >= want || st.broken != nil {
				break
			}
			if sb.b == nil || sb.held == 0 {
				continue
			}
			held := sb.held
			if st.spill(sb) == nil {
				got += held
			}
		}
	}
	return got
}

// evictCommitted writes committed batches to one eviction's files and,
// once the files are finished, lets their memory go. A failed write
// removes the files and keeps every batch in memory. Call with s.mu held.
func (s *memStore) evictCommitted(want int64) int64 {
	type victim struct {
		sb   *storedBatch
		file *diskFile
		recs []diskRec
	}
	var (
		fs      diskFiles
		victims []victim
		got     int64
	)
	for p := len(s.batches) - 1; p >= 0 && got < want; p-- {
		bs := s.batches[p]
		for i := len(bs) - 1; i >= 0 && got < want; i-- {
			sb := bs[i]
			if sb.b == nil || sb.held == 0 {
				continue
			}
			file, recs, err := s.write(&fs, sb)
			if err != nil {
				fs.remove()
				return 0
			}
			victims = append(victims, victim{sb, file, recs})
			got += sb.held
		}
	}
	if err := s.finish(&fs); err != nil {
		fs.remove()
		return 0
	}
	for _, v := range victims {
		s.releaseBatch(v.sb)
		v.sb.file, v.sb.recs = v.file, v.recs
	}
	s.files = append(s.files, fs.files...)
	return got
}

// shuffleSpillErr says a spill of exchange output failed (a resources
// error: the query could not get the room it needed, on disk this time).
func shuffleSpillErr(err error) error {
	return errs.Wrap(errs.Resources, "shuffle could not spill exchange output: %w", err)
}

// openFile is a reader's open spill file.
type openFile struct {
	file *diskFile
	r    *spill.Reader
}

func (o *openFile) close() {
	if o != nil {
		o.r.Close()
	}
}

// read reads one spilled record back and hands out its part d.
func (r *memReader) read(d diskRead) (arrow.RecordBatch, error) {
	if r.file == nil || r.file.file != d.file {
		r.file.close()
		r.file = nil
		rd, err := d.file.f.Open(r.s.disk.alloc)
		if err != nil {
			return nil, shuffleSpillErr(err)
		}
		r.file = &openFile{file: d.file, r: rd}
	}
	b, err := r.file.r.At(d.rec)
	if err != nil {
		return nil, shuffleSpillErr(err)
	}
	if d.from == 0 && d.to == b.NumRows() {
		return b, nil
	}
	if d.to > b.NumRows() {
		b.Release()
		return nil, fmt.Errorf("%w: spilled record %d has %d rows, a reader wants up to %d", exec.ErrInternal, d.rec, b.NumRows(), d.to)
	}
	part := b.NewSlice(d.from, d.to)
	b.Release()
	return part, nil
}
