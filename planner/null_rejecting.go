package planner

import (
	"github.com/fsql-dev/fsql/exec/expr"
)

// nullRejecting reports whether e cannot be TRUE on a row whose columns in
// [lo, hi) are all NULL: the NULL-extended rows of an outer join's
// optional side. A WHERE conjunct that is null-rejecting removes exactly
// the rows the outer join added, so the join may become an inner join.
//
// "Strict" (NULL in, NULL out) is not enough to decide it: NOT (x IS NOT
// NULL) is TRUE when x is NULL, and NOT (a AND b) is TRUE when b is FALSE,
// whatever a is. So the test follows what each expression can evaluate to
// (outcomes) when the side is NULL, from the columns up.
func nullRejecting(e expr.Expr, lo, hi int) bool {
	return whenNull(e, lo, hi).truth()&oTrue == 0
}

// outcomes is the set of values an expression can take.
type outcomes uint8

const (
	oTrue  outcomes = 1 << iota
	oFalse          // FALSE, or a number that is zero
	oNull
	oValue // any other non-NULL value (a number, string, date, ...)
	oAny   = oTrue | oFalse | oNull | oValue
)

// truth is o read as a condition: MySQL takes a non-zero number as TRUE,
// zero as FALSE.
func (o outcomes) truth() outcomes {
	if o&oValue != 0 {
		o = o&^oValue | oTrue | oFalse
	}
	return o
}

// strictFns return NULL whenever any argument is NULL (checked against
// the kernels by TestStrictFns). Functions that are not strict (CONCAT_WS,
// GREATEST, the null-safe and IS forms, COALESCE, IF, CASE) are not listed:
// whenNull gives those their own rule or assumes any outcome.
var strictFns = map[string]bool{
	"=": true, "<>": true, "<": true, "<=": true, ">": true, ">=": true,
	"+": true, "-": true, "*": true, "/": true, "%": true, "neg": true,
	"like": true, "cast": true, "substr": true,
	"upper": true, "lower": true, "trim": true, "length": true, "concat": true,
	"ltrim": true, "rtrim": true, "year": true, "month": true, "day": true,
	"date_add": true, "date_sub": true, "date_add_month": true, "date_sub_month": true,
	"date_add_year": true, "date_sub_year": true,
	"round": true, "abs": true, "floor": true, "ceil": true,
}

// whenNull returns what e can evaluate to on a row whose columns in
// [lo, hi) are NULL. Whatever it does not know is oAny, which never makes
// a predicate null-rejecting.
func whenNull(e expr.Expr, lo, hi int) outcomes {
	switch x := e.(type) {
	case *expr.Column:
		if x.Index >= lo && x.Index < hi {
			return oNull
		}
		return oAny
	case *expr.Literal:
		switch v := x.Value.(type) {
		case nil:
			return oNull
		case bool:
			if v {
				return oTrue
			}
			return oFalse
		}
		return oValue
	case *expr.Call:
		return callWhenNull(x, lo, hi)
	}
	return oAny
}

func callWhenNull(x *expr.Call, lo, hi int) outcomes {
	arg := func(i int) outcomes { return whenNull(x.Args[i], lo, hi) }
	switch x.Fn {
	case "not":
		return swapTrueFalse(arg(0).truth())
	case "and", "or":
		return andOr(x.Fn == "and", arg(0).truth(), arg(1).truth())
	case "isnull", "isnotnull":
		a := arg(0)
		var o outcomes
		if a&oNull != 0 {
			o |= oTrue
		}
		if a&^oNull != 0 {
			o |= oFalse
		}
		if x.Fn == "isnotnull" {
			o = swapTrueFalse(o)
		}
		return o
	case "<=>":
		// Never NULL. x IS TRUE is bound as x <=> TRUE, x IS NOT TRUE as
		// NOT (x <=> TRUE).
		a, b := arg(0), arg(1)
		switch {
		case a == oNull && b == oNull:
			return oTrue
		case a == oNull && b&oNull == 0, b == oNull && a&oNull == 0:
			return oFalse
		}
		return oTrue | oFalse
	case "coalesce": // IFNULL is bound as COALESCE
		var o outcomes
		for i := range x.Args {
			a := arg(i)
			o |= a &^ oNull
			if a&oNull == 0 {
				return o
			}
		}
		return o | oNull
	case "if":
		return branches(arg(0).truth(), arg(1), arg(2))
	case "case":
		// when1, then1, ..., else: a branch counts if its WHEN can be TRUE
		// and every WHEN before it can be other than TRUE.
		var o outcomes
		n := len(x.Args)
		for i := 0; i+1 < n; i += 2 {
			w := arg(i).truth()
			if w&oTrue != 0 {
				o |= arg(i + 1)
			}
			if w&^oTrue == 0 {
				return o
			}
		}
		return o | arg(n-1)
	case "scalar_subquery":
		// scalar_subquery(row count, value) is NULL when its value is (or
		// fails on more than one row).
		if arg(1) == oNull {
			return oNull
		}
		return oAny
	case "in":
		// NULL IN (...) is NULL; otherwise anything.
		if arg(0) == oNull {
			return oNull
		}
		return oAny
	}
	if strictFns[x.Fn] {
		for i := range x.Args {
			if arg(i) == oNull {
				return oNull
			}
		}
	}
	return oAny
}

// andOr combines the outcomes of two conditions under MySQL's three-valued
// AND (FALSE wins, then NULL) or OR (TRUE wins, then NULL).
func andOr(and bool, a, b outcomes) outcomes {
	if !and {
		// a OR b = NOT (NOT a AND NOT b)
		return swapTrueFalse(andOr(true, swapTrueFalse(a), swapTrueFalse(b)))
	}
	var o outcomes
	if a&oFalse != 0 || b&oFalse != 0 {
		o |= oFalse
	}
	if a&oTrue != 0 && b&oTrue != 0 {
		o |= oTrue
	}
	if a&oNull != 0 && b&(oTrue|oNull) != 0 || b&oNull != 0 && a&(oTrue|oNull) != 0 {
		o |= oNull
	}
	return o
}

// branches is what IF(c, t, f) can give.
func branches(c, t, f outcomes) outcomes {
	var o outcomes
	if c&oTrue != 0 {
		o |= t
	}
	if c&^oTrue != 0 {
		o |= f
	}
	return o
}

func swapTrueFalse(o outcomes) outcomes {
	r := o &^ (oTrue | oFalse)
	if o&oTrue != 0 {
		r |= oFalse
	}
	if o&oFalse != 0 {
		r |= oTrue
	}
	return r
}
