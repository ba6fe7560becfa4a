package expr

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// binder checks the arguments of one function, inserts the implicit casts
// MySQL applies and returns the finished expression (usually a *Call, but
// sugar such as NULLIF binds to a CASE).
type binder func(fn string, args []Expr) (Expr, error)

// binders maps every function name NewCall knows to its binder. Families
// live one per file (arith.go, compare.go, ...).
var binders map[string]binder

func init() {
	binders = map[string]binder{}
	for _, fam := range []map[string]binder{
		arithBinders, compareBinders, logicBinders, condBinders, stringBinders,
		dateBinders, dateFuncBinders, dateFmtBinders, mathBinders, mathFuncBinders,
		strFuncBinders, greatestBinders, sortKeyBinders, temporalBinders, subqueryBinders, timeFuncBinders,
	} {
		for k, v := range fam {
			binders[k] = v
		}
	}
}

// NewCall binds function fn to args: it checks the number and types of the
// arguments, inserts the implicit casts MySQL applies (visible as CAST in
// EXPLAIN) and decides the result type. Bad arguments give an error
// wrapping ErrType that names the function and the types; an unknown
// function gives ErrUnsupported. Casts are built with NewCast, which knows
// the target type.
func NewCall(fn string, args ...Expr) (Expr, error) {
	fn = strings.ToLower(fn)
	for i, a := range args {
		if a == nil {
			return nil, fmt.Errorf("%w: %s: argument %d is missing", ErrType, fn, i+1)
		}
	}
	if fn == "cast" {
		return nil, fmt.Errorf("%w: cast needs its target type; build it with NewCast", ErrType)
	}
	b, ok := binders[fn]
	if !ok {
		return nil, fmt.Errorf("%w: function %s", ErrUnsupported, fn)
	}
	return b(fn, args)
}

func newCall(fn string, typ arrow.DataType, impl kernel, args ...Expr) *Call {
	return &Call{Fn: fn, Args: args, Type: typ, impl: impl}
}

// DataType implements Expr.
func (c *Call) DataType() arrow.DataType { return c.Type }

// Children implements Expr.
func (c *Call) Children() []Expr { return c.Args }

// Eval implements Expr.
func (c *Call) Eval(ctx *Context, batch arrow.RecordBatch) (out arrow.Array, err error) {
	// A kernel trusts the types NewCall checked; a batch that breaks them
	// (a Column whose declared type is not the batch's) must not crash the
	// process, so the panic becomes this expression's error.
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("%w: evaluating %s: %v", ErrInternal, c, r)
		}
	}()
	if c.impl == nil {
		return nil, fmt.Errorf("%w: %s was not built with NewCall", ErrType, c.Fn)
	}
	if ctx == nil || ctx.Alloc == nil {
		ctx = &Context{Alloc: memory.DefaultAllocator}
	}
	return c.impl.eval(ctx, c, batch)
}

// arrayKernel is the common kernel shape: all arguments evaluated to
// arrays of n rows first. The kernel must not release args.
type arrayKernel func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error)

func (k arrayKernel) eval(ctx *Context, c *Call, batch arrow.RecordBatch) (arrow.Array, error) {
	args, err := evalArgs(ctx, c.Args, batch)
	if err != nil {
		return nil, err
	}
	defer releaseAll(args)
	return k(ctx, args, int(batch.NumRows()))
}

func evalArgs(ctx *Context, es []Expr, batch arrow.RecordBatch) ([]arrow.Array, error) {
	out := make([]arrow.Array, len(es))
	for i, e := range es {
		a, err := e.Eval(ctx, batch)
		if err == nil {
			err = checkType(e, a)
		}
		if err != nil {
			releaseAll(out)
			return nil, err
		}
		out[i] = a
	}
	return out, nil
}

var infix = map[string]string{
	"+": "+", "-": "-", "*": "*", "/": "/", "%": "%",
	"=": "=", "<>": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">=", "<=>": "<=>",
	"and": "AND", "or": "OR",
}

// String implements Expr in SQL spelling.
func (c *Call) String() string {
	args := make([]string, len(c.Args))
	for i, a := range c.Args {
		args[i] = a.String()
	}
	if op, ok := infix[c.Fn]; ok && len(args) == 2 {
		return "(" + args[0] + " " + op + " " + args[1] + ")"
	}
	switch c.Fn {
	case "neg":
		return "(-" + args[0] + ")"
	case "not":
		return "(NOT " + args[0] + ")"
	case "isnull":
		return "(" + args[0] + " IS NULL)"
	case "isnotnull":
		return "(" + args[0] + " IS NOT NULL)"
	case "cast":
		if coll := CollationOf(c.Type); coll != nil {
			return "(" + args[0] + " COLLATE " + coll.name + ")"
		}
		return "CAST(" + args[0] + " AS " + typeSQL(c.Type) + ")"
	case "case":
		var b strings.Builder
		b.WriteString("CASE")
		for i := 0; i+1 < len(args); i += 2 {
			b.WriteString(" WHEN " + args[i] + " THEN " + args[i+1])
		}
		b.WriteString(" ELSE " + args[len(args)-1] + " END")
		return b.String()
	case "in":
		return "(" + args[0] + " IN (" + strings.Join(args[1:], ", ") + "))"
	case "like":
		return "(" + args[0] + " LIKE " + args[1] + ")"
	case "group_concat_arg":
		return groupConcatArgString(c, args)
	}
	return c.Fn + "(" + strings.Join(args, ", ") + ")"
}

