package format

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// counting builds batches of consecutive integers n with text "r<n>".
func counting(t *testing.T, mem memory.Allocator, from, n int) arrow.RecordBatch {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "n", Type: arrow.PrimitiveTypes.Int64},
		{Name: "s", Type: arrow.BinaryTypes.String},
	}, nil)
	rb := array.NewRecordBuilder(mem, schema)
	defer rb.Release()
	for i := from; i < from+n; i++ {
		rb.Field(0).(*array.Int64Builder).Append(int64(i))
		rb.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("r%d", i))
	}
	return rb.NewRecordBatch()
}

// The bound keeps the first and last rows across batch boundaries, and
// the widths come from the shown rows only.
func TestTableMaxRows(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var batches []arrow.RecordBatch
	for from := 0; from < 1000; from += 7 { // batches straddle the head and the ring
		batches = append(batches, counting(t, mem, from, min(7, 1000-from)))
	}
	defer func() {
		for _, b := range batches {
			b.Release()
		}
	}()
	got := writeOpts(t, Table, Options{MaxRows: 5}, batches...)
	want := strings.Join([]string{
		"n   | s",
		"----+-----",
		"  0 | r0",
		"  1 | r1",
		"  2 | r2",
		"  … | …",
		"998 | r998",
		"999 | r999",
		"1000 rows (5 shown)", ""}, "\n")
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// Exactly the bound, and one past it.
	for _, c := range []struct {
		rows int
		want string
	}{{4, "(4 rows)"}, {5, "5 rows (4 shown)"}, {1, "(1 row)"}} {
		b := counting(t, mem, 0, c.rows)
		out := writeOpts(t, Table, Options{MaxRows: 4}, b)
		b.Release()
		if !strings.HasSuffix(out, c.want+"\n") || strings.Contains(out, "…") != (c.rows > 4) {
			t.Errorf("%d rows, bound 4:\n%s", c.rows, out)
		}
	}
	// Bound 1: the first row only.
	b := counting(t, mem, 0, 3)
	defer b.Release()
	if out := writeOpts(t, Table, Options{MaxRows: 1}, b); !strings.Contains(out, "0 | r0\n… | …\n3 rows (1 shown)\n") {
		t.Errorf("bound 1:\n%s", out)
	}
}

// Wide characters take two columns, combining marks none: the bars line
// up on a terminal.
func TestTableDisplayWidth(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	b := oneColumn(t, mem, "名前", arrow.BinaryTypes.String, func(b *array.StringBuilder) {
		b.AppendValues([]string{"漢字テキスト", "abc", "e\u0301te"}, nil)
	})
	defer b.Release()
	got := write(t, Table, b)
	want := strings.Join([]string{
		"名前",
		"------------",
		"漢字テキスト",
		"abc",
		"e\u0301te",
		"(3 rows)", ""}, "\n")
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	two := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{
		{Name: "a", Type: arrow.BinaryTypes.String}, {Name: "b", Type: arrow.BinaryTypes.String}}, nil),
		[]arrow.Array{b.Column(0), b.Column(0)}, 3)
	defer two.Release()
	for _, line := range strings.Split(write(t, Table, two), "\n")[2:5] {
		if i := strings.Index(line, " | "); widths.StringWidth(line[:i]) != 12 {
			t.Errorf("bar of %q at display column %d, want 12", line, widths.StringWidth(line[:i]))
		}
	}
}

// MaxWidth cuts text columns with an ellipsis, by display width, and
// never cuts a number.
func TestTableMaxWidth(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	long := strings.Repeat("x", 100)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "a", Type: arrow.BinaryTypes.String},
		{Name: "b", Type: arrow.BinaryTypes.String},
	}, nil)
	rb := array.NewRecordBuilder(mem, schema)
	rb.Field(0).(*array.Int64Builder).AppendValues([]int64{1234567890123, 2}, nil)
	rb.Field(1).(*array.StringBuilder).AppendValues([]string{long, "short"}, nil)
	rb.Field(2).(*array.StringBuilder).AppendValues([]string{"漢字" + long, "ok"}, nil)
	b := rb.NewRecordBatch()
	rb.Release()
	defer b.Release()
	got := writeOpts(t, Table, Options{MaxWidth: 40}, b)
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	for _, l := range lines {
		if w := widths.StringWidth(l); w > 40 {
			t.Errorf("line of width %d > 40: %q", w, l)
		}
	}
	if !strings.Contains(got, "1234567890123 | ") || !strings.Contains(got, "…") || !strings.Contains(got, "漢字") {
		t.Errorf("cut table:\n%s", got)
	}
	// The two text columns share the room: 40 - 13 - 6 = 21 columns.
	if w := widths.StringWidth(lines[2]); w < 39 {
		t.Errorf("first row %q is %d wide, want the room used", lines[2], w)
	}
	// Narrower than the numbers and minimum cuts: lines overflow, values
	// are still cut to the minimum.
	narrow := writeOpts(t, Table, Options{MaxWidth: 10}, b)
	if !strings.Contains(narrow, "xxxxx…") || strings.Contains(narrow, "xxxxxxx") {
		t.Errorf("narrow table:\n%s", narrow)
	}
	// Wide enough: nothing is cut.
	if wide := writeOpts(t, Table, Options{MaxWidth: 1000}, b); strings.Contains(wide, "…") {
		t.Errorf("wide table was cut:\n%s", wide)
	}
}
