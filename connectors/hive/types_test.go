package hive

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// typesGroup has a column of every logical type users bring; fields sort
// by name, and the nested columns sit between flat ones so their leaves
// shift the flat columns' chunk indexes.
var typesGroup = parquet.Group{
	"a_ts_ms":   parquet.Optional(parquet.Timestamp(parquet.Millisecond)),                    // leaf 0: TIMESTAMP (UTC)
	"b_dt_us":   parquet.Optional(parquet.TimestampAdjusted(parquet.Microsecond, false)),     // 1: DATETIME
	"c_dt_ns":   parquet.Optional(parquet.TimestampAdjusted(parquet.Nanosecond, false)),      // 2: DATETIME
	"d_tags":    parquet.Optional(parquet.List(parquet.String())),                            // 3: LIST
	"e_time_ms": parquet.Optional(parquet.Time(parquet.Millisecond)),                         // 4: TIME on INT32
	"f_time_us": parquet.Optional(parquet.Time(parquet.Microsecond)),                         // 5
	"g_time_ns": parquet.Optional(parquet.Time(parquet.Nanosecond)),                          // 6
	"h_attrs":   parquet.Optional(parquet.Map(parquet.String(), parquet.Int(64))),            // 7, 8: MAP
	"i_u8":      parquet.Optional(parquet.Uint(8)),                                           // 9
	"j_u16":     parquet.Uint(16),                                                            // 10
	"k_u32":     parquet.Optional(parquet.Uint(32)),                                          // 11
	"l_u64":     parquet.Optional(parquet.Uint(64)),                                          // 12
	"m_point":   parquet.Optional(parquet.Group{"x": parquet.Int(32), "y": parquet.Int(32)}), // 13, 14: STRUCT
	"n_uuid":    parquet.Optional(parquet.UUID()),                                            // 15
	"o_fixed":   parquet.Optional(parquet.Leaf(parquet.FixedLenByteArrayType(3))),            // 16
	"p_json":    parquet.Optional(parquet.JSON()),                                            // 17
	"q_int96":   parquet.Optional(parquet.Leaf(parquet.Int96Type)),                           // 18
	"r_enum":    parquet.Enum(),                                                              // 19
	"s_ts_us":   parquet.Timestamp(parquet.Microsecond),                                      // 20: TIMESTAMP, required
}

var uuidBytes = []byte{0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff}

// int96 is an INT96 timestamp: nanoseconds within the day, Julian day.
func int96(day int64, nanos int64) deprecated.Int96 {
	return deprecated.Int96{uint32(nanos), uint32(nanos >> 32), uint32(day + julianEpoch)}
}

