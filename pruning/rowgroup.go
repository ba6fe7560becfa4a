package pruning

import (
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/fsql-dev/fsql/connectors/hive"
	"github.com/fsql-dev/fsql/exec/expr"
)

// RowGroupFilter returns the row-group test of exec.Scan's Filters: it skips
// row groups whose footer statistics prove some conjunct false for every
// row. It recognises, on a file column (optionally under an exact widening
// CAST):
//
//	col OP literal, literal OP col   (OP in = < <= > >=)
//	col IN (literal, ...)
//	col IS NULL                      (false when the chunk has no NULLs)
//	AND / OR of those
//
// BETWEEN arrives as two conjuncts. Values compare by value across INT,
// BIGINT, DECIMAL (any scales) and DOUBLE (with INT only, where conversion
// is exact), DATE with DATE and strings bytewise; anything else keeps the
// row group. A row group whose column is all NULL fails every comparison.
// It returns nil when no conjunct can use statistics, which exec.Scan
// treats as keeping everything.
func RowGroupFilter(t *hive.Table, conjuncts []expr.Expr) func(f *hive.File, rg int) bool {
	var preds []pred
	for _, c := range conjuncts {
		if p := compile(t, c); p != nil {
			preds = append(preds, p)
		}
	}
	if len(preds) == 0 {
		return nil
	}
	return func(f *hive.File, rg int) bool {
		if rg < 0 || rg >= len(f.RowGroups) {
			return true
		}
		g := &f.RowGroups[rg]
		for _, p := range preds {
			if p(g) {
				return false
			}
		}
		return true
	}
}

// pred reports whether a row group's statistics prove the conjunct false.
type pred func(g *hive.RowGroup) bool

// value is a constant with the type that says how to read it.
type value struct {
	v any
	t arrow.DataType
}

func compile(t *hive.Table, e expr.Expr) pred {
	c, ok := e.(*expr.Call)
	if !ok {
		return nil
	}
	switch c.Fn {
	case "and":
		var ps []pred
		for _, a := range c.Args {
			if p := compile(t, a); p != nil {
				ps = append(ps, p)
			}
		}
		if len(ps) == 0 {
			return nil
		}
		return func(g *hive.RowGroup) bool {
			for _, p := range ps {
				if p(g) {
					return true
				}
			}
			return false
		}
	case "or":
		var ps []pred
		for _, a := range c.Args {
			p := compile(t, a)
			if p == nil {
				return nil // one unprovable branch keeps the group
			}
			ps = append(ps, p)
		}
		return func(g *hive.RowGroup) bool {
			for _, p := range ps {
				if !p(g) {
					return false
				}
			}
			return len(ps) > 0
		}
	case "isnull":
		if len(c.Args) != 1 {
			return nil
		}
		col, ok := fileColumn(t, c.Args[0])
		if !ok {
			return nil
		}
		return func(g *hive.RowGroup) bool { return g.Columns[col].NullCount == 0 }
	case "in":
		if len(c.Args) < 2 {
			return nil
		}
		col, ok := fileColumn(t, c.Args[0])
		if !ok {
			return nil
		}
		colType := t.Schema.Field(col).Type
		var lits []value
		for _, a := range c.Args[1:] {
			l, ok := a.(*expr.Literal)
			if !ok {
				return nil
			}
			if l.Value == nil {
				continue // x IN (..., NULL) is never TRUE through the NULL
			}
			lits = append(lits, value{l.Value, l.Type})
		}
		return func(g *hive.RowGroup) bool {
			s := g.Columns[col]
			if allNull(s, g) {
				return true
			}
			if !s.HasMinMax {
				return false
			}
			lo, hi := value{s.Min, colType}, value{s.Max, colType}
			for _, l := range lits {
				c1, ok1 := compare(l, lo)
				c2, ok2 := compare(l, hi)
				if !ok1 || !ok2 || (c1 >= 0 && c2 <= 0) {
					return false // this value may be present
				}
			}
			return true
		}
	case "=", "<", "<=", ">", ">=":
		if len(c.Args) != 2 {
			return nil
		}
		op := c.Fn
		col, ok := fileColumn(t, c.Args[0])
		lit, isLit := c.Args[1].(*expr.Literal)
		if !ok || !isLit {
			col, ok = fileColumn(t, c.Args[1])
			lit, isLit = c.Args[0].(*expr.Literal)
			if !ok || !isLit {
				return nil
			}
			op = flip(op)
		}
		colType := t.Schema.Field(col).Type
		l := value{lit.Value, lit.Type}
		return func(g *hive.RowGroup) bool {
			s := g.Columns[col]
			if l.v == nil || allNull(s, g) {
				return true // comparisons with NULL are never TRUE
			}
			if !s.HasMinMax {
				return false
			}
			cmin, ok1 := compare(value{s.Min, colType}, l)
			cmax, ok2 := compare(value{s.Max, colType}, l)
			if !ok1 || !ok2 {
				return false
			}
			switch op {
			case "=":
				return cmin > 0 || cmax < 0
			case "<":
				return cmin >= 0
			case "<=":
				return cmin > 0
			case ">":
				return cmax <= 0
			case ">=":
				return cmax < 0
			}
			return false
		}
	}
	return nil
}

