package hive

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// footerFixtures writes files covering the footers fsql meets: every
// column type of the flat table over several row groups, every logical
// type (nested columns among them), and statistics of every kind.
func footerFixtures(t testing.TB) []string {
	dir := t.TempDir()
	rows := make([][]any, 300)
	for i := range rows {
		rows[i] = flatRow(i)
	}
	flat := filepath.Join(dir, "flat.parquet")
	writeParquet(t, flat, flatGroup, rows, parquet.MaxRowsPerRowGroup(100), parquet.PageBufferSize(512))
	v2 := filepath.Join(dir, "v2.parquet")
	writeParquet(t, v2, flatGroup, rows, parquet.DataPageVersion(2), parquet.Compression(&parquet.Zstd))
	types := filepath.Join(dir, "types.parquet")
	writeTypes(t, types, 1700000000123456000)
	return []string{flat, v2, types}
}

func footerOf(t testing.TB, path string) []byte {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := readFooterBytes(bytesReaderAt(data), path, int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestFooterMatchesParquetGo decodes real footers with fsql's decoder and
// with parquet-go's, and compares every field fsql keeps.
func TestFooterMatchesParquetGo(t *testing.T) {
	for _, path := range footerFixtures(t) {
		raw := footerOf(t, path)
		var want format.FileMetaData
		if err := thrift.Unmarshal(new(thrift.CompactProtocol), raw, &want); err != nil {
			t.Fatal(err)
		}
		got, err := decodeFileMeta(raw)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		// Compared as text: the logical types print every field they have.
		if fmt.Sprintf("%+v", got.schema) != fmt.Sprintf("%+v", want.Schema) {
			t.Errorf("%s: schema\n got %+v\nwant %+v", path, got.schema, want.Schema)
		}
		if got.numRows != want.NumRows || len(got.rowGroups) != len(want.RowGroups) {
			t.Fatalf("%s: %d rows in %d groups, want %d in %d", path, got.numRows, len(got.rowGroups), want.NumRows, len(want.RowGroups))
		}
		for g, rg := range want.RowGroups {
			gg := got.rowGroups[g]
			if gg.numRows != rg.NumRows || len(gg.columns) != len(rg.Columns) {
				t.Fatalf("%s: row group %d differs", path, g)
			}
			for c, cc := range rg.Columns {
				m, s := cc.MetaData, cc.MetaData.Statistics
				gc := gg.columns[c]
				if gc.typ != m.Type || gc.codec != m.Codec || gc.numValues != m.NumValues || gc.compressed != m.TotalCompressedSize ||
					gc.dataPageOffset != m.DataPageOffset || gc.dictPageOffset != m.DictionaryPageOffset || !gc.hasMeta {
					t.Errorf("%s: row group %d chunk %d: got %+v, want %+v", path, g, c, gc, m)
				}
				st := gc.stats
				if !bytes.Equal(st.min, s.Min) || !bytes.Equal(st.max, s.Max) || !bytes.Equal(st.minValue, s.MinValue) ||
					!bytes.Equal(st.maxValue, s.MaxValue) || st.nullCount != s.NullCount {
					t.Errorf("%s: row group %d chunk %d statistics: got %+v, want %+v", path, g, c, st, s)
				}
			}
		}
	}
}

// TestThriftHostile: damaged metadata fails with an error, never a panic
// or an allocation the input cannot pay for.
func TestThriftHostile(t *testing.T) {
	cases := map[string][]byte{
		"empty":            {},
		"truncated varint": {0x35, 0xff, 0xff},
		"long varint":      append([]byte{0x35}, bytes.Repeat([]byte{0xff}, 11)...),
		// Field 2 (schema): a list header claiming 2^31 structs.
		"huge list": {0x29, 0xfc, 0xff, 0xff, 0xff, 0xff, 0x07},
		// Field 4: binary claiming 1 GB.
		"huge binary":  {0x48, 0x80, 0x80, 0x80, 0x80, 0x04},
		"deep nesting": bytes.Repeat([]byte{0x1c}, 100),
		"unknown type": {0x1e, 0x00},
		"no stop":      {0x15, 0x02},
		"trailing":     {0x00, 0x00},
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := decodeFileMeta(b); !errors.Is(err, errThrift) {
				t.Fatalf("decodeFileMeta: %v, want errThrift", err)
			}
			var h pageHeader
			if _, err := decodePageHeader(b, &h); err == nil {
				t.Fatal("decodePageHeader: no error")
			}
		})
	}
}

// FuzzFooter feeds arbitrary bytes to the footer decoder and the page
// header decoder, and what decodes on to the File it would make: they
// may fail, never panic, and never allocate more than a small multiple of
// the input. `go test -fuzz FuzzFooter ./connectors/hive` searches
// further.
func FuzzFooter(f *testing.F) {
	for _, path := range footerFixtures(f) {
		f.Add(footerOf(f, path))
	}
	f.Add([]byte{0x15, 0x00, 0x19, 0x1c, 0x00, 0x00})
	f.Fuzz(func(t *testing.T, raw []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if md, err := decodeFileMeta(raw); err == nil {
			stamp := fileStamp{size: int64(len(raw)) + 8 + 1<<20}
			if f, err := fileFromFooter("fuzz.parquet", stamp, raw); err == nil {
				for _, loc := range f.chunks {
					if loc.start < 4 || loc.length < 0 || loc.start+loc.length > stamp.size-8-int64(len(raw)) {
						t.Fatalf("chunk %+v outside the data", loc)
					}
				}
			}
			_ = md
		}
		var h pageHeader
		decodePageHeader(raw, &h)
		runtime.ReadMemStats(&after)
		// What the decoded structs may take: a few hundred bytes per input
		// byte at worst (an empty struct of one byte becomes a chunkMeta),
		// plus the error messages.
		if grew := after.TotalAlloc - before.TotalAlloc; grew > uint64(len(raw))*512+64<<10 {
			t.Fatalf("decoding %d bytes allocated %d", len(raw), grew)
		}
	})
}

// BenchmarkFooter decodes the footer of a 12-column file of 3 row groups
// into a File: what a cold catalog pays per file, against parquet-go's
// reflection-based decoding of the same bytes (which the catalog and then
// every scan of the file used to pay).
func BenchmarkFooter(b *testing.B) {
	raw := footerOf(b, footerFixtures(b)[0])
	stamp := fileStamp{size: 1 << 40}
	b.Run("fsql", func(b *testing.B) {
		b.ReportAllocs()
		defer reportCPU(b)()
		for b.Loop() {
			if _, err := fileFromFooter("x.parquet", stamp, raw); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parquet-go", func(b *testing.B) {
		b.ReportAllocs()
		defer reportCPU(b)()
		for b.Loop() {
			var md format.FileMetaData
			if err := thrift.Unmarshal(new(thrift.CompactProtocol), raw, &md); err != nil {
				b.Fatal(err)
			}
		}
	})
}
