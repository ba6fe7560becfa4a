package sql

import (
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/planner"
)

// bindScalar binds n against a plain scope.
func (b *Binder) bindScalar(n ast.ExprNode, sc *scope) (expr.Expr, error) {
	return b.bindValue(n, &exprCtx{sc: sc})
}

// bindBool binds a condition and checks it is boolean.
func (b *Binder) bindBool(n ast.ExprNode, c *exprCtx, where string) (expr.Expr, error) {
	e, err := b.bindValue(n, c)
	if err != nil {
		return nil, err
	}
	switch e.DataType().ID() {
	case arrow.BOOL:
		return e, nil
	case arrow.NULL:
		// WHERE NULL: operators read conditions as Boolean arrays.
		c, err := expr.NewCast(e, arrow.FixedWidthTypes.Boolean)
		if err != nil {
			return nil, errs.Wrap(errs.Semantic, "%w", err)
		}
		return expr.ConstantFold(c, b.alloc)
	}
	// MySQL treats a number as true when non-zero.
	zero := expr.NewLiteral(int64(0), arrow.PrimitiveTypes.Int64)
	ne, err := expr.NewCall("<>", e, zero)
	if err != nil {
		return nil, b.errAt(n, errs.ErNotSupportedYet, "%s condition %s of type %s (fsql reads a number or a boolean as a truth value): %w", where, e, e.DataType(), err)
	}
	return ne, nil
}

// bindValue binds n and folds its constant parts.
func (b *Binder) bindValue(n ast.ExprNode, c *exprCtx) (expr.Expr, error) {
	e, err := b.bindExpr(n, c)
	if err != nil {
		return nil, err
	}
	f, err := planner.FoldConstants(e, b.alloc) // expr.ConstantFold in one pass
	if err != nil {
		return nil, errs.Wrap(errs.Semantic, "%w", err)
	}
	return f, nil
}

func (b *Binder) call(fn string, args ...expr.Expr) (expr.Expr, error) {
	e, err := expr.NewCall(fn, args...)
	if err != nil {
		return nil, errs.Wrap(errs.Semantic, "%w", err)
	}
	return e, nil
}

