package sltcorpus

import (
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

const script = `hash-threshold 8

statement ok
CREATE TABLE t1(a INTEGER, b VARCHAR(10))

statement ok
INSERT INTO t1(b,a) VALUES('x',-1),('',NULL)

skipif mysql
query I nosort
SELECT 1
----
2

query IT rowsort label-1
SELECT a, b FROM t1
----
-1
x
NULL
(empty)

query I valuesort
SELECT a FROM t1
----
3 values hashing to 0123

halt

query I nosort
SELECT 1
----
1
`

func TestParse(t *testing.T) {
	s, err := Parse("t.test", strings.NewReader(script))
	if err != nil {
		t.Fatal(err)
	}
	kinds := []Kind{}
	for _, r := range s.Records {
		kinds = append(kinds, r.Kind)
	}
	want := []Kind{KindHashThreshold, KindStatement, KindStatement, KindQuery, KindQuery, KindQuery, KindHalt, KindQuery}
	if !slices.Equal(kinds, want) {
		t.Fatalf("kinds %v, want %v", kinds, want)
	}
	if s.Records[3].Applies("mysql") || !s.Records[3].Applies("sqlite") {
		t.Error("skipif mysql must skip the record for mysql only")
	}
	q := s.Records[4]
	if q.Sort != RowSort || q.Label != "label-1" || q.Types != "IT" || len(q.Values) != 4 {
		t.Errorf("query parsed as %+v", q)
	}
	h := s.Records[5]
	if !h.Hashed || h.Count != 3 || h.Hash != "0123" || h.Sort != ValueSort {
		t.Errorf("hashed query parsed as %+v", h)
	}
}

func TestRender(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	dt := &arrow.Decimal128Type{Precision: 10, Scale: 4}
	db := array.NewDecimal128Builder(mem, dt)
	defer db.Release()
	db.Append(decimal128.FromI64(1224000)) // 122.4000
	db.Append(decimal128.FromI64(-125000)) // -12.5000
	db.AppendNull()
	sb := array.NewStringBuilder(mem)
	defer sb.Release()
	sb.AppendValues([]string{"", "a\tb", "z"}, nil)
	fb := array.NewFloat64Builder(mem)
	defer fb.Release()
	fb.AppendValues([]float64{1.23456, -0.0001, 7}, nil)
	d, s, f := db.NewArray(), sb.NewArray(), fb.NewArray()
	defer d.Release()
	defer s.Release()
	defer f.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "d", Type: dt}, {Name: "s", Type: arrow.BinaryTypes.String}, {Name: "f", Type: arrow.PrimitiveTypes.Float64}}, nil)
	rec := array.NewRecordBatch(schema, []arrow.Array{d, s, f}, 3)
	defer rec.Release()
	rows, err := Rows("ITR", []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	// %.3f as C prints it: a tiny negative value is -0.000.
	want := [][]string{{"122", "(empty)", "1.235"}, {"-12", "a@b", "-0.000"}, {"NULL", "z", "7.000"}}
	for i := range want {
		if !slices.Equal(rows[i], want[i]) {
			t.Errorf("row %d: %v, want %v", i, rows[i], want[i])
		}
	}
	vals := Values(ValueSort, rows)
	if vals[0] != "(empty)" || len(vals) != 9 {
		t.Errorf("valuesort: %v", vals)
	}
	// The corpus's hash of the values 1, 2, 3 (each followed by "\n").
	if h := Hash([]string{"1", "2", "3"}); h != "c0710d6b4f15dfa88f600b0e6b624077" {
		t.Errorf("hash %s", h)
	}
	r := &Record{Hashed: true, Count: 3, Hash: Hash([]string{"1", "2", "3"})}
	if err := r.Check([]string{"1", "2", "3"}); err != nil {
		t.Error(err)
	}
	if err := r.Check([]string{"1", "3", "2"}); err == nil {
		t.Error("a different order must not hash the same")
	}
}

func TestAtoi(t *testing.T) {
	for in, want := range map[string]int64{"122.4000": 122, "-12.5": -12, "abc": 0, " 7x": 7, "+3": 3} {
		if got := atoi(in); got != want {
			t.Errorf("atoi(%q) = %d, want %d", in, got, want)
		}
	}
}
