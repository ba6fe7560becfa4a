package hive

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
)

// maxSeed bounds the seed files. The fuzzer minimises every input that
// reaches new code before it reports it (for up to a minute, one run per
// cut it tries), so inputs of kilobytes keep it minimising instead of
// fuzzing; seeds of a few columns each stay under a kilobyte.
const maxSeed = 1 << 10

// fuzzSchema is every physical type and encoding the reader decodes,
// required and optional; the seeds take a few columns of it each.
var fuzzSchema = parquet.Group{
	"a": parquet.Int(32),
	"b": parquet.Optional(parquet.Encoded(parquet.String(), &parquet.RLEDictionary)),
	"c": parquet.Optional(parquet.Decimal(2, 7, parquet.Int32Type)),
	"d": parquet.Optional(parquet.Date()),
	"e": parquet.Int(64),
	"f": parquet.Optional(parquet.Leaf(parquet.DoubleType)),
	"g": parquet.Optional(parquet.Leaf(parquet.BooleanType)),
	"h": parquet.Decimal(2, 15, parquet.Int64Type),
	"i": parquet.Optional(parquet.Decimal(3, 20, parquet.FixedLenByteArrayType(9))),
	"j": parquet.Leaf(parquet.FloatType),
	"k": parquet.Encoded(parquet.Int(32), &parquet.RLEDictionary),
}

// fuzzValue is row i's value of fuzzSchema's column name (nil: NULL).
func fuzzValue(name string, i int) any {
	if i%3 == 2 && strings.Contains("bcdfgi", name) {
		return nil
	}
	switch name {
	case "a":
		return int32(i)
	case "b":
		return string(rune('a' + i%3))
	case "c":
		return int32(i*100 - 50)
	case "d":
		return int32(10000 + i)
	case "e":
		return int64(i) << 33
	case "f":
		return float64(i) / 4
	case "g":
		return i%2 == 0
	case "h":
		return int64(i)*1000 - 7
	case "i":
		wide := make([]byte, 9)
		wide[8] = byte(i)
		return wide
	case "j":
		return float32(i) / 2
	}
	return int32(i % 3) // k
}

// columnsSeed writes n rows of the named columns of fuzzSchema.
func columnsSeed(tb testing.TB, n int, names string, opts ...parquet.WriterOption) []byte {
	g := parquet.Group{}
	for _, c := range names {
		g[string(c)] = fuzzSchema[string(c)]
	}
	return buildRows(tb, g, n, func(b *parquet.RowBuilder, i int) {
		for leaf, c := range names { // names are sorted, as the group's leaves
			if v := fuzzValue(string(c), i); v != nil {
				b.Add(leaf, parquet.ValueOf(v))
			}
		}
	}, opts...)
}

