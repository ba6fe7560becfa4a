package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/exec/expr"
)

// Test helpers shared by the operator tests of this package.

var (
	tInt32  = arrow.PrimitiveTypes.Int32
	tInt64  = arrow.PrimitiveTypes.Int64
	tF64    = arrow.PrimitiveTypes.Float64
	tStr    = arrow.BinaryTypes.String
	tBool   = arrow.FixedWidthTypes.Boolean
	tDate   = arrow.FixedWidthTypes.Date32
	tDec152 = &arrow.Decimal128Type{Precision: 15, Scale: 2}
)

func dec(t arrow.DataType) *arrow.Decimal128Type { return t.(*arrow.Decimal128Type) }

// opSchema builds a schema from "name:type" pairs given as fields.
func opSchema(fs ...arrow.Field) *arrow.Schema { return arrow.NewSchema(fs, nil) }

func fld(name string, t arrow.DataType) arrow.Field {
	return arrow.Field{Name: name, Type: t, Nullable: true}
}

// opBatch builds a batch from Go values (nil is NULL). Decimals are given as
// strings ("12.50").
func opBatch(t testing.TB, alloc memory.Allocator, s *arrow.Schema, rows [][]any) arrow.RecordBatch {
	if t == nil {
		t = panicTB{}
	}
	t.Helper()
	b := array.NewRecordBuilder(alloc, s)
	defer b.Release()
	for _, r := range rows {
		for c, v := range r {
			fb := b.Field(c)
			if v == nil {
				fb.AppendNull()
				continue
			}
			switch x := fb.(type) {
			case *array.Int32Builder:
				x.Append(int32(v.(int)))
			case *array.Int64Builder:
				x.Append(int64(v.(int)))
			case *array.Float64Builder:
				x.Append(v.(float64))
			case *array.StringBuilder:
				x.Append(v.(string))
			case *array.BooleanBuilder:
				x.Append(v.(bool))
			case *array.Date32Builder:
				x.Append(arrow.Date32(v.(int)))
			case *array.Decimal128Builder:
				dt := s.Field(c).Type.(*arrow.Decimal128Type)
				n, err := decimal128.FromString(v.(string), dt.Precision, dt.Scale)
				if err != nil {
					t.Fatal(err)
				}
				x.Append(n)
			default:
				t.Fatalf("opBatch: unsupported builder %T", fb)
			}
		}
	}
	return b.NewRecordBatch()
}

// opSource is a test leaf node that emits the given rows, split into
// batches of at most per rows (all rows in one batch when per is 0). Every
// task emits the same rows.
type opSource struct {
	schema *arrow.Schema
	rows   [][]any
	per    int
	t      testing.TB
}

func (s *opSource) Schema() *arrow.Schema { return s.schema }
func (s *opSource) Children() []Node      { return nil }
func (s *opSource) String() string        { return "Source" }
func (s *opSource) Open(tc *TaskContext, _ []Stream) (Stream, error) {
	per := s.per
	if per <= 0 {
		per = len(s.rows)
	}
	var bs []arrow.RecordBatch
	for i := 0; i < len(s.rows); i += per {
		bs = append(bs, opBatch(s.t, tc.Alloc, s.schema, s.rows[i:min(i+per, len(s.rows))]))
	}
	return &batchesStream{bs: bs}, nil
}

// batchesStream hands out prepared batches.
type batchesStream struct {
	bs     []arrow.RecordBatch
	closed bool
}

func (s *batchesStream) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(s.bs) == 0 {
		return nil, io.EOF
	}
	b := s.bs[0]
	s.bs = s.bs[1:]
	return b, nil
}

func (s *batchesStream) Close() {
	releaseBatches(s.bs)
	s.bs = nil
	s.closed = true
}

// src is shorthand for a source of rows in batches of 2 (so operators see
// several batches).
func src(t testing.TB, s *arrow.Schema, rows ...[]any) *opSource {
	return &opSource{schema: s, rows: rows, per: 2, t: t}
}

// openTree opens a plan bottom-up the way the scheduler does.
func openTree(tc *TaskContext, n Node) (Stream, error) {
	var ins []Stream
	for _, c := range n.Children() {
		s, err := openTree(tc, c)
		if err != nil {
			for _, in := range ins {
				in.Close()
			}
			return nil, err
		}
		ins = append(ins, s)
	}
	return n.Open(tc, ins)
}

func newTC(alloc memory.Allocator) *TaskContext {
	return &TaskContext{Alloc: alloc, Memory: NewMemoryBudget(0), Parallelism: 1}
}