// writeTypes writes rows of typesGroup: row 1 is NULL wherever it may be;
// nanos is the c_dt_ns value of row 0.
func writeTypes(t testing.TB, path string, nanos int64) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := parquet.NewWriter(f, parquet.NewSchema("t", typesGroup), parquet.MaxRowsPerRowGroup(2))
	b := parquet.NewRowBuilder(typesGroup)
	for i := range 3 {
		b.Reset()
		if i != 1 {
			k := int64(i) // row 2 differs from row 0 by one unit of everything
			b.Add(0, parquet.Int64Value(1700000000123+k))
			b.Add(1, parquet.Int64Value(1700000000123456+k))
			b.Add(2, parquet.Int64Value(nanos+k*1000))
			b.Add(3, parquet.ByteArrayValue([]byte("red")))
			b.Next(3)
			b.Add(3, parquet.ByteArrayValue([]byte("blue")))
			b.Add(4, parquet.Int32Value(45296789+int32(k)))
			b.Add(5, parquet.Int64Value(45296789012+k))
			b.Add(6, parquet.Int64Value(45296789012000+k*1000))
			b.Add(7, parquet.ByteArrayValue([]byte("k")))
			b.Add(8, parquet.Int64Value(7))
			b.Add(9, parquet.Int32Value(200))
			b.Add(11, parquet.Int32Value(-1)) // 4294967295 as UINT_32
			b.Add(12, parquet.Int64Value(-1)) // 18446744073709551615 as UINT_64
			b.Add(13, parquet.Int32Value(1))
			b.Add(14, parquet.Int32Value(2))
			b.Add(15, parquet.FixedLenByteArrayValue(uuidBytes))
			b.Add(16, parquet.FixedLenByteArrayValue([]byte{'a', 0, 'c'}))
			b.Add(17, parquet.ByteArrayValue([]byte(`{"a":1}`)))
			b.Add(18, parquet.Int96Value(int96(1, 3600e9+5000)))
		}
		b.Add(10, parquet.Int32Value(65535))
		b.Add(19, parquet.ByteArrayValue([]byte("RED")))
		b.Add(20, parquet.Int64Value(-1)) // a microsecond before the epoch
		if _, err := w.WriteRows([]parquet.Row{b.Row()}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestLogicalTypes(t *testing.T) {
	dir := t.TempDir()
	writeTypes(t, filepath.Join(dir, "types", "part-0.parquet"), 1700000000123456000)
	cat, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	tb := mustTable(t, cat, "types")

	wantTypes := map[string]string{
		"a_ts_ms": "timestamp[us, tz=UTC]", "b_dt_us": "timestamp[us]", "c_dt_ns": "timestamp[us]",
		"e_time_ms": "time64[us]", "f_time_us": "time64[us]", "g_time_ns": "time64[us]",
		"i_u8": "int32", "j_u16": "int32", "k_u32": "int64", "l_u64": "uint64",
		"n_uuid": "utf8", "o_fixed": "utf8", "p_json": "utf8", "q_int96": "timestamp[us, tz=UTC]", "r_enum": "utf8",
		"s_ts_us": "timestamp[us, tz=UTC]",
		"d_tags":  "list<element: utf8>",
		"h_attrs": "map<utf8, int64, items_nullable>",
		"m_point": "struct<x: int32, y: int32>",
	}
	if len(tb.Schema.Fields()) != len(wantTypes) {
		t.Fatalf("schema has %d columns, want %d: %s", len(tb.Schema.Fields()), len(wantTypes), tb.Schema)
	}
	var flat []int
	for i, f := range tb.Schema.Fields() {
		if got := f.Type.String(); got != wantTypes[f.Name] {
			t.Errorf("column %s: type %s, want %s", f.Name, got, wantTypes[f.Name])
		}
		if tb.ColumnError(i) == nil {
			flat = append(flat, i)
		}
	}
	if len(flat) != len(wantTypes)-3 {
		t.Fatalf("%d readable columns, want all but the 3 nested ones", len(flat))
	}

	// Every flat column reads, around the nested columns' leaves.
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer alloc.AssertSize(t, 0)
	recs := readAll(t, tb, ScanOptions{Columns: flat, Alloc: alloc})
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	got := map[string][]string{}
	for _, r := range recs {
		for c, f := range r.Schema().Fields() {
			col := r.Column(c)
			for i := range col.Len() {
				got[f.Name] = append(got[f.Name], col.ValueStr(i))
			}
		}
	}
	want := map[string][]string{
		"a_ts_ms":   {"2023-11-14T22:13:20.123Z", "(null)", "2023-11-14T22:13:20.125Z"},
		"b_dt_us":   {"2023-11-14T22:13:20.123456", "(null)", "2023-11-14T22:13:20.123458"},
		"c_dt_ns":   {"2023-11-14T22:13:20.123456", "(null)", "2023-11-14T22:13:20.123458"},
		"e_time_ms": {"12:34:56.789000", "(null)", "12:34:56.791000"},
		"f_time_us": {"12:34:56.789012", "(null)", "12:34:56.789014"},
		"g_time_ns": {"12:34:56.789012", "(null)", "12:34:56.789014"},
		"i_u8":      {"200", "(null)", "200"},
		"j_u16":     {"65535", "65535", "65535"},
		"k_u32":     {"4294967295", "(null)", "4294967295"},
		"l_u64":     {"18446744073709551615", "(null)", "18446744073709551615"},
		"n_uuid":    {"00112233-4455-6677-8899-aabbccddeeff", "(null)", "00112233-4455-6677-8899-aabbccddeeff"},
		"o_fixed":   {"a\x00c", "(null)", "a\x00c"},
		"p_json":    {`{"a":1}`, "(null)", `{"a":1}`},
		"q_int96":   {"1970-01-02T01:00:00.000005Z", "(null)", "1970-01-02T01:00:00.000005Z"},
		"r_enum":    {"RED", "RED", "RED"},
		"s_ts_us":   {"1969-12-31T23:59:59.999999Z", "1969-12-31T23:59:59.999999Z", "1969-12-31T23:59:59.999999Z"},
	}
	for name, w := range want {
		if strings.Join(got[name], "|") != strings.Join(w, "|") {
			t.Errorf("column %s: got %q, want %q", name, got[name], w)
		}
	}

	// Statistics are in the column's Arrow type and microseconds.
	st := func(name string) ColumnStats {
		i := tb.Schema.FieldIndices(name)[0]
		return tb.Partitions[0].Files[0].RowGroups[0].Columns[i]
	}
	if s := st("a_ts_ms"); !s.HasMinMax || s.Min != arrow.Timestamp(1700000000123000) || s.NullCount != 1 {
		t.Errorf("a_ts_ms statistics %+v", s)
	}
	if s := st("l_u64"); !s.HasMinMax || s.Min != uint64(18446744073709551615) {
		t.Errorf("l_u64 statistics %+v", s)
	}
	if s := st("g_time_ns"); !s.HasMinMax || s.Min != arrow.Time64(45296789012) {
		t.Errorf("g_time_ns statistics %+v", s)
	}
	if s := st("k_u32"); !s.HasMinMax || s.Max != int64(4294967295) {
		t.Errorf("k_u32 statistics %+v", s)
	}
	if s := st("q_int96"); s.HasMinMax {
		t.Errorf("q_int96 statistics %+v: INT96 order is undefined, they must not be used", s)
	}
	if s := st("n_uuid"); !s.HasMinMax || s.Min != "00112233-4455-6677-8899-aabbccddeeff" {
		t.Errorf("n_uuid statistics %+v", s)
	}

	// The table opens; reading a nested column fails naming it and its
	// kind, and only that.
	for name, kind := range map[string]string{"d_tags": "LIST", "h_attrs": "MAP", "m_point": "STRUCT"} {
		i := tb.Schema.FieldIndices(name)[0]
		_, err := tb.OpenFile(tb.Partitions[0], tb.Partitions[0].Files[0], ScanOptions{Columns: []int{0, i}})
		if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), kind) {
			t.Errorf("reading %s: %v, want ErrUnsupported naming it and %s", name, err, kind)
		}
	}
}

