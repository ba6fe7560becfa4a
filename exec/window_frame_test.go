package exec

import (
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/fsql-dev/fsql/exec/expr"
)

func TestFrameGroups(t *testing.T) {
	// Two partitions: rows 0-2 and 3-4.
	partStart := []int32{0, 0, 0, 3, 3}
	peer, start, first := rowGroups(partStart)
	if !reflect.DeepEqual(peer, []int32{0, 1, 2, 3, 4}) || !reflect.DeepEqual(start, []int32{0, 1, 2, 3, 4}) ||
		!reflect.DeepEqual(first, []bool{true, false, false, true, false}) {
		t.Fatalf("rowGroups: %v %v %v", peer, start, first)
	}
	peer, start = partGroups(partStart)
	if !reflect.DeepEqual(peer, []int32{0, 0, 0, 1, 1}) || !reflect.DeepEqual(start, []int32{0, 3}) {
		t.Fatalf("partGroups: %v %v", peer, start)
	}
}

// frameRow is one input row of the randomized frame test.
type frameRow struct {
	id   int
	p    int
	o, v *int64
}

// TestWindowFramesRandom checks every ROWS and RANGE frame shape against a
// brute-force reading of the SQL definitions, over random partitions with
// NULL keys, NULL values and ties.
func TestWindowFramesRandom(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	var rows []frameRow
	var in [][]any
	for id := 0; id < 60; id++ {
		fr := frameRow{id: id, p: r.Intn(3)}
		var ov, vv any
		if r.Intn(8) > 0 {
			o := int64(r.Intn(10))
			fr.o, ov = &o, int(o)
		}
		if r.Intn(6) > 0 {
			v := int64(r.Intn(100) - 30)
			fr.v, vv = &v, int(v)
		}
		rows = append(rows, fr)
		in = append(in, []any{id, fr.p, ov, vv})
	}
	s := opSchema(fld("id", tInt64), fld("p", tInt64), fld("o", tInt64), fld("v", tInt64))
	bounds := []FrameBound{{Kind: UnboundedPreceding}, {Kind: Preceding, Rows: 3}, {Kind: Preceding, Rows: 1},
		{Kind: CurrentRow}, {Kind: Following, Rows: 0}, {Kind: Following, Rows: 2}, {Kind: UnboundedFollowing}}
	for _, unit := range []FrameUnit{FrameRows, FrameRange} {
		for _, desc := range []bool{false, true} {
			for si, start := range bounds {
				for _, end := range bounds[si:] {
					if start.Kind == UnboundedFollowing || end.Kind == UnboundedPreceding {
						continue
					}
					fr := WindowFrame{Unit: unit, Start: start, End: end}
					if unit == FrameRange {
						fr.Start, fr.End = rangeOffset(t, start, desc), rangeOffset(t, end, desc)
					}
					order := []SortKey{{Expr: col(2, tInt64), Desc: desc, NullsFirst: !desc}}
					if unit == FrameRows {
						order = append(order, SortKey{Expr: col(0, tInt64)}) // a total order
					}
					w := &Window{Child: src(t, s, in...), PartitionBy: []expr.Expr{col(1, tInt64)}, OrderBy: order, Frame: fr,
						Funcs: []WindowFunc{
							{Fn: "sum", Arg: col(3, tInt64), Type: tDec38_0, Name: "s"},
							{Fn: "count", Arg: col(3, tInt64), Type: tInt64, Name: "c"},
							{Fn: "max", Arg: col(3, tInt64), Type: tInt64, Name: "m"},
							{Fn: "first_value", Arg: col(3, tInt64), Type: tInt64, Name: "f"},
							{Fn: "nth_value", Arg: col(3, tInt64), Type: tInt64, Name: "n", N: 2},
						}}
					got := runRows(t, w)
					want := bruteFrames(rows, fr, desc)
					// ROWS frames have a total order; RANGE frames are
					// compared on the order-insensitive aggregates only.
					if unit == FrameRange {
						got, want = cut(got, 7), cut(want, 7)
					}
					if !slices.Equal(sorted(got), sorted(want)) {
						t.Fatalf("%s desc=%v:\n got: %q\nwant: %q", fr, desc, sorted(got), sorted(want))
					}
				}
			}
		}
	}
}

func cut(rows []string, n int) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = strings.Join(strings.Split(r, "|")[:n], "|")
	}
	return out
}

