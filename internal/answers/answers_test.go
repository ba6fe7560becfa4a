package answers

import (
	"bytes"
	"errors"
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func dec(s string, scale int) Value {
	u, err := parseDecimal(s, scale)
	if err != nil {
		panic(err)
	}
	return Value{Dec: u}
}

func TestWriteReadRoundTrip(t *testing.T) {
	a := &Answer{
		Columns: []Column{
			{"name, with comma: and colon", "string"}, {"n", "int64"}, {"f", "float64"},
			{"d", "decimal(7,2)"}, {"day", "date"}, {"b", "bool"},
		},
		Ordered:   true,
		OrderKeys: []int{1, 0},
		Rows: [][]Value{
			{String("a\tb\nc\\d"), Int(-5), Float(0.1), dec("-0.05", 2), Date(0), Bool(true)},
			{String(""), Null(), Float(math.Inf(-1)), dec("12345.60", 2), Date(10957), Bool(false)},
			{Null(), Int(math.MaxInt64), Float(1e300), Null(), Null(), Null()},
			{String(`\N`), Int(0), Float(math.NaN()), dec("0", 2), Date(-1), Bool(true)},
		},
	}
	var buf bytes.Buffer
	if err := a.Write(&buf); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	for _, want := range []string{"# ordered: true\n", "# order-keys: 1,0\n", "\t-0.05\t1970-01-01\ttrue\n",
		"\\N\t\\N\t\\N\n", "\t12345.60\t2000-01-01\t", `a\tb\nc\\d`, "\n\\\\N\t0\t"} {
		if !strings.Contains(text, want) {
			t.Errorf("written text lacks %q:\n%s", want, text)
		}
	}
	b, err := Read(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Columns) != 6 || b.Columns[0].Name != a.Columns[0].Name || b.Columns[3].Type != "decimal(7,2)" {
		t.Fatalf("columns: %+v", b.Columns)
	}
	if !b.Ordered || len(b.OrderKeys) != 2 || b.OrderKeys[0] != 1 {
		t.Fatalf("ordered %v keys %v", b.Ordered, b.OrderKeys)
	}
	if !b.Rows[1][1].Null || b.Rows[1][0].Null || b.Rows[1][0].Str != "" {
		t.Error("NULL and empty string not told apart")
	}
	if b.Rows[3][0].Str != `\N` {
		t.Errorf("string \\N read back as %+v", b.Rows[3][0])
	}
	if err := Compare(a, b); err != nil {
		t.Errorf("round trip differs: %v", err)
	}
	var again bytes.Buffer
	if err := b.Write(&again); err != nil {
		t.Fatal(err)
	}
	if again.String() != text {
		t.Errorf("rewrite differs:\n%s\nvs\n%s", again.String(), text)
	}
}

func TestReadErrors(t *testing.T) {
	for name, text := range map[string]string{
		"no header":      "1\t2\n",
		"bad type":       "# columns:\ta:int32\n",
		"field count":    "# columns:\ta:int64\tb:int64\n1\n",
		"bad int":        "# columns:\ta:int64\nx\n",
		"decimal scale":  "# columns:\ta:decimal(5,1)\n1.25\n",
		"bad escape":     "# columns:\ta:string\na\\qb\n",
		"row count":      "# columns:\ta:int64\n# rows: 2\n1\n",
		"order key":      "# columns:\ta:int64\n# order-keys: 3\n1\n",
		"bad date":       "# columns:\ta:date\n2001-13-01\n",
		"bad bool":       "# columns:\ta:bool\nyes\n",
		"column no type": "# columns:\tabc\n",
	} {
		if _, err := Read(strings.NewReader(text)); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: err = %v, want ErrFormat", name, err)
		}
	}
}

