package exec

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/exec/expr"
)

// TestConjunctStepsMatchWholeCondition filters random batches (NULLs,
// a sliced batch whose boolean column starts mid-byte, lengths that are
// no multiple of 8) by conjunctions of range tests, ORs, IS NULL and a
// boolean column, step by step and as one condition, and wants the same
// rows; nothing is left allocated.
func TestConjunctStepsMatchWholeCondition(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewSource(7))
	const n = 1003
	ab, bb, fb := array.NewInt64Builder(mem), array.NewInt64Builder(mem), array.NewBooleanBuilder(mem)
	for i := 0; i < n; i++ {
		if rng.Intn(13) == 0 {
			ab.AppendNull()
		} else {
			ab.Append(int64(rng.Intn(100)))
		}
		if rng.Intn(17) == 0 {
			bb.AppendNull()
		} else {
			bb.Append(int64(rng.Intn(1000)))
		}
		if rng.Intn(11) == 0 {
			fb.AppendNull()
		} else {
			fb.Append(rng.Intn(3) > 0)
		}
	}
	cols := []arrow.Array{ab.NewArray(), bb.NewArray(), fb.NewArray()}
	ab.Release()
	bb.Release()
	fb.Release()
	schema := opSchema(fld("a", tInt64), fld("b", tInt64), fld("f", tBool))
	whole := array.NewRecordBatch(schema, cols, n)
	for _, c := range cols {
		c.Release()
	}
	defer whole.Release()
	a, b, f := col(0, tInt64), col(1, tInt64), col(2, tBool)
	mk := func(fn string, args ...expr.Expr) expr.Expr {
		e, err := expr.NewCall(fn, args...)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	lit := func(v int64) expr.Expr { return expr.NewLiteral(v, tInt64) }
	between := func(x expr.Expr, lo, hi int64) expr.Expr {
		return mk("and", mk(">=", x, lit(lo)), mk("<=", x, lit(hi)))
	}
	conds := []expr.Expr{
		mk("and", between(a, 0, 5), mk("or", between(b, 100, 200), between(b, 500, 520), mk("=", a, lit(3)))),
		mk("and", mk(">=", a, lit(0)), mk("<", b, lit(990)), mk("<>", a, lit(50))), // keeps most rows
		mk("and", mk("<", a, lit(0)), mk(">", b, lit(3))),                          // keeps none
		mk("and", f, mk("<", a, lit(40)), mk("isnull", b)),
		mk("and", mk("or", f, mk(">", b, lit(500))), between(a, 10, 90), mk("not", f)),
		mk("and", mk(">", b, lit(-1)), mk("isnotnull", a), mk("<=", a, lit(99))),
	}
	ec := &expr.Context{Alloc: mem}
	for _, batch := range []arrow.RecordBatch{whole, whole.NewSlice(3, n-5), whole.NewSlice(0, 6)} {
		for i, c := range conds {
			st := newConjunctSteps(c, schema)
			if st == nil {
				t.Fatalf("cond %d: no steps for %s", i, c)
			}
			got, err := st.filter(ec, c, batch)
			if err != nil {
				t.Fatal(err)
			}
			want, err := filterBatch(ec, c, batch)
			if err != nil {
				t.Fatal(err)
			}
			if g, w := batchRows(got), batchRows(want); fmt.Sprint(g) != fmt.Sprint(w) {
				t.Errorf("cond %d (%s) over %d rows: steps kept %d rows, the whole condition %d\n%v\n%v", i, c, batch.NumRows(), len(g), len(w), g, w)
			}
			for _, r := range []arrow.RecordBatch{got, want} {
				if r != nil {
					r.Release()
				}
			}
		}
		if batch != whole {
			batch.Release()
		}
	}
}