func (b *Binder) bindExpr(n ast.ExprNode, c *exprCtx) (expr.Expr, error) {
	if c.agg != nil && !hasAggOrWindow(n) && !hasSubquery(n) && !hasGrouping(n) {
		// After aggregation an aggregate-free expression must be a group
		// key, be built from group keys, or be constant.
		e, err := b.bindExpr(n, c.agg.pre)
		if err == nil {
			if idx, ok := c.agg.groupKeys[exprKey(e)]; ok {
				return c.sc.column(idx), nil
			}
			if len(expr.Columns(e)) == 0 { // constants and outer references are constant per group
				return e, nil
			}
		}
		if cn, ok := n.(*ast.ColumnNameExpr); ok {
			if err != nil {
				if a := c.aliases[strings.ToLower(cn.Name.Name.O)]; a != nil && cn.Name.Table.O == "" {
					return a, nil
				}
				var unknown unknownColumnError
				if errors.As(err, &unknown) && len(c.aliases) > 0 {
					// Suggest the select aliases too, which the
					// FROM scope did not know.
					return nil, b.unknownColumn(cn.Name, &exprCtx{sc: c.agg.pre.sc, aliases: c.aliases}, cn.OriginTextPosition())
				}
				return nil, err
			}
			if a := c.aliases[strings.ToLower(cn.Name.Name.O)]; a != nil && cn.Name.Table.O == "" {
				// A column that is not a group key: MySQL takes the
				// select alias of that name (max(v) AS v ... HAVING v > 1).
				return a, nil
			}
			if len(c.agg.groupKeys) == 0 {
				// MySQL tells an aggregate query without GROUP BY apart.
				return nil, b.errAt(cn, errs.ErMixOfGroupFuncAndFields, "column '%s' is not aggregated in a query that aggregates without GROUP BY; wrap it in an aggregate (ANY_VALUE for any one value) or add GROUP BY", columnText(cn.Name))
			}
			return nil, b.errAt(cn, errs.ErWrongFieldWithGroup, "column '%s' is neither grouped nor aggregated; add it to GROUP BY or wrap it in an aggregate", columnText(cn.Name))
		}
	}
	switch x := n.(type) {
	case *ast.ParenthesesExpr:
		return b.bindExpr(x.Expr, c)
	case *ast.PositionExpr:
		return nil, errs.New(errs.ErParseError, "position %d is only allowed directly in ORDER BY or GROUP BY", x.N)
	case *ast.ColumnNameExpr:
		return b.bindColumn(x.Name, c, x.OriginTextPosition())
	case *driver.ParamMarkerExpr:
		return b.param(x)
	case *driver.ValueExpr:
		lit, err := literal(x)
		if e, ok := err.(*errs.Error); ok {
			return nil, placed(b.env.Source, exprOffset(x), e)
		}
		return lit, err
	case *ast.AggregateFuncExpr:
		if c.agg == nil {
			return nil, errs.New(errs.ErInvalidGroupFuncUse, "aggregate %s is not allowed here", restore(x))
		}
		call, err := b.bindAggCall(x, c.agg.pre)
		if err != nil {
			return nil, err
		}
		idx, ok := c.agg.aggs[aggKey(call)]
		if !ok {
			return nil, fmt.Errorf("%w: aggregate %s was not collected", exec.ErrInternal, restore(x))
		}
		return c.sc.column(idx), nil
	case *ast.WindowFuncExpr:
		e, ok := c.windows[x]
		if !ok {
			return nil, errs.New(errs.ErWindowInvalidWindowFuncUse, "window function %s is not allowed here", restore(x))
		}
		return e, nil
	case *ast.BinaryOperationExpr:
		return b.bindBinary(x, c)
	case *ast.UnaryOperationExpr:
		arg, err := b.bindExpr(x.V, c)
		if err != nil {
			return nil, err
		}
		switch x.Op {
		case opcode.Minus:
			return b.call("neg", arg)
		case opcode.Plus:
			return arg, nil
		case opcode.Not, opcode.Not2:
			return b.call("not", arg)
		}
		return nil, b.errAt(x, errs.Unsupported, "the unary operator %s in %s (fsql has -, +, ~, NOT and !)", x.Op, restore(x))
	case *ast.IsNullExpr:
		arg, err := b.bindExpr(x.Expr, c)
		if err != nil {
			return nil, err
		}
		if x.Not {
			return b.call("isnotnull", arg)
		}
		return b.call("isnull", arg)
	case *ast.IsTruthExpr:
		arg, err := b.bindExpr(x.Expr, c)
		if err != nil {
			return nil, err
		}
		if arg.DataType().ID() != arrow.BOOL && arg.DataType().ID() != arrow.NULL {
			// MySQL reads a number as a truth value: 5 IS TRUE, 0 IS
			// FALSE. Comparing 5 with TRUE (1) would say otherwise.
			if arg, err = b.call("<>", arg, expr.NewLiteral(int64(0), arrow.PrimitiveTypes.Int64)); err != nil {
				return nil, err
			}
		}
		v := expr.NewLiteral(x.True != 0, arrow.FixedWidthTypes.Boolean)
		e, err := b.call("<=>", arg, v)
		if err != nil || !x.Not {
			return e, err
		}
		return b.call("not", e)
	case *ast.BetweenExpr:
		v, err := b.bindExpr(x.Expr, c)
		if err != nil {
			return nil, err
		}
		lo, err := b.bindExpr(x.Left, c)
		if err != nil {
			return nil, err
		}
		hi, err := b.bindExpr(x.Right, c)
		if err != nil {
			return nil, err
		}
		ge, err := b.call(">=", v, lo)
		if err != nil {
			return nil, err
		}
		le, err := b.call("<=", v, hi)
		if err != nil {
			return nil, err
		}
		e, err := b.call("and", ge, le)
		if err != nil || !x.Not {
			return e, err
		}
		return b.call("not", e)
	case *ast.PatternInExpr:
		if x.Sel != nil {
			e, err := b.bindInSubquery(x, c)
			return e, b.within(x, err)
		}
		args := []expr.Expr{}
		v, err := b.bindExpr(x.Expr, c)
		if err != nil {
			return nil, err
		}
		args = append(args, v)
		for _, it := range x.List {
			e, err := b.bindExpr(it, c)
			if err != nil {
				return nil, err
			}
			args = append(args, e)
		}
		e, err := b.call("in", args...)
		if err != nil || !x.Not {
			return e, err
		}
		return b.call("not", e)
	case *ast.PatternLikeOrIlikeExpr:
		if !x.IsLike {
			return nil, b.errAt(x, errs.Unsupported, "ILIKE in %s: write LOWER(x) LIKE LOWER(pattern)", restore(x))
		}
		if x.Escape != '\\' && x.Escape != 0 {
			return nil, b.errAt(x, errs.Unsupported, "LIKE ... ESCAPE '%c' in %s: fsql's LIKE escapes with \\ only; write the pattern with \\ before %% and _", x.Escape, restore(x))
		}
		v, err := b.bindExpr(x.Expr, c)
		if err != nil {
			return nil, err
		}
		p, err := b.bindExpr(x.Pattern, c)
		if err != nil {
			return nil, err
		}
		e, err := b.call("like", v, p)
		if err != nil || !x.Not {
			return e, err
		}
		return b.call("not", e)
	case *ast.CaseExpr:
		return b.bindCase(x, c)
	case *ast.FuncCastExpr:
		v, err := b.bindExpr(x.Expr, c)
		if err != nil {
			return nil, err
		}
		t, err := castType(x)
		if e, ok := err.(*errs.Error); ok {
			err = placed(b.env.Source, exprOffset(x), e)
		}
		if err != nil {
			return nil, err
		}
		e, err := expr.NewCast(v, t)
		if err != nil {
			return nil, errs.Wrap(errs.Semantic, "%w", err)
		}
		if n := x.Tp.GetFlen(); t.ID() == arrow.STRING && n >= 0 {
			// CAST(x AS CHAR(n)) keeps the first n characters.
			return b.call("substr", e, expr.NewLiteral(int64(1), arrow.PrimitiveTypes.Int64), expr.NewLiteral(int64(n), arrow.PrimitiveTypes.Int64))
		}
		if fsp := x.Tp.GetDecimal(); (t.ID() == arrow.TIMESTAMP || t.ID() == arrow.TIME64) && fsp >= 0 && fsp < 6 {
			// CAST(x AS DATETIME(n)) and AS TIME(n) round to n digits of
			// the second.
			return b.callAt(x, "round_fsp", e, expr.NewLiteral(int64(fsp), arrow.PrimitiveTypes.Int64))
		}
		return e, nil
	case *ast.SetCollationExpr:
		v, err := b.bindExpr(x.Expr, c)
		if err != nil {
			return nil, err
		}
		coll, err := expr.LookupCollation(x.Collate)
		if err != nil {
			return nil, errs.Wrap(errs.Unsupported, "%w in %s", err, restore(x))
		}
		e, err := expr.NewCast(v, coll.Type())
		if err != nil {
			return nil, errs.Wrap(errs.Semantic, "%w in %s", err, restore(x))
		}
		return e, nil
	case *ast.FuncCallExpr:
		return b.bindFunc(x, c)
	case *ast.SubqueryExpr:
		e, err := b.bindScalarSubquery(x, c)
		return e, b.within(x, err)
	case *ast.ExistsSubqueryExpr:
		e, err := b.bindExists(x, c)
		return e, b.within(x, err)
	case *ast.CompareSubqueryExpr:
		return nil, b.errAt(x, errs.Unsupported, "a comparison with ANY/SOME/ALL (subquery) in %s: write x IN (subquery), NOT IN, EXISTS, or compare with (SELECT MIN(...)) or (SELECT MAX(...))", restore(x))
	case *ast.DefaultExpr, *ast.VariableExpr, *ast.RowExpr, *ast.PatternRegexpExpr:
		return nil, b.errAt(n, errs.Unsupported, "%s %s%s", exprKind(n), restore(n), insteadOf(n))
	}
	return nil, b.errAt(n, errs.Unsupported, "the expression %s", restore(n))
}