func TestFromArrow(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "i8", Type: arrow.PrimitiveTypes.Int8, Nullable: true},
		{Name: "i32", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "f32", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: "d", Type: &arrow.Decimal128Type{Precision: 7, Scale: 2}, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "day", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	}, nil)
	bld := array.NewRecordBuilder(mem, schema)
	defer bld.Release()
	valid := []bool{true, false}
	bld.Field(0).(*array.Int8Builder).AppendValues([]int8{-3, 0}, valid)
	bld.Field(1).(*array.Int32Builder).AppendValues([]int32{7, 0}, valid)
	bld.Field(2).(*array.Float32Builder).AppendValues([]float32{0.5, 0}, valid)
	bld.Field(3).(*array.Decimal128Builder).AppendValues([]decimal128.Num{decimal128.FromI64(-1234), {}}, valid)
	bld.Field(4).(*array.StringBuilder).AppendValues([]string{"", ""}, valid)
	bld.Field(5).(*array.Date32Builder).AppendValues([]arrow.Date32{10957, 0}, valid)
	bld.Field(6).(*array.BooleanBuilder).AppendValues([]bool{true, false}, valid)
	rec := bld.NewRecordBatch()
	defer rec.Release()

	got, err := FromArrow(schema, []arrow.RecordBatch{rec, rec})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Rows) != 4 {
		t.Fatalf("%d rows", len(got.Rows))
	}
	var buf bytes.Buffer
	if err := got.Write(&buf); err != nil {
		t.Fatal(err)
	}
	want := "# columns:\ti8:int64\ti32:int64\tf32:float64\td:decimal(7,2)\ts:string\tday:date\tb:bool\n" +
		"# ordered: false\n# order-keys: \n# rows: 4\n" +
		"-3\t7\t0.5\t-12.34\t\t2000-01-01\ttrue\n" +
		"\\N\t\\N\t\\N\t\\N\t\\N\t\\N\t\\N\n"
	want += strings.Join(strings.SplitN(want, "\n", 5)[4:], "")
	if buf.String() != want {
		t.Errorf("got\n%q\nwant\n%q", buf.String(), want)
	}

	bad := arrow.NewSchema([]arrow.Field{{Name: "t", Type: arrow.FixedWidthTypes.Timestamp_us}}, nil)
	if _, err := FromArrow(bad, nil); err == nil {
		t.Error("timestamp column accepted")
	}
}

// TestFromArrowOwnsStrings: an answer kept after its batches are released
// must not change when their buffers are reused (the engine's scan
// buffers are recycled), so strings are copied out, not aliased.
func TestFromArrowOwnsStrings(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String}}, nil)
	bld := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer bld.Release()
	bld.Field(0).(*array.StringBuilder).AppendValues([]string{"pq", "r"}, nil)
	rec := bld.NewRecordBatch()
	defer rec.Release()
	got, err := FromArrow(schema, []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	buf := rec.Column(0).(*array.String).ValueBytes()
	for i := range buf {
		buf[i] = 'x' // what a recycled buffer's next user might write
	}
	if got.Rows[0][0].Str != "pq" || got.Rows[1][0].Str != "r" {
		t.Errorf("the answer changed with the batch's buffer: %q, %q", got.Rows[0][0].Str, got.Rows[1][0].Str)
	}
}

func ans(types string, ordered bool, keys []int, rows ...[]Value) *Answer {
	a := &Answer{Ordered: ordered, OrderKeys: keys, Rows: rows}
	for i, t := range strings.Split(types, " ") {
		a.Columns = append(a.Columns, Column{Name: string(rune('a' + i)), Type: t})
	}
	return a
}

func row(v ...Value) []Value { return v }

