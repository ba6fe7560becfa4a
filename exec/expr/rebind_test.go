package expr

import (
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fsql-dev/fsql/errs"
)

// TestRebindEveryBinder: for every function NewCall knows and argument
// lists of many types, every call of the bound expression (the call
// itself, the casts and calls the binder inserted) rebinds to the same
// call. That is what lets a plan's wire form carry calls without their
// kernels.
func TestRebindEveryBinder(t *testing.T) {
	coll, err := LookupCollation("utf8mb4_general_ci")
	if err != nil {
		t.Fatal(err)
	}
	operands := []Expr{
		NewColumn(0, tInt64, "i"), NewColumn(1, tInt32, "n"), NewColumn(2, tFloat64, "f"),
		NewColumn(3, decType(12, 2), "d"), NewColumn(4, tString, "s"), NewColumn(5, tDate, "dt"),
		NewColumn(6, tBool, "b"), NewColumn(7, coll.Type(), "c"),
		i64(3), str("a%"), Null(tNull), dec("1.5", 3, 1),
	}
	var lists [][]Expr
	for _, a := range operands {
		lists = append(lists, []Expr{a})
		for _, b := range operands {
			lists = append(lists, []Expr{a, b})
			lists = append(lists, []Expr{a, b, operands[0]}, []Expr{a, b, operands[8]})
		}
	}
	bound, calls := 0, 0
	for fn := range binders {
		for _, args := range lists {
			e, err := NewCall(fn, args...)
			if err != nil {
				continue
			}
			bound++
			Walk(e, func(x Expr) bool {
				c, ok := x.(*Call)
				if !ok {
					return true
				}
				calls++
				r, err := Rebind(c.Fn, c.Type, IsImplicitCast(c), c.Args)
				if err != nil {
					t.Errorf("%s of %v: %s does not rebind: %v", fn, args, c, err)
				} else if !sameExpr(r, c) {
					t.Errorf("%s of %v: %s rebinds to %s", fn, args, c, r)
				}
				return true
			})
		}
	}
	if bound < 500 || calls < bound {
		t.Fatalf("only %d bound expressions, %d calls: the argument lists miss the binders", bound, calls)
	}
	t.Logf("%d functions, %d bound expressions, %d calls rebound", len(binders), bound, calls)
}

func TestRebindRefuses(t *testing.T) {
	x := NewColumn(0, tInt32, "x")
	for _, c := range []struct {
		name     string
		fn       string
		typ      arrow.DataType
		implicit bool
		args     []Expr
	}{
		{"wrong type", "+", tString, false, []Expr{i64(1), i64(2)}},
		{"missing cast", "+", tInt64, false, []Expr{x, i64(1)}}, // NewCall casts x
		{"sugar", "nullif", tInt64, false, []Expr{i64(1), i64(2)}},
		{"implicit non-cast", "+", tInt64, true, []Expr{i64(1), i64(2)}},
		{"cast arity", "cast", tInt64, false, []Expr{x, x}},
		{"cast to itself", "cast", tInt32, false, []Expr{x}},
	} {
		if _, err := Rebind(c.fn, c.typ, c.implicit, c.args); !errors.Is(err, errs.Type) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	if _, err := Rebind("no_such_function", tInt64, false, nil); !errors.Is(err, errs.Unsupported) {
		t.Errorf("unknown function: %v", err)
	}
	// Implicit and explicit casts rebind as what they are.
	sum := call(t, "+", x, i64(1)).(*Call)
	cast := sum.Args[0].(*Call)
	if !IsImplicitCast(cast) {
		t.Fatal("NewCall's cast is implicit")
	}
	r, err := Rebind("cast", tInt64, true, cast.Args)
	if err != nil || !IsImplicitCast(r) {
		t.Fatalf("implicit cast: %v, %v", r, err)
	}
	r, err = Rebind("cast", tInt64, false, cast.Args)
	if err != nil || IsImplicitCast(r) {
		t.Fatalf("explicit cast: %v, %v", r, err)
	}
}