var binaryOps = map[opcode.Op]string{
	opcode.Plus: "+", opcode.Minus: "-", opcode.Mul: "*", opcode.Div: "/", opcode.Mod: "%",
	opcode.EQ: "=", opcode.NE: "<>", opcode.LT: "<", opcode.LE: "<=", opcode.GT: ">", opcode.GE: ">=",
	opcode.NullEQ: "<=>", opcode.LogicAnd: "and", opcode.LogicOr: "or",
}

func (b *Binder) bindBinary(x *ast.BinaryOperationExpr, c *exprCtx) (expr.Expr, error) {
	if isChainOp(x) {
		return b.bindChain(x, c) // boolchain.go: flat, balanced, OR of equalities as IN
	}
	l, err := b.bindExpr(x.L, c)
	if err != nil {
		return nil, err
	}
	r, err := b.bindExpr(x.R, c)
	if err != nil {
		return nil, err
	}
	if x.Op == opcode.IntDiv {
		return b.call("div", l, r)
	}
	fn, ok := binaryOps[x.Op]
	if !ok {
		return nil, b.errAt(x, errs.Unsupported, "the operator %s in %s", x.Op, restore(x))
	}
	return b.call(fn, l, r)
}

func (b *Binder) bindCase(x *ast.CaseExpr, c *exprCtx) (expr.Expr, error) {
	var val expr.Expr
	if x.Value != nil {
		v, err := b.bindExpr(x.Value, c)
		if err != nil {
			return nil, err
		}
		val = v
	}
	var args []expr.Expr
	for _, w := range x.WhenClauses {
		cond, err := b.bindExpr(w.Expr, c)
		if err != nil {
			return nil, err
		}
		if val != nil {
			if cond, err = b.call("=", val, cond); err != nil {
				return nil, err
			}
		}
		res, err := b.bindExpr(w.Result, c)
		if err != nil {
			return nil, err
		}
		args = append(args, cond, res)
	}
	if x.ElseClause != nil {
		e, err := b.bindExpr(x.ElseClause, c)
		if err != nil {
			return nil, err
		}
		args = append(args, e)
	} else {
		args = append(args, expr.Null(arrow.Null))
	}
	return b.call("case", args...)
}