func TestCompare(t *testing.T) {
	big1 := new(big.Int).Lsh(big.NewInt(1), 80)
	cases := []struct {
		name      string
		want, got *Answer
		errHas    string // "" means equal
	}{
		{"equal ints", ans("int64", false, nil, row(Int(1))), ans("int64", false, nil, row(Int(1))), ""},
		{"column count", ans("int64", false, nil, row(Int(1))), ans("int64 int64", false, nil, row(Int(1), Int(2))), "2 columns, want 1"},
		{"incompatible types", ans("string", false, nil, row(String("1"))), ans("int64", false, nil, row(Int(1))), "column 1"},
		{"row count", ans("int64", false, nil, row(Int(1)), row(Int(2))), ans("int64", false, nil, row(Int(1))), "1 rows, want 2"},
		{"multiset ignores order", ans("int64", false, nil, row(Int(1)), row(Int(2))), ans("int64", false, nil, row(Int(2)), row(Int(1))), ""},
		{"multiset counts duplicates", ans("int64", false, nil, row(Int(1)), row(Int(1))), ans("int64", false, nil, row(Int(1)), row(Int(2))), "missing [1]"},
		{"ordered in order", ans("int64", true, []int{0}, row(Int(1)), row(Int(2))), ans("int64", true, nil, row(Int(1)), row(Int(2))), ""},
		{"ordered out of order", ans("int64", true, []int{0}, row(Int(1)), row(Int(2))), ans("int64", false, nil, row(Int(2)), row(Int(1))), "row 1, column 1 (a): want 1, got 2"},
		{"ordered ties are a multiset", ans("int64 string", true, []int{0},
			row(Int(1), String("x")), row(Int(1), String("y")), row(Int(2), String("z"))),
			ans("int64 string", false, nil, row(Int(1), String("y")), row(Int(1), String("x")), row(Int(2), String("z"))), ""},
		{"ordered ties do not cross runs", ans("int64 string", true, []int{0},
			row(Int(1), String("x")), row(Int(2), String("y"))),
			ans("int64 string", false, nil, row(Int(2), String("y")), row(Int(1), String("x"))), "row 1"},
		{"ordered no keys is one run", ans("int64", true, nil, row(Int(1)), row(Int(2))), ans("int64", false, nil, row(Int(2)), row(Int(1))), ""},
		{"tie run content differs", ans("int64 string", true, []int{0},
			row(Int(1), String("x")), row(Int(1), String("y"))),
			ans("int64 string", false, nil, row(Int(1), String("y")), row(Int(1), String("q"))), "rows 1..2 (tied on the ORDER BY keys): missing [1 | x]"},
		{"null vs null", ans("string", false, nil, row(Null())), ans("string", false, nil, row(Null())), ""},
		{"all-NULL columns of other types", ans("int64", false, nil, row(Null()), row(Null())), ans("string", false, nil, row(Null()), row(Null())), ""},
		{"a NULL column against values of another type", ans("int64", false, nil, row(Null())), ans("string", false, nil, row(String("x"))), "column 1"},
		{"no rows keep the type check", ans("int64", false, nil), ans("string", false, nil), "column 1"},
		{"null vs empty", ans("string", false, nil, row(Null())), ans("string", false, nil, row(String(""))), "missing [\\N]"},
		{"decimal exact", ans("decimal(7,2)", false, nil, row(dec("1.10", 2))), ans("decimal(9,3)", false, nil, row(dec("1.100", 3))), ""},
		{"decimal exact fails", ans("decimal(7,2)", false, nil, row(dec("1.10", 2))), ans("decimal(9,3)", false, nil, row(dec("1.101", 3))), "unexpected [1.101]"},
		{"decimal big", ans("decimal(38,0)", false, nil, row(Decimal(big1))), ans("decimal(38,0)", false, nil, row(Decimal(big1))), ""},
		{"float vs decimal within half unit", ans("float64", false, nil, row(Float(2.0049))), ans("decimal(7,2)", false, nil, row(dec("2.00", 2))), ""},
		{"float vs decimal beyond half unit", ans("float64", false, nil, row(Float(2.0051))), ans("decimal(7,2)", false, nil, row(dec("2.00", 2))), "missing [2.0051]"},
		{"decimal vs float", ans("decimal(7,4)", false, nil, row(dec("0.3333", 4))), ans("float64", false, nil, row(Float(1.0/3))), ""},
		{"float vs float relative", ans("float64", false, nil, row(Float(1e12))), ans("float64", false, nil, row(Float(1e12+1e2))), ""},
		{"float vs float too far", ans("float64", false, nil, row(Float(1e12))), ans("float64", false, nil, row(Float(1e12+1e4))), "missing"},
		{"float NaN", ans("float64", false, nil, row(Float(math.NaN()))), ans("float64", false, nil, row(Float(math.NaN()))), ""},
		{"int vs decimal scale 0", ans("int64", false, nil, row(Int(42))), ans("decimal(38,0)", false, nil, row(dec("42", 0))), ""},
		{"int vs decimal differs", ans("int64", false, nil, row(Int(42))), ans("decimal(38,0)", false, nil, row(dec("43", 0))), "missing [42]"},
		{"int vs float", ans("int64", false, nil, row(Int(3))), ans("float64", false, nil, row(Float(3))), ""},
		{"dates", ans("date", false, nil, row(Date(5))), ans("date", false, nil, row(Date(6))), "missing [1970-01-06]"},
		{"bools", ans("bool", false, nil, row(Bool(true))), ans("bool", false, nil, row(Bool(true))), ""},
		{"strings differ", ans("string", true, []int{0}, row(String("a"))), ans("string", false, nil, row(String("b"))), "want a, got b"},
		{"near-equal floats sort apart", ans("float64 string", false, nil,
			row(Float(1.0), String("b")), row(Float(1.0+1e-12), String("a"))),
			ans("float64 string", false, nil, row(Float(1.0+1e-12), String("b")), row(Float(1.0), String("a"))), ""},
	}
	for _, tc := range cases {
		err := Compare(tc.want, tc.got)
		switch {
		case tc.errHas == "" && err != nil:
			t.Errorf("%s: unexpected difference: %v", tc.name, err)
		case tc.errHas != "" && err == nil:
			t.Errorf("%s: no difference reported", tc.name)
		case tc.errHas != "" && (!errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), tc.errHas)):
			t.Errorf("%s: error %q lacks %q", tc.name, err, tc.errHas)
		}
	}
}

func TestCompareCapsLines(t *testing.T) {
	var w, g [][]Value
	for i := range 50 {
		w = append(w, row(Int(int64(i))))
		g = append(g, row(Int(int64(i+100))))
	}
	err := Compare(ans("int64", true, []int{0}, w...), ans("int64", false, nil, g...))
	if err == nil {
		t.Fatal("no difference")
	}
	if n := strings.Count(err.Error(), "\n"); n > maxLines+1 {
		t.Errorf("%d lines:\n%v", n, err)
	}
	if !strings.Contains(err.Error(), "and 40 more") {
		t.Errorf("no overflow note: %v", err)
	}
}
