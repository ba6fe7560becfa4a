package expr

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fsql-dev/fsql/errs"
)

// IsImplicitCast reports whether e is a cast NewCall inserted, as opposed
// to one the query wrote (Rewrite drops the former below its root and
// lets NewCall derive them again). A plan's wire form records it, so a
// decoded plan rewrites as the original does.
func IsImplicitCast(e Expr) bool {
	_, ok := isImplicitCast(e)
	return ok
}

// Rebind builds again the call of fn over args that a plan's wire form
// describes, through the same binders as the original: NewCall, or NewCast
// to typ for "cast" (implicit marks a cast NewCall inserted). So the
// decoded call gets its kernel resolved afresh, never carried. It fails
// with errs.Type unless the result is a call of fn over exactly args (no
// cast inserted, no sugar rewritten; a binder may rebuild a constant
// argument as an equal literal) with type typ: anything else means the
// description is not one the binders produce.
func Rebind(fn string, typ arrow.DataType, implicit bool, args []Expr) (*Call, error) {
	var e Expr
	var err error
	switch {
	case fn == "cast" && len(args) == 1 && implicit:
		e, err = newImplicitCast(args[0], typ)
	case fn == "cast" && len(args) == 1:
		e, err = NewCast(args[0], typ)
	case fn == "cast":
		return nil, errs.New(errs.Type, "cast takes 1 argument, got %d", len(args))
	case implicit:
		return nil, errs.New(errs.Type, "only a cast is implicit, not %s", fn)
	default:
		e, err = NewCall(fn, args...)
	}
	if err != nil {
		return nil, err
	}
	c, ok := e.(*Call)
	if !ok || c.Fn != fn || len(c.Args) != len(args) || !arrow.TypeEqual(c.Type, typ) || IsImplicitCast(c) != implicit {
		return nil, errs.New(errs.Type, "%s of %d arguments does not bind back to a %s call of type %s (got %s of type %s)", fn, len(args), fn, typ, e, e.DataType())
	}
	for i := range args {
		if !sameExpr(c.Args[i], args[i]) {
			return nil, errs.New(errs.Type, "%s binds argument %d to %s (%s), not %s (%s) as described", fn, i+1, c.Args[i], c.Args[i].DataType(), args[i], args[i].DataType())
		}
	}
	return c, nil
}

// sameExpr reports whether a and b are the same expression: the same
// node, or equal columns, literals (type and value) or calls.
func sameExpr(a, b Expr) bool {
	if a == b {
		return true
	}
	switch x := a.(type) {
	case *Column:
		y, ok := b.(*Column)
		return ok && x.Index == y.Index && x.Name == y.Name && arrow.TypeEqual(x.Type, y.Type)
	case *Literal:
		y, ok := b.(*Literal)
		return ok && arrow.TypeEqual(x.Type, y.Type) && x.Value == y.Value
	case *Call:
		y, ok := b.(*Call)
		if !ok || x.Fn != y.Fn || len(x.Args) != len(y.Args) || !arrow.TypeEqual(x.Type, y.Type) || IsImplicitCast(x) != IsImplicitCast(y) {
			return false
		}
		for i := range x.Args {
			if !sameExpr(x.Args[i], y.Args[i]) {
				return false
			}
		}
		return true
	}
	return false
}
