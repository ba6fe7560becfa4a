package sql

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/exec/expr"
)

// scalarFuncs maps SQL function names to evaluator names where they are
// one-to-one.
var scalarFuncs = map[string]string{
	"substr": "substr", "substring": "substr", "mid": "substr",
	"concat": "concat", "upper": "upper", "ucase": "upper", "lower": "lower", "lcase": "lower",
	"trim": "trim", "ltrim": "ltrim", "rtrim": "rtrim", "length": "length", "octet_length": "length",
	"char_length": "char_length", "character_length": "char_length",
	"coalesce": "coalesce", "nullif": "nullif", "if": "if", "ifnull": "coalesce",
	"round": "round", "abs": "abs", "floor": "floor", "ceil": "ceil", "ceiling": "ceil",
	"year": "year", "month": "month", "day": "day", "dayofmonth": "day", "quarter": "quarter",
}

func (b *Binder) bindFunc(x *ast.FuncCallExpr, c *exprCtx) (expr.Expr, error) {
	name := strings.ToLower(x.FnName.L)
	switch name {
	case "date_add", "adddate", "date_sub", "subdate":
		return b.bindDateArith(x, c, name == "date_sub" || name == "subdate")
	case "extract":
		if len(x.Args) != 2 {
			return nil, fmt.Errorf("%w: EXTRACT needs a unit and a value", exec.ErrPlan)
		}
		u, ok := x.Args[0].(*ast.TimeUnitExpr)
		if !ok {
			return nil, fmt.Errorf("%w: EXTRACT unit %s", exec.ErrNotImplemented, restore(x.Args[0]))
		}
		fn := map[ast.TimeUnitType]string{ast.TimeUnitYear: "year", ast.TimeUnitMonth: "month", ast.TimeUnitDay: "day", ast.TimeUnitQuarter: "quarter"}[u.Unit]
		if fn == "" {
			return nil, fmt.Errorf("%w: EXTRACT(%s FROM ...)", exec.ErrNotImplemented, u.Unit.String())
		}
		v, err := b.bindExpr(x.Args[1], c)
		if err != nil {
			return nil, err
		}
		return b.call(fn, v)
	case "grouping":
		return b.bindGrouping(x, c)
	case ast.DateLiteral:
		v, err := b.bindExpr(x.Args[0], c)
		if err != nil {
			return nil, err
		}
		return expr.NewCast(v, arrow.FixedWidthTypes.Date32)
	}
	fn, ok := scalarFuncs[name]
	if !ok {
		return nil, fmt.Errorf("%w: function %s", exec.ErrNotImplemented, x.FnName.O)
	}
	args := make([]expr.Expr, 0, len(x.Args))
	for _, a := range x.Args {
		if _, isDir := a.(*ast.TrimDirectionExpr); isDir {
			return nil, fmt.Errorf("%w: TRIM with a direction or a remove string", exec.ErrNotImplemented)
		}
		e, err := b.bindExpr(a, c)
		if err != nil {
			return nil, err
		}
		args = append(args, e)
	}
	if (fn == "trim" || fn == "ltrim" || fn == "rtrim") && len(args) != 1 {
		return nil, fmt.Errorf("%w: TRIM with a remove string", exec.ErrNotImplemented)
	}
	return b.call(fn, args...)
}

func (b *Binder) bindDateArith(x *ast.FuncCallExpr, c *exprCtx, sub bool) (expr.Expr, error) {
	if len(x.Args) != 3 {
		if len(x.Args) == 2 { // adddate(d, n): n days
			x = &ast.FuncCallExpr{FnName: x.FnName, Args: []ast.ExprNode{x.Args[0], x.Args[1], &ast.TimeUnitExpr{Unit: ast.TimeUnitDay}}}
		} else {
			return nil, fmt.Errorf("%w: %s needs a date, an amount and a unit", exec.ErrPlan, x.FnName.O)
		}
	}
	d, err := b.bindExpr(x.Args[0], c)
	if err != nil {
		return nil, err
	}
	if d.DataType().ID() == arrow.STRING {
		if d, err = expr.NewCast(d, arrow.FixedWidthTypes.Date32); err != nil {
			return nil, fmt.Errorf("%w: %v", exec.ErrPlan, err)
		}
	}
	n, err := b.bindExpr(x.Args[1], c)
	if err != nil {
		return nil, err
	}
	u, ok := x.Args[2].(*ast.TimeUnitExpr)
	if !ok {
		return nil, fmt.Errorf("%w: interval unit %s", exec.ErrNotImplemented, restore(x.Args[2]))
	}
	if sub {
		if n, err = b.call("neg", n); err != nil {
			return nil, err
		}
	}
	switch u.Unit {
	case ast.TimeUnitDay:
		return b.call("date_add", d, n)
	case ast.TimeUnitWeek:
		seven := expr.NewLiteral(int64(7), arrow.PrimitiveTypes.Int64)
		if n, err = b.call("*", n, seven); err != nil {
			return nil, err
		}
		return b.call("date_add", d, n)
	case ast.TimeUnitMonth:
		return b.call("date_add_month", d, n)
	case ast.TimeUnitYear:
		twelve := expr.NewLiteral(int64(12), arrow.PrimitiveTypes.Int64)
		if n, err = b.call("*", n, twelve); err != nil {
			return nil, err
		}
		return b.call("date_add_month", d, n)
	}
	return nil, fmt.Errorf("%w: interval unit %s (supported: DAY, WEEK, MONTH, YEAR)", exec.ErrNotImplemented, u.Unit.String())
}

// bindGrouping binds grouping(col): 1 when col is rolled up in the row's
// grouping set. It reads the Aggregate's grouping id, never NULLs, since
// dimension columns hold real NULLs.
func (b *Binder) bindGrouping(x *ast.FuncCallExpr, c *exprCtx) (expr.Expr, error) {
	if c.agg == nil || c.agg.gidCol < 0 {
		return nil, fmt.Errorf("%w: grouping() is only allowed in a query with GROUP BY ... WITH ROLLUP", exec.ErrPlan)
	}
	if len(x.Args) != 1 {
		return nil, fmt.Errorf("%w: grouping() with %d arguments", exec.ErrNotImplemented, len(x.Args))
	}
	e, err := b.bindExpr(x.Args[0], c.agg.pre)
	if err != nil {
		return nil, err
	}
	idx, ok := c.agg.groupKeys[exprKey(e)]
	if !ok {
		return nil, fmt.Errorf("%w: the argument of grouping(%s) is not a GROUP BY expression", exec.ErrPlan, restore(x.Args[0]))
	}
	gid := c.sc.column(c.agg.gidCol)
	return b.call("getbit", gid, expr.NewLiteral(int64(idx), arrow.PrimitiveTypes.Int64))
}