// rangeOffset turns a ROWS-style bound into a RANGE bound over column 0.
func rangeOffset(t *testing.T, b FrameBound, desc bool) FrameBound {
	if b.Kind != Preceding && b.Kind != Following {
		return b
	}
	op := "+"
	if (b.Kind == Preceding) != desc {
		op = "-"
	}
	e, err := expr.NewCall(op, expr.NewColumn(0, tInt64, "key"), expr.NewLiteral(b.Rows, tInt64))
	if err != nil {
		t.Fatal(err)
	}
	return FrameBound{Kind: b.Kind, Value: e}
}

// bruteFrames computes the rows the test expects: each row's frame by the
// definitions, row by row.
func bruteFrames(rows []frameRow, fr WindowFrame, desc bool) []string {
	var out []string
	for p := 0; p < 3; p++ {
		var part []frameRow
		for _, r := range rows {
			if r.p == p {
				part = append(part, r)
			}
		}
		// Order by o (NULLs first ascending, last descending), then id.
		slices.SortFunc(part, func(a, b frameRow) int {
			switch {
			case a.o == nil && b.o == nil:
			case a.o == nil:
				return map[bool]int{false: -1, true: 1}[desc]
			case b.o == nil:
				return map[bool]int{false: 1, true: -1}[desc]
			case *a.o != *b.o:
				if (*a.o < *b.o) != desc {
					return -1
				}
				return 1
			}
			return a.id - b.id
		})
		for i, cur := range part {
			in := func(j int) bool {
				if fr.Unit == FrameRows {
					lo, hi := rowsEdge(fr.Start, i, len(part)), rowsEdge(fr.End, i, len(part))
					return j >= lo && j <= hi
				}
				return rangeIn(fr.Start, cur, part[j], desc, true) && rangeIn(fr.End, cur, part[j], desc, false)
			}
			var sum, count, mx int64
			var first, second *int64
			seen, k := false, 0
			for j := range part {
				if !in(j) {
					continue
				}
				k++
				if k == 1 {
					first = part[j].v
				}
				if k == 2 {
					second = part[j].v
				}
				if v := part[j].v; v != nil {
					sum += *v
					count++
					if !seen || *v > mx {
						mx = *v
					}
					seen = true
				}
			}
			str := func(v *int64) string {
				if v == nil {
					return "NULL"
				}
				return fmt.Sprint(*v)
			}
			sumS, mxS := "NULL", "NULL"
			if seen {
				sumS, mxS = fmt.Sprint(sum), fmt.Sprint(mx)
			}
			out = append(out, strings.Join([]string{fmt.Sprint(cur.id), fmt.Sprint(cur.p), str(cur.o), str(cur.v),
				sumS, fmt.Sprint(count), mxS, str(first), str(second)}, "|"))
		}
	}
	return out
}

// rowsEdge is the position a ROWS bound names (inclusive).
func rowsEdge(b FrameBound, i, n int) int {
	switch b.Kind {
	case UnboundedPreceding:
		return 0
	case Preceding:
		return i - int(b.Rows)
	case CurrentRow:
		return i
	case Following:
		return i + int(b.Rows)
	}
	return n - 1
}

// rangeIn reports whether row r is within the start (or end) bound of the
// current row cur's RANGE frame: whether r sorts at or after the start
// (at or before the end), NULL keys included by their place in the order
// (as MySQL and MariaDB include them under an UNBOUNDED side).
func rangeIn(b FrameBound, cur, r frameRow, desc, start bool) bool {
	switch b.Kind {
	case UnboundedPreceding, UnboundedFollowing:
		return true
	}
	// NULL keys sort first ascending and last descending; a NULL row's
	// offset bounds are its peer group, the NULL rows.
	if cur.o == nil {
		if start == desc {
			return r.o == nil
		}
		return true
	}
	if r.o == nil {
		return start == desc
	}
	var n int64
	if b.Kind != CurrentRow {
		c := b.Value.(*expr.Call)
		n = c.Args[1].(*expr.Literal).Value.(int64)
		if b.Kind == Preceding {
			n = -n
		}
	}
	// Positions along the sort order: the key, negated for DESC.
	pos, edge := *r.o, *cur.o+n
	if desc {
		pos, edge = -*r.o, -*cur.o+n
	}
	if start {
		return pos >= edge
	}
	return pos <= edge
}
