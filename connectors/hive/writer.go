package hive

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// WriteOptions say how written Parquet files are laid out.
type WriteOptions struct {
	// Compression is the codec of every column: zstd (the default),
	// snappy, gzip, lz4, brotli or none.
	Compression string
	// RowGroupRows caps the rows of a row group (DefaultRowGroupRows when
	// zero). Row groups are the unit the reader skips by min/max
	// statistics, so they are kept well below a file.
	RowGroupRows int64
	// TargetFileSize is the size, in bytes, at which a writer closes a
	// file and starts the next one (DefaultTargetFileSize when zero).
	// Files end a little above it: the size is checked after each batch.
	TargetFileSize int64
}

const (
	// DefaultRowGroupRows is DuckDB's row-group size (122,880 rows): small
	// enough that min/max statistics prune within a file, large enough
	// that a column chunk compresses well.
	DefaultRowGroupRows = 122880
	// DefaultTargetFileSize is 128 MiB, the file size Hive, Spark and
	// Flink's file sinks roll at by default.
	DefaultTargetFileSize = 128 << 20
)

// Normalized fills the defaults and checks the codec.
func (o WriteOptions) Normalized() (WriteOptions, error) {
	if o.Compression == "" {
		o.Compression = "zstd"
	}
	if _, err := codecOf(o.Compression); err != nil {
		return o, err
	}
	if o.RowGroupRows <= 0 {
		o.RowGroupRows = DefaultRowGroupRows
	}
	if o.TargetFileSize <= 0 {
		o.TargetFileSize = DefaultTargetFileSize
	}
	return o, nil
}

func codecOf(name string) (compress.Compression, error) {
	switch strings.ToLower(name) {
	case "zstd":
		return compress.Codecs.Zstd, nil
	case "snappy":
		return compress.Codecs.Snappy, nil
	case "gzip":
		return compress.Codecs.Gzip, nil
	case "lz4":
		return compress.Codecs.Lz4Raw, nil
	case "brotli":
		return compress.Codecs.Brotli, nil
	case "none", "uncompressed":
		return compress.Codecs.Uncompressed, nil
	}
	return compress.Codecs.Uncompressed, fmt.Errorf("%w: Parquet compression %q (choose zstd, snappy, gzip, lz4, brotli or none)", ErrUnsupported, name)
}

// WritableType reports whether a column of type t can be written to
// Parquet so that reading it back gives t again, and says what to do
// when not.
func WritableType(t arrow.DataType) error {
	switch t.ID() {
	case arrow.BOOL, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT32, arrow.FLOAT64, arrow.STRING, arrow.LARGE_STRING, arrow.BINARY,
		arrow.DATE32, arrow.DECIMAL128, arrow.TIME64:
		return nil
	case arrow.TIMESTAMP:
		if t.(*arrow.TimestampType).Unit == arrow.Microsecond {
			return nil
		}
	case arrow.EXTENSION:
		return WritableType(t.(arrow.ExtensionType).StorageType())
	case arrow.NULL:
		return fmt.Errorf("%w: a column of NULLs has no type to write; CAST it (CAST(NULL AS BIGINT))", ErrUnsupported)
	}
	return fmt.Errorf("%w: writing a %s column to Parquet", ErrUnsupported, t)
}

// storageSchema is s with extension types (collated strings) replaced by
// their storage: the files hold plain strings.
func storageSchema(s *arrow.Schema) *arrow.Schema {
	fs := make([]arrow.Field, s.NumFields())
	for i, f := range s.Fields() {
		if et, ok := f.Type.(arrow.ExtensionType); ok {
			f.Type = et.StorageType()
		}
		f.Nullable = true
		f.Metadata = arrow.Metadata{}
		fs[i] = f
	}
	return arrow.NewSchema(fs, nil)
}