// bindColumn resolves a column reference written at offset of the
// statement's source.
func (b *Binder) bindColumn(n *ast.ColumnName, c *exprCtx, offset int) (expr.Expr, error) {
	for s, depth := c.sc, 0; s != nil; s, depth = s.outer, depth+1 {
		idx, err := s.resolve(n.Table.O, n.Name.O)
		if err != nil {
			if at := b.at(offset); at != "" {
				return nil, b.atPos(errs.Wrap(errs.Semantic, "%w (%s)", err, at), offset)
			}
			return nil, err
		}
		if idx < 0 {
			continue
		}
		if depth == 0 {
			return c.sc.column(idx), nil
		}
		return newOuterColumn(s, depth, idx), nil
	}
	if n.Table.O == "" {
		if e := c.aliases[strings.ToLower(n.Name.O)]; e != nil {
			return e, nil
		}
	}
	return nil, b.unknownColumn(n, c, offset)
}

func columnText(n *ast.ColumnName) string { return qualified(n.Table.O, n.Name.O) }

// literal converts a parser literal to a typed constant. fsql's strings
// are UTF-8 (or bytes): a literal in another character set (_latin1'a')
// would need converting, so it fails rather than be read as UTF-8.
func literal(v *driver.ValueExpr) (expr.Expr, error) {
	if cs := v.Type.GetCharset(); !utf8Charset(cs) {
		return nil, errs.New(errs.Unsupported, "a literal in character set %s (%s): fsql's strings are utf8mb4; drop the introducer", cs, restore(v))
	}
	switch x := v.GetValue().(type) {
	case nil:
		return expr.Null(arrow.Null), nil
	case int64:
		return expr.NewLiteral(x, arrow.PrimitiveTypes.Int64), nil
	case uint64:
		if x > 1<<63-1 {
			return nil, errs.New(errs.Unsupported, "the integer literal %d is past BIGINT (fsql has BIGINT UNSIGNED only from data and CASTs): write it as a decimal, %d.0, or CAST('%d' AS UNSIGNED)", x, x, x)
		}
		return expr.NewLiteral(int64(x), arrow.PrimitiveTypes.Int64), nil
	case float64:
		return expr.NewLiteral(x, arrow.PrimitiveTypes.Float64), nil
	case string:
		return expr.NewLiteral(x, arrow.BinaryTypes.String), nil
	case []byte:
		return expr.NewLiteral(string(x), arrow.BinaryTypes.String), nil
	case *driver.MyDecimal:
		return decimalLiteral(x.String())
	}
	return nil, errs.New(errs.Unsupported, "the literal %s: write a number, a string or a DATE/TIMESTAMP/TIME literal", restore(v))
}

