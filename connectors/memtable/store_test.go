package memtable

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/connectors/hive"
)

func ints(t *testing.T, mem memory.Allocator, def *Def, vals ...int64) arrow.RecordBatch {
	t.Helper()
	b := array.NewInt64Builder(mem)
	defer b.Release()
	b.AppendValues(vals, nil)
	a := b.NewArray()
	defer a.Release()
	return array.NewRecordBatch(def.Schema(), []arrow.Array{a}, int64(len(vals)))
}

// TestWriteVersions: one-row appends top up the last chunk instead of
// making a chunk each; a view taken before a write keeps its rows; a
// duplicate key fails the write and leaves the table and its keys as
// they were; the caller's batches are never kept.
func TestWriteVersions(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	s := New("")
	def := &Def{Name: "T", Columns: []Column{{Name: "k", Type: arrow.PrimitiveTypes.Int64, NotNull: true}}, Keys: []Key{{Name: "PRIMARY", Columns: []int{0}, Primary: true}}}
	if _, err := s.Create(def, false); err != nil {
		t.Fatal(err)
	}
	for i := int64(0); i < 100; i++ {
		b := ints(t, mem, def, i)
		if _, err := s.Write("t", []arrow.RecordBatch{b}, false); err != nil {
			t.Fatal(err)
		}
		b.Release()
	}
	before := s.MemoryTables()["t"]
	if n := len(before.Partitions[0].Files); n != 1 || before.NumRows() != 100 {
		t.Fatalf("100 one-row INSERTs: %d chunks, %d rows; want 1 chunk of 100", n, before.NumRows())
	}
	dup := ints(t, mem, def, 1000, 7)
	defer dup.Release()
	if _, err := s.Write("t", []arrow.RecordBatch{dup}, false); err == nil || !strings.Contains(err.Error(), "duplicate entry '7' for key 'PRIMARY'") {
		t.Fatalf("a duplicate key: %v", err)
	}
	// 1000 did not stay in the key set: writing it alone succeeds.
	ok := ints(t, mem, def, 1000)
	defer ok.Release()
	if _, err := s.Write("t", []arrow.RecordBatch{ok}, false); err != nil {
		t.Fatalf("after the failed write: %v", err)
	}
	if s.MemoryTables()["t"].NumRows() != 101 || before.NumRows() != 100 {
		t.Error("the view taken before the write changed, or the write was lost")
	}
	// REPLACE starts the keys afresh.
	if _, err := s.Write("t", []arrow.RecordBatch{dup}, true); err != nil {
		t.Fatalf("REPLACE: %v", err)
	}
	if err := s.Drop("T"); err != nil {
		t.Fatal(err)
	}
	if len(s.MemoryTables()) != 0 || before.NumRows() != 100 {
		t.Error("DROP left the table, or emptied an earlier view")
	}
	r, err := hive.NewMemoryTable("x", def.Schema(), before.Partitions[0].Files, def).OpenFile(before.Partitions[0], before.Partitions[0].Files[0], hive.ScanOptions{Columns: []int{0}})
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
}

// TestCheckConversions: what the column definitions do to values.
func TestCheckConversions(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	def := &Def{Name: "c", Columns: []Column{
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, FracDigits: 1},
		{Name: "f", Type: arrow.PrimitiveTypes.Float64, Float32: true},
	}}
	tb := array.NewTimestampBuilder(mem, def.Columns[0].Type.(*arrow.TimestampType))
	tb.AppendValues([]arrow.Timestamp{1_050_000, 1_049_999, -1_050_000}, nil)
	fb := array.NewFloat64Builder(mem)
	fb.AppendValues([]float64{0.1, 1e300, 2}, nil)
	ta, fa := tb.NewArray(), fb.NewArray()
	tb.Release()
	fb.Release()
	b := array.NewRecordBatch(def.Schema(), []arrow.Array{ta, fa}, 3)
	ta.Release()
	fa.Release()
	defer b.Release()
	if _, err := check(def, b, 0); err == nil || !strings.Contains(err.Error(), "out of range value 1e+300 for column 'f'") {
		t.Errorf("1e300 into FLOAT: %v", err)
	}
	def.Columns[1].Float32 = false
	out, err := check(def, b, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	got := out.Column(0).(*array.Timestamp)
	for i, want := range []arrow.Timestamp{1_100_000, 1_000_000, -1_000_000} {
		if got.Value(i) != want {
			t.Errorf("row %d rounded to one digit: %d, want %d", i, got.Value(i), want)
		}
	}
}
