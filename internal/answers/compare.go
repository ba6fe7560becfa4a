package answers

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strings"
)

// ErrMismatch is returned (wrapped) by Compare when the answers differ.
var ErrMismatch = errors.New("answers differ")

// maxLines caps the differences a Compare error lists.
const maxLines = 10

// relTol is the relative tolerance for any comparison involving a float.
const relTol = 1e-9

// greedyLimit bounds the rows of a multiset compared pairwise (quadratic)
// after the sort-and-zip pass finds a difference: near-equal floats can sort
// differently on the two sides, and pairing every row is the robust check.
const greedyLimit = 4000

// Compare returns nil when got matches want, else an error (wrapping
// ErrMismatch) that describes the first differences in at most ~10 lines.
//
// Rules: the column counts must match (names are not compared, only reported).
// Rows are compared as a multiset, unless want.Ordered: then rows are compared
// in order, except that each run of consecutive want rows that are equal on
// want.OrderKeys is compared as a multiset (the ORDER BY leaves their order
// open; with no keys the whole result is one run). Values: decimals and
// integers exactly by value; a float against a decimal within half a unit of
// the decimal's last place plus a relative 1e-9; a float against a float or an
// integer within a relative 1e-9; strings, dates and bools exactly; NULL only
// equals NULL.
func Compare(want, got *Answer) error {
	wt, err := want.types()
	if err != nil {
		return err
	}
	gt, err := got.types()
	if err != nil {
		return err
	}
	if len(wt) != len(gt) {
		return fmt.Errorf("%w: %d columns, want %d\n  want: %s\n  got:  %s",
			ErrMismatch, len(gt), len(wt), columnList(want), columnList(got))
	}
	for i := range wt {
		if family(wt[i].kind) != family(gt[i].kind) && !(allNull(want, i) && allNull(got, i)) {
			return fmt.Errorf("%w: column %d: want %s %s, got %s %s",
				ErrMismatch, i+1, want.Columns[i].Name, want.Columns[i].Type,
				got.Columns[i].Name, got.Columns[i].Type)
		}
	}
	c := &comparer{want: want, got: got, wt: wt, gt: gt}
	if len(want.Rows) != len(got.Rows) {
		c.addf("%d rows, want %d", len(got.Rows), len(want.Rows))
		c.multiset(0, len(want.Rows), 0, len(got.Rows))
	} else if want.Ordered {
		c.ordered()
	} else {
		c.multiset(0, len(want.Rows), 0, len(got.Rows))
	}
	if len(c.lines) == 0 {
		return nil
	}
	if c.more > 0 {
		c.lines = append(c.lines, fmt.Sprintf("... and %d more differences", c.more))
	}
	return fmt.Errorf("%w:\n  %s", ErrMismatch, strings.Join(c.lines, "\n  "))
}

// allNull reports whether a has rows and column i is NULL in every one
// of them. Such a
// column carries no value whose type could differ: DuckDB types a NULL
// its optimizer folded out of an expression (x || CAST(NULL AS VARCHAR))
// as INTEGER, where fsql keeps the expression's type.
func allNull(a *Answer, i int) bool {
	if len(a.Rows) == 0 {
		return false
	}
	for _, r := range a.Rows {
		if !r[i].Null {
			return false
		}
	}
	return true
}

func columnList(a *Answer) string {
	parts := make([]string, len(a.Columns))
	for i, c := range a.Columns {
		parts[i] = c.Name + ":" + c.Type
	}
	return strings.Join(parts, ", ")
}

// family groups the kinds that can be compared with each other.
func family(k kind) kind {
	switch k {
	case kindInt, kindFloat, kindDecimal:
		return kindFloat
	}
	return k
}

type comparer struct {
	want, got *Answer
	wt, gt    []colType
	lines     []string
	more      int
}

func (c *comparer) addf(f string, args ...any) {
	if len(c.lines) >= maxLines {
		c.more++
		return
	}
	c.lines = append(c.lines, fmt.Sprintf(f, args...))
}

func (c *comparer) ordered() {
	rows := c.want.Rows
	for start := 0; start < len(rows); {
		end := start + 1
		for end < len(rows) && c.sameKeys(rows[start], rows[end]) {
			end++
		}
		if end-start == 1 {
			if col := c.firstDiff(rows[start], c.got.Rows[start]); col >= 0 {
				c.addf("row %d, column %d (%s): want %s, got %s", start+1, col+1,
					c.want.Columns[col].Name, format(c.wt[col], rows[start][col]),
					format(c.gt[col], c.got.Rows[start][col]))
			}
		} else {
			c.multiset(start, end, start, end)
		}
		start = end
	}
}

// sameKeys reports whether two want rows tie on the ORDER BY keys.
func (c *comparer) sameKeys(a, b []Value) bool {
	if len(c.want.OrderKeys) == 0 {
		return true
	}
	for _, k := range c.want.OrderKeys {
		if !equal(c.wt[k], a[k], c.wt[k], b[k]) {
			return false
		}
	}
	return true
}