// A nanosecond value with a sub-microsecond part fails (naming the column
// and the value) unless the catalog truncates; truncation floors.
func TestNanosecondPrecision(t *testing.T) {
	dir := t.TempDir()
	writeTypes(t, filepath.Join(dir, "types", "part-0.parquet"), -1700000000123456789)
	read := func(opts Options) ([]string, error) {
		cat, err := OpenWith(dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		tb := mustTable(t, cat, "types")
		col := tb.Schema.FieldIndices("c_dt_ns")[0]
		var out []string
		for _, f := range tb.Partitions[0].Files {
			r, err := tb.OpenFile(tb.Partitions[0], f, ScanOptions{Columns: []int{col}})
			if err != nil {
				return nil, err
			}
			defer r.Close()
			for {
				rec, err := r.Next(context.Background())
				if err == io.EOF {
					break
				}
				if err != nil {
					return nil, err
				}
				for i := range int(rec.NumRows()) {
					out = append(out, rec.Column(0).ValueStr(i))
				}
				rec.Release()
			}
		}
		return out, nil
	}
	_, err := read(DefaultOptions())
	if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "c_dt_ns") || !strings.Contains(err.Error(), "1916-02-18 01:46:39.876543211") ||
		!strings.Contains(err.Error(), "parquet.nanos-truncate") {
		t.Fatalf("got %v, want a sub-microsecond error naming the column and value", err)
	}
	opts := DefaultOptions()
	opts.TruncateNanos = true
	got, err := read(opts)
	if err != nil {
		t.Fatal(err)
	}
	// -1700000000123456789 ns floors to -1700000000123457 µs.
	if want := "1916-02-18T01:46:39.876543|(null)|1916-02-18T01:46:39.876545"; strings.Join(got, "|") != want {
		t.Fatalf("truncated: got %q, want %q", got, want)
	}
}

