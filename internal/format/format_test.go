package format

import (
	"bytes"
	"encoding/json"
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
	var out bytes.Buffer
	w, err := New(name, &out, batches[0].Schema())
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
	w, _ := New(Table, &out, schema)
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
	row := "1,10,1.50,x,2000-01-01,1.5,true\r\n-20,12345678901,-0.05,\"say \"\"hi\"\", ok\",1969-12-31,1e+20,false\r\n,,,,,,\r\n"
	want := "i,big,price,name,d,f,ok\r\n" + row + row
	if got != want {
		t.Errorf("csv:\n%q\nwant:\n%q", got, want)
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
	if got, want := write(t, CSV, b), "s\r\n\"\"\r\n\r\n"; got != want {
		t.Errorf("got %q want %q", got, want)
	}
}

func TestJSON(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	b := sample(t, mem)
	defer b.Release()
	got := write(t, JSON, b)
	want := `{"i":1,"big":10,"price":1.50,"name":"x","d":"2000-01-01","f":1.5,"ok":true}
{"i":-20,"big":12345678901,"price":-0.05,"name":"say \"hi\", ok","d":"1969-12-31","f":1e+20,"ok":false}
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
		CSV:   "n\r\n\r\n\r\n",
		JSON:  "{\"n\":null}\n{\"n\":null}\n",
	} {
		if got := write(t, name, b); got != want {
			t.Errorf("%s: got %q want %q", name, got, want)
		}
	}
}