// TestConjunctStepsKeepErrors: a conjunct that may fail after the first
// leaves the condition to the lazy AND (no steps); one that fails first
// fails the same way step by step.
func TestConjunctStepsKeepErrors(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := opSchema(fld("a", tInt64))
	ib := array.NewInt64Builder(mem)
	for _, v := range []int64{-3, 5, -1, 7, 0} {
		ib.Append(v)
	}
	arr := ib.NewArray()
	ib.Release()
	batch := array.NewRecordBatch(schema, []arrow.Array{arr}, 5)
	arr.Release()
	defer batch.Release()
	a := col(0, tInt64)
	mk := func(fn string, args ...expr.Expr) expr.Expr {
		e, err := expr.NewCall(fn, args...)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	overflow := mk(">", mk("+", a, expr.NewLiteral(int64(math.MaxInt64), tInt64)), expr.NewLiteral(int64(0), tInt64))
	negative := mk("<", a, expr.NewLiteral(int64(0), tInt64))
	if st := newConjunctSteps(mk("and", negative, overflow), schema); st != nil {
		t.Fatalf("steps for a conjunct that may fail after the first: %v", st.conds)
	}
	ec := &expr.Context{Alloc: mem}
	c := mk("and", overflow, negative)
	st := newConjunctSteps(c, schema)
	if st == nil {
		t.Fatal("no steps when only the first conjunct may fail")
	}
	if st.conds[0].String() != overflow.String() {
		t.Fatalf("the conjunct that may fail moved from first: %v", st.conds)
	}
	_, werr := filterBatch(ec, c, batch)
	got, err := st.filter(ec, c, batch)
	if got != nil {
		got.Release()
	}
	if werr == nil || err == nil || err.Error() != werr.Error() {
		t.Fatalf("steps: %v; whole condition: %v", err, werr)
	}
}

// batchRows renders a batch's rows (nil: none).
func batchRows(b arrow.RecordBatch) []string {
	if b == nil {
		return nil
	}
	out := make([]string, b.NumRows())
	for r := range out {
		s := ""
		for _, c := range b.Columns() {
			s += c.ValueStr(r) + "|"
		}
		out[r] = s
	}
	return out
}

// BenchmarkFilterQ28 filters 8,192 rows by q28's condition shape (a range
// of a quantity keeping one row in twenty, then an OR of three ranges),
// step by step and as one condition.
func BenchmarkFilterQ28(b *testing.B) {
	mem := memory.NewGoAllocator()
	rng := rand.New(rand.NewSource(1))
	const n = 8192
	qb, pb, cb, wb := array.NewInt64Builder(mem), array.NewInt64Builder(mem), array.NewInt64Builder(mem), array.NewInt64Builder(mem)
	for i := 0; i < n; i++ {
		qb.Append(int64(rng.Intn(100) + 1))
		pb.Append(int64(rng.Intn(20000)))
		cb.Append(int64(rng.Intn(100000)))
		wb.Append(int64(rng.Intn(10000)))
	}
	var cols []arrow.Array
	for _, bl := range []*array.Int64Builder{qb, pb, cb, wb} {
		cols = append(cols, bl.NewArray())
		bl.Release()
	}
	schema := opSchema(fld("q", tInt64), fld("p", tInt64), fld("c", tInt64), fld("w", tInt64))
	batch := array.NewRecordBatch(schema, cols, n)
	defer batch.Release()
	mk := func(fn string, args ...expr.Expr) expr.Expr {
		e, err := expr.NewCall(fn, args...)
		if err != nil {
			b.Fatal(err)
		}
		return e
	}
	lit := func(v int64) expr.Expr { return expr.NewLiteral(v, tInt64) }
	between := func(x expr.Expr, lo, hi int64) expr.Expr {
		return mk("and", mk(">=", x, lit(lo)), mk("<=", x, lit(hi)))
	}
	cond := mk("and", between(col(0, tInt64), 0, 5), mk("or", between(col(1, tInt64), 1100, 2100),
		between(col(2, tInt64), 46000, 146000), between(col(3, tInt64), 1400, 3400)))
	ec := &expr.Context{Alloc: mem}
	for _, steps := range []bool{false, true} {
		b.Run(fmt.Sprintf("steps=%v", steps), func(b *testing.B) {
			st := newConjunctSteps(cond, schema)
			for i := 0; i < b.N; i++ {
				var out arrow.RecordBatch
				var err error
				if steps {
					out, err = st.filter(ec, cond, batch)
				} else {
					out, err = filterBatch(ec, cond, batch)
				}
				if err != nil {
					b.Fatal(err)
				}
				if out != nil {
					out.Release()
				}
			}
		})
	}
}
