package tpcds

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"unsafe"

	"github.com/parquet-go/parquet-go"
)

// errInternal marks generator bugs (a row with the wrong number of values).
// The exec sentinels are not imported so the generator does not depend on
// the engine.
var errInternal = errors.New("internal error")

// julianEpoch is the TPC-DS date key (Julian day number) of 1970-01-01.
const julianEpoch = 2440588

const batchRows = 4096

// sink writes one Parquet file. Generators emit the values of a row in the
// table's column order; the sink applies the column's NULL fraction, drops
// the Hive partition column and batches rows for the writer.
type sink struct {
	t            *tableDef
	skip         int
	r            *rng
	f            *os.File
	bw           *bufio.Writer
	w            *parquet.Writer
	rows         []parquet.Row
	col          int
	path         string
	rowGroupRows int
	leaf         int
	nrows        int64
	closed       bool
}

func newSink(path string, t *tableDef, skip int, r *rng, rowGroupRows int) (*sink, error) {
	s := &sink{t: t, skip: skip, r: r, path: path, rowGroupRows: rowGroupRows}
	s.rows = make([]parquet.Row, 0, batchRows)
	return s, nil
}

// open creates the file on the first row, so that empty partitions leave
// no folder behind and cost no file-system work.
func (s *sink) open() error {
	if err := os.MkdirAll(filepath.Dir(s.path), 0o755); err != nil {
		return fmt.Errorf("tpcds: %w", err)
	}
	f, err := os.Create(s.path)
	if err != nil {
		return fmt.Errorf("tpcds: create %s: %w", s.path, err)
	}
	s.f = f
	s.bw = bufio.NewWriterSize(f, 64<<10)
	opts := []parquet.WriterOption{
		s.t.parquetSchema(s.skip),
		parquet.Compression(&parquet.Snappy),
		parquet.CreatedBy("fsql", "tpcds", ""),
	}
	if s.rowGroupRows > 0 {
		opts = append(opts, parquet.MaxRowsPerRowGroup(int64(s.rowGroupRows)))
	}
	s.w = parquet.NewWriter(s.bw, opts...)
	return nil
}

// put appends one value; present=false writes NULL.
func (s *sink) put(v parquet.Value, present bool) {
	c := s.col
	s.col++
	if c == s.skip {
		return
	}
	if s.leaf == 0 {
		// First emitted value of a row: start a new row slot.
		s.rows = s.rows[:len(s.rows)+1]
		s.rows[len(s.rows)-1] = s.rows[len(s.rows)-1][:0]
	}
	row := &s.rows[len(s.rows)-1]
	def := 0
	if present && !s.t.cols[c].required {
		def = 1
	}
	if !present {
		v = parquet.NullValue()
	}
	*row = append(*row, v.Level(0, def, s.leaf))
	s.leaf++
}

func (s *sink) autoNull() bool {
	nf := s.t.cols[s.col].nullFrac
	return nf > 0 && s.r.float() < nf
}

// i writes an INTEGER, NULL with the column's NULL fraction.
func (s *sink) i(v int64) { s.iN(v, s.autoNull()) }

// iN writes an INTEGER or an explicit NULL.
func (s *sink) iN(v int64, null bool) { s.put(parquet.Int32Value(int32(v)), !null) }

// null writes NULL.
func (s *sink) null() { s.put(parquet.NullValue(), false) }

// d writes a decimal given in hundredths (all TPC-DS decimals have scale 2).
func (s *sink) d(cents int64) { s.dN(cents, s.autoNull()) }

func (s *sink) dN(cents int64, null bool) {
	if s.t.cols[s.col].kind == kDec64 {
		s.put(parquet.Int64Value(cents), !null)
		return
	}
	s.put(parquet.Int32Value(int32(cents)), !null)
}

// date writes a DATE given as a TPC-DS date key.
func (s *sink) date(sk int64) { s.dateN(sk, s.autoNull()) }

func (s *sink) dateN(sk int64, null bool) { s.put(parquet.Int32Value(int32(sk-julianEpoch)), !null) }

// str writes a string, NULL with the column's NULL fraction.
func (s *sink) str(v string) { s.strN(v, s.autoNull()) }

func (s *sink) strN(v string, null bool) {
	s.put(parquet.ByteArrayValue(unsafe.Slice(unsafe.StringData(v), len(v))), !null)
}

// pick writes a value sampled from a measured value list (NULLs included).
func (s *sink) pick(v *valueList) {
	val, null := v.sample(s.r)
	s.strN(val, null)
}

// end finishes a row and flushes a full batch.
func (s *sink) end() error {
	if s.col != len(s.t.cols) {
		return fmt.Errorf("tpcds: %s row has %d values, want %d: %w", s.t.name, s.col, len(s.t.cols), errInternal)
	}
	s.col, s.leaf = 0, 0
	s.nrows++
	if len(s.rows) == batchRows {
		return s.flush()
	}
	return nil
}

func (s *sink) flush() error {
	if len(s.rows) == 0 {
		return nil
	}
	if s.w == nil {
		if err := s.open(); err != nil {
			return err
		}
	}
	if _, err := s.w.WriteRows(s.rows); err != nil {
		return fmt.Errorf("tpcds: write %s: %w", s.t.name, err)
	}
	s.rows = s.rows[:0]
	return nil
}

func (s *sink) close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	err := s.flush()
	if s.w == nil {
		if err == nil && s.skip < 0 {
			// A dimension or unpartitioned file is written even when empty.
			err = s.open()
		}
		if s.w == nil || err != nil {
			return err
		}
	}
	if err == nil {
		err = s.w.Close()
	}
	if err == nil {
		err = s.bw.Flush()
	}
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// abort closes the file after a failure; the caller discards the folder.
func (s *sink) abort() {
	if !s.closed {
		s.closed = true
		if s.f != nil {
			_ = s.f.Close()
		}
	}
}
