package expr

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// The eager CASE (when it does not fail) gives what the lazy
// evaluation gives, row for row, for one and several value branches, NULL
// literal branches on either side, NULL and always-false conditions, every
// result type, and batches that are slices of bigger ones (offsets that
// are not multiples of 8).
func TestCaseEagerMatchesLazy(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const n = 300
	var ks, ss, ds []any
	var bs []any
	for i := 0; i < n; i++ {
		maybe := func(v any) any {
			if r.IntN(7) == 0 {
				return nil
			}
			return v
		}
		ks = append(ks, maybe(int64(r.IntN(10)-3)))
		ss = append(ss, maybe([]string{"Sunday", "Monday", "", "Friday"}[r.IntN(4)]))
		ds = append(ds, maybe(arrow.Date32(r.IntN(1000))))
		bs = append(bs, maybe(r.IntN(2) == 0))
	}
	full := batchOf(t, ks, ss, ds, bs)
	k, s, d, b := col(full, 0), col(full, 1), col(full, 2), col(full, 3)
	dk := cast(t, k, decType(22, 2))
	isSun := call(t, "=", s, str("Sunday"))
	pos := call(t, ">", k, i64(0))
	cases := map[string]Expr{
		"then column else null":      call(t, "case", isSun, dk, Null(decType(22, 2))),
		"then null else column":      call(t, "case", isSun, Null(tInt64), k),
		"string then, null else":     call(t, "case", pos, s, Null(tString)),
		"bool then, null else":       call(t, "case", isSun, b, Null(tBool)),
		"date then, null else":       call(t, "case", pos, d, Null(arrow.FixedWidthTypes.Date32)),
		"two branches and an else":   call(t, "case", isSun, k, pos, call(t, "coalesce", k, i64(100)), i64(-1)),
		"strings from two branches":  call(t, "case", pos, s, call(t, "isnull", k), str("none"), str("neg")),
		"null condition column":      call(t, "case", b, dk, call(t, "isnull", b), dec("9.99", 22, 2), Null(decType(22, 2))),
		"no row takes the when":      call(t, "case", call(t, "=", s, str("never")), k, Null(tInt64)),
		"every branch null":          call(t, "case", isSun, Null(tInt64), Null(tInt64)),
		"bools from two branches":    call(t, "case", pos, b, isSun),
		"dates from two branches":    call(t, "case", isSun, Null(arrow.FixedWidthTypes.Date32), pos, d, Null(arrow.FixedWidthTypes.Date32)),
		"literal then, column else":  call(t, "case", pos, i64(7), k),
		"first when wins over later": call(t, "case", pos, i64(1), call(t, ">", k, i64(2)), i64(2), i64(3)),
		"literal buckets, q99's shape": call(t, "case", call(t, "<=", k, i64(0)), i64(1),
			call(t, "and", call(t, ">", k, i64(0)), call(t, "<=", k, i64(3))), i64(2),
			call(t, ">", k, i64(3)), i64(3), i64(0)),
		"literal buckets with a null else": call(t, "case", pos, i64(1), call(t, "<", k, i64(-1)), i64(2), Null(tInt64)),
		"arithmetic that can fail":         call(t, "case", call(t, "<=", call(t, "-", k, i64(1)), i64(2)), i64(1), call(t, ">", call(t, "*", k, i64(2)), i64(4)), dk, i64(0)),
	}
	for name, e := range cases {
		c, ok := e.(*Call)
		if !ok || c.Fn != "case" {
			t.Fatalf("%s: %s is not a CASE", name, e)
		}
		for _, off := range []int{0, 3, 64, 131} {
			batch := full.NewSlice(int64(off), int64(n))
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			ctx := &Context{Alloc: mem}
			got, err := caseKernel{t: c.Type}.evalEager(ctx, c, batch)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			want, err := caseKernel{t: c.Type}.evalLazy(ctx, c, batch)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if !arrow.TypeEqual(got.DataType(), c.Type) {
				t.Errorf("%s: result type %s, declared %s", name, got.DataType(), c.Type)
			}
			var diff []string
			for i := 0; i < int(batch.NumRows()); i++ {
				if g, w := render(got, i), render(want, i); g != w {
					diff = append(diff, fmt.Sprintf("row %d: %s, want %s", i, g, w))
				}
			}
			if got.NullN() != want.NullN() {
				diff = append(diff, fmt.Sprintf("%d NULLs, want %d", got.NullN(), want.NullN()))
			}
			if len(diff) > 0 {
				t.Errorf("%s at offset %d:\n%s", name, off, strings.Join(diff[:min(len(diff), 5)], "\n"))
			}
			got.Release()
			want.Release()
			batch.Release()
			mem.AssertSize(t, 0)
		}
	}
}