// buildRows writes n rows of group, each filled in by add.
func buildRows(tb testing.TB, group parquet.Group, n int, add func(b *parquet.RowBuilder, i int), opts ...parquet.WriterOption) []byte {
	tb.Helper()
	var buf bytes.Buffer
	w := parquet.NewWriter(&buf, append([]parquet.WriterOption{parquet.NewSchema("t", group)}, opts...)...)
	b := parquet.NewRowBuilder(group)
	for i := range n {
		b.Reset()
		add(b, i)
		if _, err := w.WriteRows([]parquet.Row{b.Row()}); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// logicalSeeds hold the logical types on flat columns, three a file:
// timestamps and times of several units, unsigned integers and UUID,
// INT96, JSON and ENUM. Row 1 is NULL wherever it may be.
func logicalSeeds(tb testing.TB) [][]byte {
	times := parquet.Group{
		"a": parquet.Optional(parquet.Timestamp(parquet.Millisecond)),
		"b": parquet.Optional(parquet.TimestampAdjusted(parquet.Nanosecond, false)),
		"c": parquet.Time(parquet.Microsecond),
	}
	ints := parquet.Group{
		"a": parquet.Optional(parquet.Uint(32)),
		"b": parquet.Uint(64),
		"c": parquet.Optional(parquet.UUID()),
	}
	other := parquet.Group{
		"a": parquet.Optional(parquet.Leaf(parquet.Int96Type)),
		"b": parquet.Optional(parquet.JSON()),
		"c": parquet.Enum(),
	}
	uuid := []byte{0, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff}
	nanos := int64(3600e9 + 5000) // 01:00:00.000005 on 1970-01-02 (Julian day 2440589)
	return [][]byte{
		buildRows(tb, times, 2, func(b *parquet.RowBuilder, i int) {
			if i == 0 {
				b.Add(0, parquet.Int64Value(1700000000123))
				b.Add(1, parquet.Int64Value(1700000000123456000))
			}
			b.Add(2, parquet.Int64Value(45296789012))
		}),
		buildRows(tb, ints, 2, func(b *parquet.RowBuilder, i int) {
			if i == 0 {
				b.Add(0, parquet.Int32Value(-1)) // 4294967295 as UINT_32
				b.Add(2, parquet.FixedLenByteArrayValue(uuid))
			}
			b.Add(1, parquet.Int64Value(-1))
		}),
		buildRows(tb, other, 2, func(b *parquet.RowBuilder, i int) {
			if i == 0 {
				b.Add(0, parquet.Int96Value(deprecated.Int96{uint32(nanos), uint32(nanos >> 32), 2440589}))
				b.Add(1, parquet.ByteArrayValue([]byte(`{"a":1}`)))
			}
			b.Add(2, parquet.ByteArrayValue([]byte("RED")))
		}),
	}
}

// nestedSeeds have LIST, STRUCT and MAP columns next to a flat one; the
// reader reads the flat one and reports the others unreadable.
func nestedSeeds(tb testing.TB) [][]byte {
	list := parquet.Group{"a": parquet.Optional(parquet.List(parquet.String())), "b": parquet.Int(32)}
	nest := parquet.Group{
		"a": parquet.Optional(parquet.Group{"x": parquet.Int(32), "y": parquet.Int(32)}),
		"b": parquet.Optional(parquet.Map(parquet.String(), parquet.Int(64))),
	}
	return [][]byte{
		buildRows(tb, list, 2, func(b *parquet.RowBuilder, i int) {
			if i == 0 {
				b.Add(0, parquet.ByteArrayValue([]byte("red")))
			}
			b.Add(1, parquet.Int32Value(int32(i)))
		}),
		buildRows(tb, nest, 2, func(b *parquet.RowBuilder, i int) {
			if i == 0 {
				b.Add(0, parquet.Int32Value(1))
				b.Add(1, parquet.Int32Value(2))
				b.Add(2, parquet.ByteArrayValue([]byte("k")))
				b.Add(3, parquet.Int64Value(7))
			}
		}),
	}
}

// fuzzSeeds are small files of the shapes the reader handles (every
// physical type and encoding, several row groups and pages, NULLs, no
// rows, logical types, nested columns), then some broken ones. Each holds
// a few columns, so each stays under maxSeed.
func fuzzSeeds(tb testing.TB) [][]byte {
	first := columnsSeed(tb, 4, "abk")
	seeds := [][]byte{
		first, columnsSeed(tb, 4, "cdh"), columnsSeed(tb, 4, "efg"), columnsSeed(tb, 4, "ij"),
		columnsSeed(tb, 5, "b", parquet.MaxRowsPerRowGroup(2), parquet.PageBufferSize(16)), // row groups, pages
		columnsSeed(tb, 0, "ae"), // no rows
	}
	seeds = append(seeds, logicalSeeds(tb)...)
	seeds = append(seeds, nestedSeeds(tb)...)
	flipped := bytes.Clone(first)
	for i := 8; i < len(flipped)-8; i += 31 {
		flipped[i] ^= 0xff
	}
	return append(seeds, first[:len(first)/2], append([]byte("PAR1"), first[len(first)/2:]...), flipped)
}

// seedRows are the rows of the well-formed seeds, in order.
var seedRows = []int64{4, 4, 4, 4, 5, 0, 2, 2, 2, 2, 2}

// TestFuzzSeedsSmall keeps the seeds small and readable: each real file
// must open and read to the end.
func TestFuzzSeedsSmall(t *testing.T) {
	for i, seed := range fuzzSeeds(t)[:len(seedRows)] {
		if len(seed) > maxSeed {
			t.Errorf("seed %d is %d bytes, over %d", i, len(seed), maxSeed)
		}
		if rows, err := fuzzRead(t, t.TempDir(), seed); err != nil {
			t.Errorf("seed %d: %v", i, err)
		} else if want := seedRows[i]; rows != want {
			t.Errorf("seed %d: %d rows, want %d", i, rows, want)
		}
	}
}

// fuzzRead writes data as the only file of table t under dir, opens the
// catalog and reads every column of every file, returning the rows read
// or the first error. Buffers must all be released.
func fuzzRead(t *testing.T, dir string, data []byte) (int64, error) {
	if err := os.MkdirAll(filepath.Join(dir, "t"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "t", "a.parquet"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	cat, err := Open(dir)
	if err != nil {
		return 0, err
	}
	tb, err := cat.Table("t")
	if err != nil {
		return 0, err
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var cols []int // the readable ones: reading a nested column fails at once
	for i := range tb.Schema.Fields() {
		if tb.ColumnError(i) == nil {
			cols = append(cols, i)
		}
	}
	var n int64
	for _, p := range tb.Partitions {
		for _, file := range p.Files {
			r, err := tb.OpenFile(p, file, ScanOptions{Columns: cols, Alloc: mem, BatchSize: 64})
			if err != nil {
				return n, err
			}
			for {
				rec, err := r.Next(context.Background())
				if err != nil {
					r.Close()
					if errors.Is(err, io.EOF) {
						break
					}
					return n, err
				}
				n += rec.NumRows()
				rec.Release()
			}
		}
	}
	return n, nil
}

// FuzzParquetReader feeds arbitrary bytes to the catalog and reader: they
// may fail, never panic or leak. `go test` runs the seeds; run
// `go test -run XXX -fuzz FuzzParquetReader ./connectors/hive` to search
// further.
func FuzzParquetReader(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	// One folder for the process, the file overwritten by each input:
	// a fresh temporary folder per input would cost more than the read.
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		if footerOutside(data) {
			return
		}
		_, _ = fuzzRead(t, dir, data)
	})
}

// footerOutside reports a file whose footer length (the 4 bytes before
// the closing magic) points before the start of the file. Such a file is
// rejected, but only after parquet-go allocated the claimed length: a
// 9-byte file costs hundreds of megabytes and seconds, and those inputs
// would be most of what the fuzzer runs. The reader should check the
// length against the file size first; until it does they are skipped.
func footerOutside(data []byte) bool {
	n := len(data)
	if n < 12 || string(data[n-4:]) != "PAR1" {
		return false
	}
	footer := int64(binary.LittleEndian.Uint32(data[n-8 : n-4]))
	return footer > int64(n-12)
}

// FuzzCSVReader feeds arbitrary text to CSV detection and reading, with
// and without an escape character: it may fail, never panic or leak.
// `go test -fuzz FuzzCSVReader ./connectors/hive` searches further.
func FuzzCSVReader(f *testing.F) {
	f.Add([]byte("a,b\n1,x\n2,\"y,\"\"z\"\"\"\n"), false)
	f.Add([]byte("n\n1\n\n\\N\n2.5\n"), true)
	f.Add([]byte("d,t\n2024-01-01,12:00:00\n2024-01-02 01:02:03.5,\"\n\"\n"), false)
	f.Add([]byte("\ufeffx\r\n\"open\r\n"), true)
	f.Fuzz(func(t *testing.T, data []byte, escape bool) {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "t"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "t", "a.csv"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		opts := DefaultOptions()
		opts.CSV.SampleRows = 3
		if escape {
			opts.CSV.Escape = '\\'
		}
		cat, err := OpenWith(dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		tb, err := cat.Table("t")
		if err != nil {
			return
		}
		cols := make([]int, len(tb.Schema.Fields()))
		for i := range cols {
			cols[i] = i
		}
		alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer alloc.AssertSize(t, 0)
		p := tb.Partitions[0]
		r, err := tb.OpenFile(p, p.Files[0], ScanOptions{Columns: cols, Alloc: alloc, BatchSize: 2})
		if err != nil {
			return
		}
		defer r.Close()
		for {
			rec, err := r.Next(context.Background())
			if err != nil {
				return
			}
			rec.Release()
		}
	})
}