func (c *comparer) firstDiff(w, g []Value) int {
	for i := range w {
		if !equal(c.wt[i], w[i], c.gt[i], g[i]) {
			return i
		}
	}
	return -1
}

// multiset compares want rows [ws,we) with got rows [gs,ge) ignoring order.
func (c *comparer) multiset(ws, we, gs, ge int) {
	w := append([][]Value(nil), c.want.Rows[ws:we]...)
	g := append([][]Value(nil), c.got.Rows[gs:ge]...)
	sort.SliceStable(w, func(i, j int) bool { return lessRow(c.wt, w[i], w[j]) })
	sort.SliceStable(g, func(i, j int) bool { return lessRow(c.gt, g[i], g[j]) })
	if len(w) == len(g) {
		ok := true
		for i := range w {
			if c.firstDiff(w[i], g[i]) >= 0 {
				ok = false
				break
			}
		}
		if ok {
			return
		}
	}
	where := ""
	if c.want.Ordered && len(c.want.Rows) == len(c.got.Rows) {
		where = fmt.Sprintf("rows %d..%d (tied on the ORDER BY keys): ", ws+1, we)
	}
	var missing, extra [][]Value
	if len(w)*len(g) <= greedyLimit*greedyLimit {
		used := make([]bool, len(g))
		for _, wr := range w {
			found := false
			for j, gr := range g {
				if !used[j] && c.firstDiff(wr, gr) < 0 {
					used[j], found = true, true
					break
				}
			}
			if !found {
				missing = append(missing, wr)
			}
		}
		for j, gr := range g {
			if !used[j] {
				extra = append(extra, gr)
			}
		}
	} else {
		// Too big to pair every row: report the first zipped difference.
		for i := 0; i < len(w) && i < len(g); i++ {
			if c.firstDiff(w[i], g[i]) >= 0 {
				missing, extra = w[i:i+1], g[i:i+1]
				break
			}
		}
	}
	for _, r := range missing {
		c.addf("%smissing %s", where, rowString(c.wt, r))
	}
	for _, r := range extra {
		c.addf("%sunexpected %s", where, rowString(c.gt, r))
	}
}

func rowString(ts []colType, r []Value) string {
	parts := make([]string, len(r))
	for i, v := range r {
		parts[i] = format(ts[i], v)
	}
	return "[" + strings.Join(parts, " | ") + "]"
}

// lessRow orders rows for the multiset comparison: NULL first, numbers by
// value (any numeric kind, so both sides sort alike), then text, dates, bools.
func lessRow(ts []colType, a, b []Value) bool {
	for i := range a {
		if c := cmpValue(ts[i], a[i], b[i]); c != 0 {
			return c < 0
		}
	}
	return false
}

func cmpValue(t colType, a, b Value) int {
	switch {
	case a.Null && b.Null:
		return 0
	case a.Null:
		return -1
	case b.Null:
		return 1
	}
	switch t.kind {
	case kindFloat, kindDecimal:
		x, y := toFloat(t, a), toFloat(t, b)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	case kindString:
		return strings.Compare(a.Str, b.Str)
	}
	switch {
	case a.Int < b.Int:
		return -1
	case a.Int > b.Int:
		return 1
	}
	return 0
}

func toFloat(t colType, v Value) float64 {
	switch t.kind {
	case kindFloat:
		return v.Float
	case kindDecimal:
		f, _ := new(big.Rat).SetFrac(v.Dec, pow10(t.scale)).Float64()
		return f
	}
	return float64(v.Int)
}

func pow10(n int) *big.Int {
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)
}

// exact returns an exact (int or decimal) value as a rational.
func exact(t colType, v Value) *big.Rat {
	if t.kind == kindDecimal {
		return new(big.Rat).SetFrac(v.Dec, pow10(t.scale))
	}
	return new(big.Rat).SetInt64(v.Int)
}

// equal compares a value of type at with one of type bt (same family).
func equal(at colType, a Value, bt colType, b Value) bool {
	if a.Null || b.Null {
		return a.Null && b.Null
	}
	switch family(at.kind) {
	case kindString:
		return a.Str == b.Str
	case kindDate, kindBool:
		return a.Int == b.Int
	}
	af, bf := at.kind == kindFloat, bt.kind == kindFloat
	if !af && !bf {
		return exact(at, a).Cmp(exact(bt, b)) == 0
	}
	x, y := toFloat(at, a), toFloat(bt, b)
	if x == y || (math.IsNaN(x) && math.IsNaN(y)) {
		return true
	}
	tol := relTol * math.Max(math.Abs(x), math.Abs(y))
	// Against a decimal, allow for the decimal side having been rounded to
	// its scale.
	if at.kind == kindDecimal {
		tol += 0.5 * math.Pow(10, -float64(at.scale))
	} else if bt.kind == kindDecimal {
		tol += 0.5 * math.Pow(10, -float64(bt.scale))
	}
	return math.Abs(x-y) <= tol
}
