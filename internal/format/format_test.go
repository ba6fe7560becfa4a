package format

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// sample builds a three-row batch with one column of every common type;
// the last row is all NULL.
func sample(t *testing.T, mem memory.Allocator) arrow.RecordBatch {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "i", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "big", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "price", Type: &arrow.Decimal128Type{Precision: 7, Scale: 2}, Nullable: true},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "d", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "ok", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	b.Field(0).(*array.Int32Builder).AppendValues([]int32{1, -20}, nil)
	b.Field(1).(*array.Int64Builder).AppendValues([]int64{10, 12345678901}, nil)
	b.Field(2).(*array.Decimal128Builder).AppendValues([]decimal128.Num{decimal128.FromI64(150), decimal128.FromI64(-5)}, nil)
	b.Field(3).(*array.StringBuilder).AppendValues([]string{"x", `say "hi", ok`}, nil)
	b.Field(4).(*array.Date32Builder).AppendValues([]arrow.Date32{arrow.Date32(10957), arrow.Date32(-1)}, nil)
	b.Field(5).(*array.Float64Builder).AppendValues([]float64{1.5, 1e20}, nil)
	b.Field(6).(*array.BooleanBuilder).AppendValues([]bool{true, false}, nil)
	for _, f := range b.Fields() {
		f.AppendNull()
	}
	return b.NewRecordBatch()
}

func write(t *testing.T, name Name, batches ...arrow.RecordBatch) string {
	t.Helper()
	return writeOpts(t, name, Options{}, batches...)
}

func writeOpts(t *testing.T, name Name, opts Options, batches ...arrow.RecordBatch) string {
	t.Helper()
	var out bytes.Buffer
	w, err := New(name, &out, batches[0].Schema(), opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range batches {
		if err := w.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func TestTable(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	b := sample(t, mem)
	defer b.Release()
	got := write(t, Table, b)
	// The NULL row sets column i's width to 4.
	want := strings.Join([]string{
		"i    | big         | price | name         | d          | f     | ok",
		"-----+-------------+-------+--------------+------------+-------+------",
		"   1 |          10 |  1.50 | x            | 2000-01-01 |   1.5 | true",
		" -20 | 12345678901 | -0.05 | say \"hi\", ok | 1969-12-31 | 1e+20 | false",
		"NULL |        NULL |  NULL | NULL         | NULL       |  NULL | NULL",
		"(3 rows)", ""}, "\n")
	if got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
}

func TestTableEmpty(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "count(*)", Type: arrow.PrimitiveTypes.Int64}}, nil)
	var out bytes.Buffer
	w, _ := New(Table, &out, schema, Options{})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if want := "count(*)\n--------\n(0 rows)\n"; out.String() != want {
		t.Errorf("got %q want %q", out.String(), want)
	}
}

func TestCSV(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	b := sample(t, mem)
	defer b.Release()
	got := write(t, CSV, b, b)
	row := "1,10,1.50,x,2000-01-01,1.5,true\n-20,12345678901,-0.05,\"say \"\"hi\"\", ok\",1969-12-31,1e+20,false\n,,,,,,\n"
	want := "i,big,price,name,d,f,ok\n" + row + row
	if got != want {
		t.Errorf("csv:\n%q\nwant:\n%q", got, want)
	}
	crlf := writeOpts(t, CSV, Options{CRLF: true}, b)
	if want := strings.ReplaceAll("i,big,price,name,d,f,ok\n"+row, "\n", "\r\n"); crlf != want {
		t.Errorf("csv with CRLF:\n%q\nwant:\n%q", crlf, want)
	}
}

func TestCSVEmptyStringIsNotNull(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	sb := array.NewStringBuilder(mem)
	sb.AppendValues([]string{""}, nil)
	sb.AppendNull()
	col := sb.NewArray()
	sb.Release()
	defer col.Release()
	b := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}}, nil), []arrow.Array{col}, 2)
	defer b.Release()
	if got, want := write(t, CSV, b), "s\n\"\"\n\n"; got != want {
		t.Errorf("got %q want %q", got, want)
	}
}

func TestJSON(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	b := sample(t, mem)
	defer b.Release()
	got := write(t, JSON, b)
	want := `{"i":1,"big":10,"price":"1.50","name":"x","d":"2000-01-01","f":1.5,"ok":true}
{"i":-20,"big":12345678901,"price":"-0.05","name":"say \"hi\", ok","d":"1969-12-31","f":1e+20,"ok":false}
{"i":null,"big":null,"price":null,"name":null,"d":null,"f":null,"ok":null}
`
	if got != want {
		t.Errorf("json:\n%s\nwant:\n%s", got, want)
	}
	for _, line := range strings.Split(strings.TrimSpace(got), "\n") {
		if !json.Valid([]byte(line)) {
			t.Errorf("invalid JSON line %s", line)
		}
	}
}