// decimalLiteral types "12.50" as DECIMAL(4,2), as MySQL does.
func decimalLiteral(s string) (expr.Expr, error) {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	intPart, frac, _ := strings.Cut(s, ".")
	digits := strings.TrimLeft(intPart, "0") + frac
	scale := len(frac)
	prec := len(digits)
	if prec < scale {
		prec = scale
	}
	if prec == 0 {
		prec = 1
	}
	if prec > 38 {
		return nil, errs.New(errs.ErNotSupportedYet, "decimal literal %s has more than 38 digits (fsql's DECIMAL holds 38; MySQL's 65)", s)
	}
	bi, ok := new(big.Int).SetString(intPart+frac, 10)
	if !ok {
		return nil, errs.New(errs.ErWrongValue, "bad decimal literal %s", s)
	}
	if neg {
		bi.Neg(bi)
	}
	return expr.NewLiteral(decimal128.FromBigInt(bi), &arrow.Decimal128Type{Precision: int32(prec), Scale: int32(scale)}), nil
}

// utf8Charset reports a character set whose strings fsql holds as they are.
func utf8Charset(cs string) bool {
	switch strings.ToLower(cs) {
	case "", "utf8mb4", "utf8", "utf8mb3", "binary":
		return true
	}
	return false
}

func castType(x *ast.FuncCastExpr) (arrow.DataType, error) {
	tp := x.Tp
	if cs := tp.GetCharset(); !utf8Charset(cs) {
		return nil, errs.New(errs.Unsupported, "CAST to character set %s in %s: fsql's strings are utf8mb4; write CAST(x AS CHAR)", cs, restore(x))
	}
	switch tp.GetType() {
	case mysql.TypeLonglong, mysql.TypeLong, mysql.TypeShort, mysql.TypeTiny, mysql.TypeInt24:
		if mysql.HasUnsignedFlag(tp.GetFlag()) {
			return arrow.PrimitiveTypes.Uint64, nil // BIGINT UNSIGNED
		}
		return arrow.PrimitiveTypes.Int64, nil
	case mysql.TypeDatetime:
		return expr.DatetimeType, nil
	case mysql.TypeDuration:
		return expr.TimeType, nil
	case mysql.TypeNewDecimal:
		p, s := tp.GetFlen(), tp.GetDecimal()
		if p <= 0 {
			p = 10
		}
		if s < 0 {
			s = 0
		}
		switch {
		case s > p:
			return nil, errs.New(errs.ErMBiggerThanD, "DECIMAL(%d,%d) in CAST: the scale must not exceed the precision", p, s)
		case p > 65:
			return nil, errs.New(errs.ErTooBigPrecision, "DECIMAL(%d,%d) in CAST: the precision is at most 65", p, s)
		case p > 38:
			return nil, errs.New(errs.ErNotSupportedYet, "DECIMAL(%d,%d) in CAST: fsql's DECIMAL holds at most 38 digits (MySQL's 65)", p, s)
		}
		return &arrow.Decimal128Type{Precision: int32(p), Scale: int32(s)}, nil
	case mysql.TypeDouble, mysql.TypeFloat:
		return arrow.PrimitiveTypes.Float64, nil
	case mysql.TypeDate:
		return arrow.FixedWidthTypes.Date32, nil
	case mysql.TypeVarchar, mysql.TypeVarString, mysql.TypeString, mysql.TypeBlob:
		if tp.GetCharset() == "binary" && tp.GetFlen() >= 0 {
			// MySQL pads BINARY(n) with zero bytes.
			return nil, errs.New(errs.Unsupported, "CAST to BINARY(%d) in %s (MySQL pads it with zero bytes): write CAST(x AS BINARY)", tp.GetFlen(), restore(x))
		}
		return arrow.BinaryTypes.String, nil
	}
	return nil, errs.New(errs.Unsupported, "CAST to %s in %s: fsql casts to SIGNED, UNSIGNED, DECIMAL, DOUBLE, FLOAT, CHAR, BINARY, DATE, DATETIME and TIME", tp.String(), restore(x))
}