func allNull(s hive.ColumnStats, g *hive.RowGroup) bool {
	return g.NumRows > 0 && s.NullCount == g.NumRows
}

// flip turns "lit OP col" into "col OP' lit".
func flip(op string) string {
	switch op {
	case "<":
		return ">"
	case "<=":
		return ">="
	case ">":
		return "<"
	case ">=":
		return "<="
	}
	return op
}

// fileColumn finds the file column e reads, looking through casts that keep
// every value exactly (so comparing the uncast statistics is the same).
func fileColumn(t *hive.Table, e expr.Expr) (int, bool) {
	for {
		switch x := e.(type) {
		case *expr.Column:
			if x.Index < 0 || x.Index >= t.NumFileColumns {
				return 0, false
			}
			return x.Index, true
		case *expr.Call:
			if x.Fn != "cast" || len(x.Args) != 1 || !exactCast(x.Args[0].DataType(), x.Type) {
				return 0, false
			}
			e = x.Args[0]
		default:
			return 0, false
		}
	}
}

func exactCast(from, to arrow.DataType) bool {
	if arrow.TypeEqual(from, to) {
		return true
	}
	switch from.ID() {
	case arrow.INT32:
		switch to.ID() {
		case arrow.INT64, arrow.FLOAT64:
			return true
		case arrow.DECIMAL128:
			d := to.(*arrow.Decimal128Type)
			return d.Precision-d.Scale >= 10
		}
	case arrow.INT64:
		if d, ok := to.(*arrow.Decimal128Type); ok {
			return d.Precision-d.Scale >= 19
		}
	case arrow.DECIMAL128:
		if d, ok := to.(*arrow.Decimal128Type); ok {
			f := from.(*arrow.Decimal128Type)
			return d.Scale >= f.Scale && d.Precision-d.Scale >= f.Precision-f.Scale
		}
	}
	return false
}

// compare orders a and b by value; ok is false when they cannot be
// compared exactly.
func compare(a, b value) (int, bool) {
	if a.v == nil || b.v == nil {
		return 0, false
	}
	ia, ib := a.t.ID(), b.t.ID()
	switch {
	case ia == arrow.STRING && ib == arrow.STRING:
		x, ok1 := a.v.(string)
		y, ok2 := b.v.(string)
		return strings.Compare(x, y), ok1 && ok2
	case ia == arrow.DATE32 && ib == arrow.DATE32:
		x, ok1 := a.v.(arrow.Date32)
		y, ok2 := b.v.(arrow.Date32)
		return cmp3(x, y), ok1 && ok2
	case ia == arrow.FLOAT64 || ib == arrow.FLOAT64:
		x, ok1 := asFloat(a)
		y, ok2 := asFloat(b)
		if !ok1 || !ok2 || math.IsNaN(x) || math.IsNaN(y) {
			return 0, false
		}
		return cmp3(x, y), true
	}
	x, sx, ok1 := asDecimal(a)
	y, sy, ok2 := asDecimal(b)
	if !ok1 || !ok2 {
		return 0, false
	}
	if sx != sy {
		var err error
		if sx < sy {
			x, err = x.Rescale(sx, sy)
		} else {
			y, err = y.Rescale(sy, sx)
		}
		if err != nil {
			return 0, false
		}
	}
	return x.Cmp(y), true
}

func cmp3[T int32 | int64 | float64 | arrow.Date32](x, y T) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// asFloat converts doubles and 32-bit integers, which float64 holds exactly.
func asFloat(v value) (float64, bool) {
	switch x := v.v.(type) {
	case float64:
		return x, v.t.ID() == arrow.FLOAT64
	case int32:
		return float64(x), v.t.ID() == arrow.INT32
	}
	return 0, false
}

// asDecimal reads integers and decimals as a scaled 128-bit integer.
func asDecimal(v value) (decimal128.Num, int32, bool) {
	switch x := v.v.(type) {
	case int32:
		return decimal128.FromI64(int64(x)), 0, v.t.ID() == arrow.INT32
	case int64:
		return decimal128.FromI64(x), 0, v.t.ID() == arrow.INT64
	case decimal128.Num:
		d, ok := v.t.(*arrow.Decimal128Type)
		if !ok {
			return decimal128.Num{}, 0, false
		}
		return x, d.Scale, true
	}
	return decimal128.Num{}, 0, false
}