// argErr is the ErrType error for fn applied to args of the wrong types.
func argErr(fn string, args []Expr, why string) error {
	ts := make([]string, len(args))
	for i, a := range args {
		ts[i] = typeSQL(a.DataType())
	}
	if why != "" {
		why = ": " + why
	}
	return fmt.Errorf("%w: %s(%s) is not defined%s", ErrType, fn, strings.Join(ts, ", "), why)
}

// argCause is argErr for a reason that is an error: the error is kept as
// the cause, so its kind and MySQL number (an illegal mix of collations,
// an unsupported type) win over ErrType.
func argCause(fn string, args []Expr, prefix string, err error) error {
	ts := make([]string, len(args))
	for i, a := range args {
		ts[i] = typeSQL(a.DataType())
	}
	return fmt.Errorf("%w: %s(%s) is not defined: %s%w", ErrType, fn, strings.Join(ts, ", "), prefix, err)
}

func arity(fn string, args []Expr, lo, hi int) error {
	if len(args) < lo || (hi >= 0 && len(args) > hi) {
		want := fmt.Sprint(lo)
		switch {
		case hi < 0:
			want = fmt.Sprintf("at least %d", lo)
		case hi != lo:
			want = fmt.Sprintf("%d to %d", lo, hi)
		}
		return fmt.Errorf("%w: %s takes %s arguments, got %d", ErrType, fn, want, len(args))
	}
	return nil
}

// coerce converts e to type to: unchanged when it already has that type,
// converted right away when it is a literal, wrapped in a CAST otherwise.
// A literal that does not convert ('abc' read as a number) is wrapped in a
// CAST too: the error belongs to the rows that evaluate it, not to binding
// (it may sit in a CASE branch no row takes).
func coerce(e Expr, to arrow.DataType) (Expr, error) {
	if arrow.TypeEqual(e.DataType(), to) {
		return e, nil
	}
	if l, ok := e.(*Literal); ok {
		if c, err := castLiteral(l, to); err == nil {
			return c, nil
		}
	}
	return newImplicitCast(e, to)
}

// castLiteral converts a constant at bind time so kernels see one type.
func castLiteral(l *Literal, to arrow.DataType) (*Literal, error) {
	if l.Value == nil {
		return Null(to), nil
	}
	if err := checkCast(l.Type, to); err != nil {
		return nil, err
	}
	alloc := memory.DefaultAllocator
	a, err := l.broadcast(alloc, 1)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	out, err := castArray(&Context{Alloc: alloc}, a, to)
	if err != nil {
		return nil, err
	}
	defer out.Release()
	return NewLiteral(ScalarFromArray(out, 0), to), nil
}

// operand is one argument of a binary kernel: an array of n rows, or a
// non-NULL literal held as a one-row array with index mask 0, so
// `col op constant` never materializes the constant n times. Kernels read
// row i as values[i&m].
type operand struct {
	arr arrow.Array
	m   int
}

// binaryKernel is the kernel shape of binary operators.
type binaryKernel func(ctx *Context, x, y operand, n int) (arrow.Array, error)

func (k binaryKernel) eval(ctx *Context, c *Call, batch arrow.RecordBatch) (arrow.Array, error) {
	var ops [2]operand
	for i, e := range c.Args[:2] {
		var a arrow.Array
		var err error
		m := -1
		if l, ok := e.(*Literal); ok && l.Value != nil {
			a, err = l.broadcast(ctx.Alloc, 1)
			m = 0
		} else if a, err = e.Eval(ctx, batch); err == nil {
			err = checkType(e, a)
		}
		if err != nil {
			if i == 1 {
				ops[0].arr.Release()
			}
			return nil, err
		}
		ops[i] = operand{arr: a, m: m}
	}
	defer ops[0].arr.Release()
	defer ops[1].arr.Release()
	return k(ctx, ops[0], ops[1], int(batch.NumRows()))
}

// andOps clears validity bits where an array operand is NULL (literal
// operands are never NULL).
func andOps(bits []byte, ops ...operand) {
	for _, o := range ops {
		if o.m != 0 {
			andValidity(bits, o.arr)
		}
	}
}

// isNullAt reports whether row i of the operand is NULL.
func (o operand) isNullAt(i int) bool { return IsNull(o.arr, i&o.m) }

// checkType guards kernels against a batch whose column does not have the
// type its Column declares: kernels read raw buffers by type.
func checkType(e Expr, a arrow.Array) error {
	if arrow.TypeEqual(a.DataType(), e.DataType()) {
		return nil
	}
	a.Release()
	return fmt.Errorf("%w: %s produced %s but is typed %s", ErrInternal, e, a.DataType(), e.DataType())
}