func TestDecimalAndFloatRendering(t *testing.T) {
	for _, c := range []struct {
		v     int64
		scale int32
		want  string
	}{{0, 2, "0.00"}, {5, 4, "0.0005"}, {-5, 4, "-0.0005"}, {123, 0, "123"}, {3333, 4, "0.3333"}, {-150, 1, "-15.0"}} {
		if got := Decimal128(decimal128.FromI64(c.v), c.scale); got != c.want {
			t.Errorf("Decimal128(%d, %d) = %s, want %s", c.v, c.scale, got, c.want)
		}
	}
	big := decimal128.New(1, 0) // 2^64, past the int64 fast path
	if got, want := Decimal128(big, 2), "184467440737095516.16"; got != want {
		t.Errorf("big decimal = %s, want %s", got, want)
	}
	for _, c := range []struct {
		f    float64
		want string
	}{{0, "0"}, {0.1, "0.1"}, {1e6, "1000000"}, {1e15, "1e+15"}, {1.25e-5, "1.25e-05"}, {-2.5, "-2.5"}} {
		if got := Float(c.f, 64); got != c.want {
			t.Errorf("Float(%v) = %s, want %s", c.f, got, c.want)
		}
	}
}

func TestParse(t *testing.T) {
	if n, err := Parse("CSV"); err != nil || n != CSV {
		t.Errorf("Parse(CSV) = %v, %v", n, err)
	}
	if _, err := Parse("xml"); err == nil {
		t.Error("Parse(xml) succeeded")
	}
}

// TestNullType covers SELECT NULL: Arrow's null type has no validity
// bitmap, yet every row is NULL.
func TestNullType(t *testing.T) {
	col := array.NewNull(2)
	defer col.Release()
	b := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "n", Type: arrow.Null, Nullable: true}}, nil), []arrow.Array{col}, 2)
	defer b.Release()
	for name, want := range map[Name]string{
		Table: "n\n----\nNULL\nNULL\n(2 rows)\n",
		CSV:   "n\n\n\n",
		JSON:  "{\"n\":null}\n{\"n\":null}\n",
	} {
		if got := write(t, name, b); got != want {
			t.Errorf("%s: got %q want %q", name, got, want)
		}
	}
}

// oneColumn builds a one-column batch; build appends its values.
func oneColumn[B array.Builder](t *testing.T, mem memory.Allocator, name string, typ arrow.DataType, build func(B)) arrow.RecordBatch {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{{Name: name, Type: typ, Nullable: true}}, nil)
	rb := array.NewRecordBuilder(mem, schema)
	defer rb.Release()
	build(rb.Field(0).(B))
	return rb.NewRecordBatch()
}

// jsonLines parses every line of out with a standard parser.
func jsonLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var rows []map[string]any
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		rows = append(rows, m)
	}
	return rows
}

// Decimals reach a standard JSON parser digit for digit: as strings.
func TestJSONDecimalsAreLossless(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	big, err := decimal128.FromString("123456789012345678901234567890.12", 32, 2)
	if err != nil {
		t.Fatal(err)
	}
	b := oneColumn(t, mem, "d", &arrow.Decimal128Type{Precision: 32, Scale: 2}, func(b *array.Decimal128Builder) {
		b.AppendValues([]decimal128.Num{big, decimal128.FromI64(10), decimal128.FromI64(-1)}, nil)
		b.AppendNull()
	})
	defer b.Release()
	out := write(t, JSON, b)
	want := []any{"123456789012345678901234567890.12", "0.10", "-0.01", nil}
	for i, row := range jsonLines(t, out) {
		if row["d"] != want[i] {
			t.Errorf("row %d: %#v, want %#v (output %s)", i, row["d"], want[i], out)
		}
	}
}

// JSON numbers cannot spell NaN or the infinities: they are strings. -0
// is 0, as MySQL prints it.
func TestJSONSpecialFloats(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	b := oneColumn(t, mem, "f", arrow.PrimitiveTypes.Float64, func(b *array.Float64Builder) {
		b.AppendValues([]float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 2.5e-7}, nil)
	})
	defer b.Release()
	got := write(t, JSON, b)
	want := `{"f":"NaN"}` + "\n" + `{"f":"Infinity"}` + "\n" + `{"f":"-Infinity"}` + "\n" + `{"f":0}` + "\n" + `{"f":2.5e-07}` + "\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	jsonLines(t, got)
}

