package exec

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fsql-dev/fsql/exec/expr"
)

// Shared aggregate arguments. q99 and q62 count rows by how many days an
// order took to ship, five aggregates over one difference:
//
//	sum(CASE WHEN (cs_ship_date_sk - cs_sold_date_sk <= 30) THEN 1 ELSE 0 END)
//	sum(CASE WHEN (cs_ship_date_sk - cs_sold_date_sk > 30) AND
//	              (cs_ship_date_sk - cs_sold_date_sk <= 60) THEN 1 ELSE 0 END)
//	...
//
// Each argument is its own expression tree, so the two casts and the
// subtraction ran eight times a batch (a fifth of q99's CPU samples). A
// subexpression that occurs more than once among the raw-mode arguments
// is evaluated once a batch instead, as an extra column after the
// input's, and the arguments read that column.
//
// Hoisting evaluates the subexpression for every row, which lazy
// operators (CASE, COALESCE, AND, OR) may not do: `CASE WHEN x = 0 THEN 0
// ELSE 1 / x END` must not fail where x is 0. So a subexpression is only
// shared when it cannot fail, or when some argument evaluates it for
// every row anyway (an argument runs over the whole batch, and so does
// any operand that no lazy operator guards: a CASE's first WHEN, the
// first operand of AND, OR and COALESCE); the error it may raise is then
// the one the query raises without sharing.

// sharedArgs is the rewrite of one aggregate's arguments.
type sharedArgs struct {
	exprs []expr.Expr // the shared subexpressions, over the input's columns
	args  []expr.Expr // each aggregate's argument, reading them (nil: none)
	base  int         // the input's width: exprs[k] is column base+k
}

// newSharedArgs finds the shared subexpressions of a's arguments (raw
// modes only); nil when there are none.
func newSharedArgs(a *HashAggregate) *sharedArgs {
	if a.Mode == AggFinal {
		return nil
	}
	count := map[string]int{}
	safe := map[string]bool{} // evaluated for every row by some argument
	for _, f := range a.Aggs {
		if f.Arg != nil {
			countSubexprs(f.Arg, true, count, safe)
		}
	}
	sh := &sharedArgs{base: a.Child.Schema().NumFields()}
	index := map[string]int{}
	var pick func(e expr.Expr)
	pick = func(e expr.Expr) {
		c, ok := e.(*expr.Call)
		if !ok {
			return
		}
		k := exprKey(c)
		if count[k] >= 2 && (safe[k] || !expr.CanFail(c)) {
			if _, seen := index[k]; !seen {
				index[k] = len(sh.exprs)
				sh.exprs = append(sh.exprs, c)
			}
			return // the largest shared expression, not its parts
		}
		for _, x := range c.Args {
			pick(x)
		}
	}
	for _, f := range a.Aggs {
		if f.Arg != nil {
			pick(f.Arg)
		}
	}
	if len(sh.exprs) == 0 {
		return nil
	}
	sh.args = make([]expr.Expr, len(a.Aggs))
	for i, f := range a.Aggs {
		if f.Arg == nil {
			continue
		}
		r, err := sh.replace(f.Arg, index)
		if err != nil || !arrow.TypeEqual(r.DataType(), f.Arg.DataType()) {
			// The rebuilt call does not bind as the original did: keep
			// evaluating the arguments as they are.
			return nil
		}
		sh.args[i] = r
	}
	return sh
}

// lazyFn says a call evaluates its arguments after the first only for
// the rows that reach them (expr/lazy.go).
func lazyFn(fn string) bool {
	switch fn {
	case "case", "coalesce", "ifnull", "if", "nullif", "and", "or", "in":
		return true
	}
	return false
}

// countSubexprs counts every call in e by its key and marks those
// evaluated for every row (all: e is).
func countSubexprs(e expr.Expr, all bool, count map[string]int, safe map[string]bool) {
	c, ok := e.(*expr.Call)
	if !ok {
		return
	}
	k := exprKey(c)
	count[k]++
	if all {
		safe[k] = true
	}
	lazy := lazyFn(c.Fn)
	for i, x := range c.Args {
		countSubexprs(x, all && (!lazy || i == 0), count, safe)
	}
}

// replace rebuilds e with every shared subexpression read from its
// column.
func (sh *sharedArgs) replace(e expr.Expr, index map[string]int) (expr.Expr, error) {
	c, ok := e.(*expr.Call)
	if !ok {
		return e, nil
	}
	if k, ok := index[exprKey(c)]; ok {
		return expr.NewColumn(sh.base+k, c.DataType(), c.String()), nil
	}
	args := make([]expr.Expr, len(c.Args))
	changed := false
	for i, x := range c.Args {
		r, err := sh.replace(x, index)
		if err != nil {
			return nil, err
		}
		args[i] = r
		changed = changed || r != x
	}
	if !changed {
		return e, nil
	}
	return expr.Rebuild(c, args)
}

// exprKey identifies an expression by its structure: function, result
// type, column indexes and literal values with their types.
func exprKey(e expr.Expr) string {
	var b strings.Builder
	writeExprKey(&b, e)
	return b.String()
}

func writeExprKey(b *strings.Builder, e expr.Expr) {
	switch x := e.(type) {
	case *expr.Column:
		fmt.Fprintf(b, "#%d:%s", x.Index, x.Type)
	case *expr.Literal:
		fmt.Fprintf(b, "lit(%s:%s)", x.Type, x.String())
	case *expr.Call:
		fmt.Fprintf(b, "%s:%s(", x.Fn, x.Type)
		for i, a := range x.Args {
			if i > 0 {
				b.WriteByte(',')
			}
			writeExprKey(b, a)
		}
		b.WriteByte(')')
	default:
		// Anything else (a subquery's value) is never equal to another.
		fmt.Fprintf(b, "%T@%p", e, e)
	}
}

// arg returns aggregate i's argument as evaluated over extended batches.
func (sh *sharedArgs) arg(a *HashAggregate, i int) expr.Expr {
	if sh == nil || sh.args[i] == nil {
		return a.Aggs[i].Arg
	}
	return sh.args[i]
}

// extend returns b with the shared subexpressions as extra columns (b
// itself, retained, when there are none).
func (sh *sharedArgs) extend(ec *expr.Context, b arrow.RecordBatch) (arrow.RecordBatch, error) {
	if sh == nil {
		b.Retain()
		return b, nil
	}
	if int(b.NumCols()) != sh.base {
		return nil, fmt.Errorf("%w: aggregate input of %d columns, planned with %d", ErrInternal, b.NumCols(), sh.base)
	}
	extra, err := evalExprs(ec, sh.exprs, b)
	if err != nil {
		return nil, err
	}
	cols := append(append(make([]arrow.Array, 0, sh.base+len(extra)), b.Columns()...), extra...)
	fs := append([]arrow.Field{}, b.Schema().Fields()...)
	for k, e := range sh.exprs {
		fs = append(fs, arrow.Field{Name: fmt.Sprintf("shared$%d", k), Type: e.DataType(), Nullable: true})
	}
	out := array.NewRecordBatch(arrow.NewSchema(fs, nil), cols, b.NumRows())
	releaseArrays(extra)
	return out, nil
}