// The deprecated converted types (what older writers set instead of
// logical types) map like their logical counterparts.
func TestConvertedTypes(t *testing.T) {
	for _, tc := range []struct {
		conv deprecated.ConvertedType
		phys string
		want string
	}{
		{deprecated.TimestampMillis, "INT64", "timestamp[us, tz=UTC]"},
		{deprecated.TimestampMicros, "INT64", "timestamp[us, tz=UTC]"},
		{deprecated.TimeMillis, "INT32", "time64[us]"},
		{deprecated.TimeMicros, "INT64", "time64[us]"},
		{deprecated.Uint8, "INT32", "int32"},
		{deprecated.Uint32, "INT32", "int64"},
		{deprecated.Uint64, "INT64", "uint64"},
		{deprecated.Int16, "INT32", "int32"},
		{deprecated.Json, "BYTE_ARRAY", "utf8"},
	} {
		el := schemaElement(tc.phys, tc.conv)
		ci, err := mapColumn(&el)
		if err != nil || ci.arrow.String() != tc.want {
			t.Errorf("%s on %s: %v %v, want %s", convertedName(tc.conv), tc.phys, ci.arrow, err, tc.want)
		}
	}
	el := schemaElement("BYTE_ARRAY", deprecated.Interval)
	if _, err := mapColumn(&el); err == nil || !strings.Contains(err.Error(), "INTERVAL") {
		t.Errorf("INTERVAL: %v, want an error naming it", err)
	}
}

// An INT96 value converts to microseconds since the epoch.
func TestInt96(t *testing.T) {
	us, err := int96Micros(int96(-1, 86399e9+999999000), false)
	if err != nil || us != -1 {
		t.Fatalf("got %d %v, want -1", us, err)
	}
	if _, err := int96Micros(int96(0, 1), false); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("1 ns: %v, want ErrUnsupported", err)
	}
	if us, err := int96Micros(int96(0, 1999), true); err != nil || us != 1 {
		t.Fatalf("truncated: %d %v", us, err)
	}
	if _, err := int96Micros(int96(0, 86400e9), false); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a day of nanoseconds: %v, want ErrCorrupt", err)
	}
}

func TestHalfFloat(t *testing.T) {
	for h, want := range map[uint16]float64{0x3c00: 1, 0xc000: -2, 0x3555: 0.333251953125, 0x0001: 5.960464477539063e-08, 0x7bff: 65504} {
		if got := halfToFloat(h); got != want {
			t.Errorf("%#x: %v, want %v", h, got, want)
		}
	}
}

// schemaElement is an optional leaf of a physical type with a converted
// type and no logical type, as older writers wrote them.
func schemaElement(phys string, conv deprecated.ConvertedType) format.SchemaElement {
	types := map[string]format.Type{"INT32": format.Int32, "INT64": format.Int64, "BYTE_ARRAY": format.ByteArray}
	return format.SchemaElement{
		Name:           "c",
		Type:           thrift.New(types[phys]),
		RepetitionType: thrift.New(format.Optional),
		ConvertedType:  thrift.New(conv),
	}
}

// Nanosecond statistics round outwards to microseconds, so the range
// still holds every value; milliseconds scale exactly.
func TestTimeStatistics(t *testing.T) {
	le := func(v int64) []byte {
		b := make([]byte, 8)
		for i := range b {
			b[i] = byte(v >> (8 * i))
		}
		return b
	}
	ns := columnInfo{kind: kindInt64, div: 1000, arrow: DatetimeType}
	ms := columnInfo{kind: kindInt64, mul: 1000, arrow: TimestampType}
	for _, tc := range []struct {
		ci    columnInfo
		v     int64
		isMax bool
		want  arrow.Timestamp
	}{
		{ns, 1500, false, 1}, {ns, 1500, true, 2}, {ns, 2000, true, 2},
		{ns, -1500, false, -2}, {ns, -1500, true, -1}, {ns, -2000, false, -2},
		{ms, -3, false, -3000},
	} {
		got, ok := decodeStat(tc.ci, le(tc.v), tc.isMax)
		if !ok || got != tc.want {
			t.Errorf("%d (max %v, div %d, mul %d): %v, want %d", tc.v, tc.isMax, tc.ci.div, tc.ci.mul, got, tc.want)
		}
	}
}