// runRows runs n in one task and renders every output row as a string
// "v1|v2|..." (NULL for nulls), in output order.
func runRows(t testing.TB, n Node) []string {
	t.Helper()
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer alloc.AssertSize(t, 0)
	rows, err := runWith(newTC(alloc), n)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func runWith(tc *TaskContext, n Node) ([]string, error) {
	s, err := openTree(tc, n)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	var out []string
	for {
		b, err := s.Next(context.Background())
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if !b.Schema().Equal(n.Schema()) {
			b.Release()
			return nil, fmt.Errorf("batch schema %s differs from node schema %s", b.Schema(), n.Schema())
		}
		out = append(out, renderRows(b)...)
		b.Release()
	}
}

func renderRows(b arrow.RecordBatch) []string {
	var out []string
	for r := 0; r < int(b.NumRows()); r++ {
		parts := make([]string, b.NumCols())
		for c := range parts {
			col := b.Column(c)
			switch x := col.(type) {
			case *array.Decimal128:
				if !col.IsNull(r) {
					parts[c] = x.Value(r).ToString(x.DataType().(*arrow.Decimal128Type).Scale)
					continue
				}
			case *array.Float64:
				if !col.IsNull(r) {
					// 9 digits: results merged in another order may differ
					// in the last bits.
					parts[c] = fmt.Sprintf("%.9g", x.Value(r))
					continue
				}
			}
			if col.IsNull(r) {
				parts[c] = "NULL"
			} else {
				parts[c] = col.ValueStr(r)
			}
		}
		out = append(out, strings.Join(parts, "|"))
	}
	return out
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func wantRows(t testing.TB, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("rows differ\n got: %q\nwant: %q", got, want)
	}
}

func wantSet(t testing.TB, got []string, want ...string) {
	t.Helper()
	wantRows(t, sorted(got), sorted(want)...)
}

// fnExpr is a test-only expression computed by a Go function.
type fnExpr struct {
	typ  arrow.DataType
	name string
	fn   func(alloc memory.Allocator, b arrow.RecordBatch) arrow.Array
}

func (f *fnExpr) DataType() arrow.DataType { return f.typ }
func (f *fnExpr) Eval(ec *expr.Context, b arrow.RecordBatch) (arrow.Array, error) {
	return f.fn(ec.Alloc, b), nil
}
func (f *fnExpr) Children() []expr.Expr { return nil }
func (f *fnExpr) String() string        { return f.name }

// col is a column reference.
func col(i int, t arrow.DataType) expr.Expr { return expr.NewColumn(i, t, fmt.Sprintf("c%d", i)) }

// cmpExpr compares two int-like columns (a op b) with SQL NULL semantics.
func cmpExpr(a, b int, op string) expr.Expr {
	return &fnExpr{typ: tBool, name: fmt.Sprintf("#%d %s #%d", a, op, b), fn: func(alloc memory.Allocator, batch arrow.RecordBatch) arrow.Array {
		x, y := batch.Column(a), batch.Column(b)
		bb := array.NewBooleanBuilder(alloc)
		defer bb.Release()
		xi, yi := intKeys(x, nil), intKeys(y, nil)
		for i := 0; i < int(batch.NumRows()); i++ {
			if x.IsNull(i) || y.IsNull(i) {
				bb.AppendNull()
				continue
			}
			switch op {
			case "<":
				bb.Append(xi[i] < yi[i])
			case ">":
				bb.Append(xi[i] > yi[i])
			case "=":
				bb.Append(xi[i] == yi[i])
			case "<>":
				bb.Append(xi[i] != yi[i])
			}
		}
		return bb.NewArray()
	}}
}

// litExpr is a constant int64 (nil = NULL) column.
func litExpr(typ arrow.DataType, v any) expr.Expr {
	return &fnExpr{typ: typ, name: fmt.Sprint(v), fn: func(alloc memory.Allocator, batch arrow.RecordBatch) arrow.Array {
		n := int(batch.NumRows())
		rows := make([][]any, n)
		for i := range rows {
			rows[i] = []any{v}
		}
		b := opBatch(nil, alloc, opSchema(fld("x", typ)), rows)
		defer b.Release()
		c := b.Column(0)
		c.Retain()
		return c
	}}
}

func TestKeyEncoderDistinguishesNullsAndValues(t *testing.T) {
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer alloc.AssertSize(t, 0)
	s := opSchema(fld("a", tInt32), fld("b", tStr))
	b := opBatch(t, alloc, s, [][]any{{1, "x"}, {1, "x"}, {nil, "x"}, {1, nil}, {1, ""}, {nil, nil}, {nil, nil}})
	defer b.Release()
	var e keyEncoder
	if err := e.encode(b.Columns(), int(b.NumRows())); err != nil {
		t.Fatal(err)
	}
	k := func(i int) string { return string(e.key(i)) }
	if k(0) != k(1) || k(5) != k(6) {
		t.Fatal("equal rows must encode equally")
	}
	seen := map[string]bool{}
	for _, i := range []int{0, 2, 3, 4, 5} {
		if seen[k(i)] {
			t.Fatalf("row %d collides", i)
		}
		seen[k(i)] = true
	}
	if e.hasNull[0] || !e.hasNull[2] || !e.hasNull[3] || e.hasNull[4] {
		t.Fatalf("hasNull %v", e.hasNull)
	}
}

// panicTB lets test expressions build arrays without a *testing.T.
type panicTB struct{ testing.TB }

func (panicTB) Helper()                   {}
func (panicTB) Fatal(a ...any)            { panic(fmt.Sprint(a...)) }
func (panicTB) Fatalf(f string, a ...any) { panic(fmt.Sprintf(f, a...)) }
