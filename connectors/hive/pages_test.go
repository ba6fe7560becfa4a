package hive

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/format"
)

// TestPageFormats reads the flat table written every way parquet-go
// writes pages: each codec, data page v1 and v2, and every value encoding
// fsql's page reader hands to parquet-go's decoders, several pages per
// chunk and several row groups per file.
func TestPageFormats(t *testing.T) {
	codecs := map[string]compress.Codec{
		"none": &parquet.Uncompressed, "snappy": &parquet.Snappy, "gzip": &parquet.Gzip,
		"zstd": &parquet.Zstd, "brotli": &parquet.Brotli, "lz4raw": &parquet.Lz4Raw,
	}
	wants := map[string]format.Encoding{"default": format.RLEDictionary, "plain": format.Plain, "delta": format.DeltaBinaryPacked,
		"delta-bytes": format.DeltaByteArray, "split": format.ByteStreamSplit, "rle-bool": format.RLE}
	encodings := map[string][]parquet.WriterOption{
		"default": nil,
		"plain":   {parquet.DefaultEncoding(&parquet.Plain)},
		"delta": {
			parquet.DefaultEncodingFor(parquet.Int32, &parquet.DeltaBinaryPacked),
			parquet.DefaultEncodingFor(parquet.Int64, &parquet.DeltaBinaryPacked),
			parquet.DefaultEncodingFor(parquet.ByteArray, &parquet.DeltaLengthByteArray),
		},
		"delta-bytes": {parquet.DefaultEncodingFor(parquet.ByteArray, &parquet.DeltaByteArray)},
		"split": {
			parquet.DefaultEncodingFor(parquet.Float, &parquet.ByteStreamSplit),
			parquet.DefaultEncodingFor(parquet.Double, &parquet.ByteStreamSplit),
		},
		"rle-bool": {parquet.DefaultEncodingFor(parquet.Boolean, &parquet.RLE)},
	}
	type variant struct {
		name string
		opts []parquet.WriterOption
		want format.Encoding // a value encoding some data page must use
		page int32           // the data page type
	}
	var variants []variant
	for cn, c := range codecs {
		for _, v := range []int{1, 2} {
			variants = append(variants, variant{name: cn + "/v" + string(rune('0'+v)), opts: []parquet.WriterOption{parquet.Compression(c), parquet.DataPageVersion(v)},
				want: format.RLEDictionary, page: pageType(v)})
		}
	}
	for en, opts := range encodings {
		for _, v := range []int{1, 2} {
			variants = append(variants, variant{name: en + "/v" + string(rune('0'+v)),
				opts: append([]parquet.WriterOption{parquet.DataPageVersion(v), parquet.Compression(&parquet.Snappy)}, opts...),
				want: wants[en], page: pageType(v)})
		}
	}
	const n = 2100
	rows := make([][]any, n)
	for i := range rows {
		rows[i] = flatRow(i)
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			dir := t.TempDir()
			opts := append([]parquet.WriterOption{parquet.MaxRowsPerRowGroup(800), parquet.PageBufferSize(1024)}, v.opts...)
			writeParquet(t, filepath.Join(dir, "items", "part-0.parquet"), flatGroup, rows, opts...)
			cat, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			tb, err := cat.Table("items")
			if err != nil {
				t.Fatal(err)
			}
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			all := make([]int, tb.NumFileColumns)
			for i := range all {
				all[i] = i
			}
			row := 0
			for _, rec := range readAll(t, tb, ScanOptions{Columns: all, BatchSize: 333, Alloc: mem}) {
				for i := 0; i < int(rec.NumRows()); i++ {
					checkFlatRow(t, rec, i, row)
					row++
				}
				rec.Release()
			}
			if row != n {
				t.Fatalf("read %d rows, want %d", row, n)
			}
			seen := pageKinds(t, tb.Partitions[0].Files[0])
			if !seen[[2]int32{v.page, int32(v.want)}] {
				t.Fatalf("no data page of type %d with encoding %s among %v: the variant tests nothing new", v.page, v.want, seen)
			}
		})
	}
}

func pageType(version int) int32 {
	if version == 2 {
		return pageDataV2
	}
	return pageData
}

// pageKinds walks every page header of f: the (page type, encoding)
// pairs its chunks hold.
func pageKinds(t *testing.T, f *File) map[[2]int32]bool {
	data, err := os.ReadFile(f.Path)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[[2]int32]bool{}
	for _, loc := range f.chunks {
		for pos := loc.start; pos < loc.start+loc.length; {
			var h pageHeader
			n, err := decodePageHeader(data[pos:], &h)
			if err != nil {
				t.Fatal(err)
			}
			seen[[2]int32{h.typ, int32(h.encoding)}] = true
			pos += int64(n) + int64(h.compressed)
		}
	}
	return seen
}

// TestChunkOutsideFile: a footer whose chunk claims bytes past the
// footer's start is refused when the table loads, naming the file.
func TestChunkOutsideFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "items", "part-0.parquet")
	rows := [][]any{flatRow(0), flatRow(1)}
	writeParquet(t, path, flatGroup, rows)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := readFooterBytes(bytesReaderAt(data), path, int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	md, err := decodeFileMeta(raw)
	if err != nil {
		t.Fatal(err)
	}
	c := md.rowGroups[0].columns[0]
	end := int64(len(data)) - 8 - int64(len(raw))
	c.dataPageOffset, c.dictPageOffset = end-2, 0
	if _, err := locate(path, 0, &c, end); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("chunk past the data: %v", err)
	}
	c.external = "other.parquet"
	if _, err := locate(path, 0, &c, end); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("chunk in another file: %v", err)
	}
}

// TestUnsupportedCodec: a chunk compressed with a codec parquet-go does
// not read (LZO) fails the read naming the codec, not the table.
func TestUnsupportedCodec(t *testing.T) {
	var p pageReader
	err := p.reset(nil, chunkLoc{start: 4, length: 10, codec: format.LZO}, &columnInfo{}, nil)
	if !errors.Is(err, ErrUnsupported) {
		t.Fatalf("LZO: %v", err)
	}
}

type bytesReaderAt []byte

func (b bytesReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off > int64(len(b)) {
		return 0, errors.New("offset out of range")
	}
	n := copy(p, b[off:])
	if n < len(p) {
		return n, errors.New("short read")
	}
	return n, nil
}