// ParquetWriter writes one Parquet file from Arrow batches: exact logical
// types (DECIMAL with its precision and scale, on INT32 or INT64 up to
// precision 18, DATE, TIMESTAMP and TIME in
// microseconds, UTF-8 strings), min/max statistics per column chunk, row
// groups of at most RowGroupRows rows.
type ParquetWriter struct {
	path   string
	f      *os.File
	buf    *bufio.Writer
	w      *pqarrow.FileWriter
	schema *arrow.Schema
	rows   int64
}

// CreateParquet creates the file at path (which must not exist) for
// batches of schema.
func CreateParquet(path string, schema *arrow.Schema, opts WriteOptions) (*ParquetWriter, error) {
	opts, err := opts.Normalized()
	if err != nil {
		return nil, err
	}
	for _, f := range schema.Fields() {
		if err := WritableType(f.Type); err != nil {
			return nil, fmt.Errorf("column %s: %w", f.Name, err)
		}
	}
	codec, _ := codecOf(opts.Compression)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("creating %s: %w", path, err)
	}
	// The Parquet writer holds a row group's pages in memory until the
	// group or the file ends and then writes them out in a few large
	// writes, so the buffer below it only gathers the small ones (page
	// headers, the footer). It is small because a partitioned write keeps
	// a file open per partition: 1 MiB each is 1.8 GiB of buffers for the
	// 1,828 partitions of TPC-DS store_sales by date.
	buf := bufio.NewWriterSize(f, 64<<10)
	props := parquet.NewWriterProperties(
		parquet.WithCompression(codec),
		parquet.WithMaxRowGroupLength(opts.RowGroupRows),
		parquet.WithStats(true),
		parquet.WithDictionaryDefault(true),
		// DECIMAL(p ≤ 9) as INT32 and DECIMAL(p ≤ 18) as INT64, as the
		// Parquet spec recommends and DuckDB and Spark write them: their
		// dictionaries hash integers instead of byte strings (the
		// FIXED_LEN_BYTE_ARRAY dictionary was 29% of a CTAS's CPU), and
		// statistics compare integers.
		parquet.WithStoreDecimalAsInteger(true),
		parquet.WithCreatedBy("fsql"),
	)
	st := storageSchema(schema)
	w, err := pqarrow.NewFileWriter(st, buf, props, pqarrow.NewArrowWriterProperties())
	if err != nil {
		f.Close()
		os.Remove(path)
		return nil, fmt.Errorf("%w: writing %s: %w", ErrUnsupported, path, err)
	}
	return &ParquetWriter{path: path, f: f, buf: buf, w: w, schema: st}, nil
}

// Write appends the rows of b (whose columns match the schema the file
// was created for) to the file.
func (p *ParquetWriter) Write(b arrow.RecordBatch) error {
	if b.NumRows() == 0 {
		return nil
	}
	cols := make([]arrow.Array, b.NumCols())
	for i, c := range b.Columns() {
		if ext, ok := c.(array.ExtensionArray); ok {
			c = ext.Storage()
		}
		cols[i] = c
	}
	rec := array.NewRecordBatch(p.schema, cols, b.NumRows())
	defer rec.Release()
	if err := p.w.WriteBuffered(rec); err != nil {
		return fmt.Errorf("writing %s: %w", p.path, err)
	}
	p.rows += b.NumRows()
	return nil
}

// Size is what the file will hold about now: the bytes written plus the
// row group being built.
func (p *ParquetWriter) Size() int64 {
	return p.w.TotalCompressedBytes() + p.w.RowGroupTotalCompressedBytes()
}

// Rows is the number of rows written.
func (p *ParquetWriter) Rows() int64 { return p.rows }

// Close finishes the file (footer, flush, fsync) and returns its size.
func (p *ParquetWriter) Close() (int64, error) {
	err := p.w.Close() // closes nothing below the buffer
	if err == nil {
		err = p.buf.Flush()
	}
	if err == nil {
		err = p.f.Sync()
	}
	if cerr := p.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, fmt.Errorf("writing %s: %w", p.path, err)
	}
	fi, err := os.Stat(p.path)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// Abort closes and removes a file that will not be finished.
func (p *ParquetWriter) Abort() {
	p.f.Close()
	os.Remove(p.path)
}