func TestUniqueNames(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"a b c", "a b c"},
		{"a a a", "a a_2 a_3"},
		{"a a a_2", "a a_3 a_2"},
		{"a_2 a a", "a_2 a a_3"},
		{"id ID id", "id ID id_2"},
		{"x x_2 x x_2", "x x_2 x_3 x_2_2"},
	} {
		if got := strings.Join(UniqueNames(strings.Fields(c.in)), " "); got != c.want {
			t.Errorf("UniqueNames(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}

// Duplicate column names (select a.id, b.id) would give duplicate keys,
// of which parsers keep one.
func TestJSONDuplicateColumnNames(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	names := []string{"id", "id", "id_2", "n"}
	fields := make([]arrow.Field, len(names))
	cols := make([]arrow.Array, len(names))
	for i, n := range names {
		fields[i] = arrow.Field{Name: n, Type: arrow.PrimitiveTypes.Int64}
		ib := array.NewInt64Builder(mem)
		ib.Append(int64(i))
		cols[i] = ib.NewArray()
		ib.Release()
		defer cols[i].Release()
	}
	b := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, 1)
	defer b.Release()
	got := write(t, JSON, b)
	if want := `{"id":0,"id_3":1,"id_2":2,"n":3}` + "\n"; got != want {
		t.Errorf("got %s want %s", got, want)
	}
	if row := jsonLines(t, got)[0]; len(row) != 4 {
		t.Errorf("parsed %d keys, want 4", len(row))
	}
	// CSV and the table keep the names as the query wrote them: columns
	// are told apart by position there.
	if got := write(t, CSV, b); !strings.HasPrefix(got, "id,id,id_2,n\n") {
		t.Errorf("csv header %q", got)
	}
}

// Text survives a standard parser exactly; text that is not UTF-8 has no
// JSON form and is an error naming the column and row, not a silent
// replacement.
func TestJSONStrings(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	texts := []string{`quote " backslash \ slash /`, "line\nbreak\ttab\r\x00\x1b[2J", "\u2028\u2029 é 漢字 🎉", "<b>&amp;</b>", ""}
	b := oneColumn(t, mem, `we"ird`, arrow.BinaryTypes.String, func(b *array.StringBuilder) { b.AppendValues(texts, nil) })
	defer b.Release()
	out := write(t, JSON, b)
	if strings.Contains(out, "\u2028") || strings.Contains(out, "\x1b") || strings.Contains(out, `\u003c`) {
		t.Errorf("unexpected escaping in %q", out)
	}
	for i, row := range jsonLines(t, out) {
		if row[`we"ird`] != texts[i] {
			t.Errorf("row %d: %q, want %q", i, row[`we"ird`], texts[i])
		}
	}

	bad := oneColumn(t, mem, "s", arrow.BinaryTypes.String, func(b *array.StringBuilder) {
		b.AppendValues([]string{"fine", "caf\xe9"}, nil)
	})
	defer bad.Release()
	var buf bytes.Buffer
	w, _ := New(JSON, &buf, bad.Schema(), Options{})
	err := w.Write(bad)
	if err == nil || !strings.Contains(err.Error(), `column "s", row 2`) || !strings.Contains(err.Error(), "UTF-8") {
		t.Fatalf("invalid UTF-8: %v", err)
	}
}

// CSV: NULL is an empty field, the empty string a quoted one, and
// separators, quotes and line breaks are quoted; a standard reader gets
// every value back.
func TestCSVRoundTrip(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	texts := []string{"a,b", `say "hi"`, "two\nlines", "cr\rhere", "", " padded ", "NULL", "caf\xe9"}
	b := oneColumn(t, mem, "x,y", arrow.BinaryTypes.String, func(b *array.StringBuilder) {
		b.AppendValues(texts, nil)
		b.AppendNull()
	})
	defer b.Release()
	got := write(t, CSV, b)
	want := "\"x,y\"\n\"a,b\"\n\"say \"\"hi\"\"\"\n\"two\nlines\"\n\"cr\rhere\"\n\"\"\n padded \nNULL\ncaf\xe9\n\n"
	if got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	r := csv.NewReader(strings.NewReader(got))
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	// encoding/csv skips the empty line of the NULL row (so do pandas and
	// others by default); every other value comes back as written.
	if len(recs) != 1+len(texts) || recs[0][0] != "x,y" {
		t.Fatalf("read back %q", recs)
	}
	for i, text := range texts {
		if recs[1+i][0] != text {
			t.Errorf("row %d: read %q, want %q", i, recs[1+i][0], text)
		}
	}
}

// The table format escapes what would act on the terminal or break the
// alignment, and aligns on the escaped text.
func TestTableEscapesControlCharacters(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	b := oneColumn(t, mem, "s", arrow.BinaryTypes.String, func(b *array.StringBuilder) {
		b.AppendValues([]string{"\x1b[2Jgone", "a\tb\nc", "caf\xe9", "\u009bx", "é"}, nil)
	})
	defer b.Release()
	got := write(t, Table, b)
	want := strings.Join([]string{
		"s",
		"-----------",
		`\x1b[2Jgone`,
		`a\tb\nc`,
		`caf\xe9`,
		`\u009bx`,
		"é",
		"(5 rows)", ""}, "\n")
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