// positionOf reports whether n is a position (ORDER BY 2).
func positionOf(n ast.ExprNode) (int, bool) {
	if p, ok := n.(*ast.PositionExpr); ok && p.P == nil {
		return p.N, true
	}
	if v, ok := n.(*driver.ValueExpr); ok {
		switch x := v.GetValue().(type) {
		case int64:
			return int(x), true
		case uint64:
			return int(x), true
		}
	}
	return 0, false
}

func isNonNullConst(n ast.ExprNode) bool {
	v, ok := n.(*driver.ValueExpr)
	return ok && v.GetValue() != nil
}

func (b *Binder) constInt(n ast.ExprNode, what string) (int64, error) {
	if m, ok := n.(*driver.ParamMarkerExpr); ok {
		p, err := b.param(m)
		if err != nil {
			return 0, err
		}
		if l, ok := p.(*expr.Literal); ok {
			if v, ok := l.Value.(int64); ok && l.Type.ID() == arrow.INT64 && v >= 0 {
				return v, nil
			}
		}
		return 0, b.atPos(errs.New(errs.ErWrongArguments, "%s must be a non-negative integer, got the argument %s", what, p), m.Offset)
	}
	if v, ok := n.(*driver.ValueExpr); ok {
		switch x := v.GetValue().(type) {
		case int64:
			return x, nil
		case uint64:
			return int64(x), nil
		}
	}
	return 0, b.errAt(n, errs.ErWrongArguments, "%s must be an integer constant, got %s", what, restore(n))
}

// restore renders an AST node back to SQL text, for names and messages.
func restore(n ast.Node) string {
	var sb strings.Builder
	if err := n.Restore(format.NewRestoreCtx(format.RestoreStringSingleQuotes|format.RestoreStringWithoutCharset|format.RestoreKeyWordLowercase|format.RestoreNameBackQuotes, &sb)); err != nil {
		return fmt.Sprintf("%T", n)
	}
	return strings.ReplaceAll(sb.String(), "`", "")
}

// exprKey identifies a bound expression structurally.
func exprKey(e expr.Expr) string { return planner.ExprKey(e) }

func hasGrouping(n ast.ExprNode) bool {
	found := false
	n.Accept(&groupingFinder{found: &found})
	return found
}

type groupingFinder struct{ found *bool }

func (v *groupingFinder) Enter(n ast.Node) (ast.Node, bool) {
	if f, ok := n.(*ast.FuncCallExpr); ok && f.FnName.L == "grouping" {
		*v.found = true
		return n, true
	}
	return n, false
}

func (v *groupingFinder) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// exprKind names an expression form fsql does not evaluate, for its
// error.
func exprKind(n ast.ExprNode) string {
	switch n.(type) {
	case *ast.DefaultExpr:
		return "DEFAULT outside INSERT ... VALUES:"
	case *ast.VariableExpr:
		return "the variable"
	case *ast.RowExpr:
		return "the row constructor"
	case *ast.PatternRegexpExpr:
		return "REGEXP/RLIKE in"
	}
	return "the expression"
}

// insteadOf says what to write instead of an expression form fsql does
// not evaluate.
func insteadOf(n ast.ExprNode) string {
	switch n.(type) {
	case *ast.VariableExpr:
		return " (fsql has no user or system variables; SHOW VARIABLES lists its settings, SET changes them)"
	case *ast.RowExpr:
		return " (compare column by column: a = c AND b = d)"
	case *ast.PatternRegexpExpr:
		return " (use LIKE with % and _)"
	}
	return ""
}
