package sql

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/internal/suggest"
	"github.com/fsql-dev/fsql/planner"
)

// The function registry: every function name a query may call, with its
// kind and how it binds. Binding, SHOW BUILTINS and the suggestions for a
// mistyped name all read this one table, so they cannot disagree.

// builtinKind says where a function may appear.
type builtinKind int

const (
	// scalarKind: an ordinary function of its arguments.
	scalarKind builtinKind = iota
	// aggregateKind: folds the rows of a group; also a window function
	// (OVER (...)) unless noWindow is set.
	aggregateKind
	// windowKind: only with OVER (...).
	windowKind
)

func (k builtinKind) String() string {
	return [...]string{"scalar", "aggregate", "window"}[k]
}

// builtin is one function name.
type builtin struct {
	kind builtinKind
	// bind binds a scalar call (nil for the other kinds, which the
	// aggregate and window binders handle).
	bind func(b *Binder, name string, x *ast.FuncCallExpr, c *exprCtx) (expr.Expr, error)
	// fn is the expression function a plain scalar binds to.
	fn string
	// agg is the aggregate fsql computes for an aggregate name.
	agg string
	// noWindow: an aggregate MySQL does not allow OVER (...) (GROUP_CONCAT).
	noWindow bool
	// hidden: an internal name the parser produces for literal syntax
	// (DATE '...'), not listed by SHOW BUILTINS nor suggested.
	hidden bool
}

// builtins maps every lower-case SQL name to its entry.
var builtins map[string]builtin

// plain binds a function whose arguments bind as they are to the
// expression function fn.
func plain(fn string) builtin {
	return builtin{fn: fn, bind: func(b *Binder, _ string, x *ast.FuncCallExpr, c *exprCtx) (expr.Expr, error) {
		args, err := b.bindArgs(x.Args, c)
		if err != nil {
			return nil, err
		}
		return b.callAt(x, fn, args...)
	}}
}

func special(f func(b *Binder, name string, x *ast.FuncCallExpr, c *exprCtx) (expr.Expr, error)) builtin {
	return builtin{bind: f}
}

func init() {
	builtins = map[string]builtin{}
	// Scalars that map one to one onto an expression function (several
	// names for one function are MySQL's synonyms).
	for fn, names := range map[string][]string{
		// strings
		"substr": {"substr", "substring", "mid"}, "concat": {"concat"}, "concat_ws": {"concat_ws"},
		"upper": {"upper", "ucase"}, "lower": {"lower", "lcase"},
		"length": {"length", "octet_length"}, "char_length": {"char_length", "character_length"},
		"replace": {"replace"}, "lpad": {"lpad"}, "rpad": {"rpad"}, "left": {"left"}, "right": {"right"},
		"locate": {"locate"}, "instr": {"instr"}, "position": {"position"}, "reverse": {"reverse"},
		"repeat": {"repeat"}, "space": {"space"}, "ascii": {"ascii"}, "strcmp": {"strcmp"},
		"substring_index": {"substring_index"},
		// conditionals
		"coalesce": {"coalesce", "ifnull"}, "nullif": {"nullif"}, "if": {"if"},
		"greatest": {"greatest"}, "least": {"least"},
		// math
		"round": {"round"}, "abs": {"abs"}, "floor": {"floor"}, "ceil": {"ceil", "ceiling"},
		"sqrt": {"sqrt"}, "pow": {"pow", "power"}, "exp": {"exp"}, "ln": {"ln"}, "log": {"log"},
		"log2": {"log2"}, "log10": {"log10"}, "sign": {"sign"}, "pi": {"pi"}, "truncate": {"truncate"},
		"sin": {"sin"}, "cos": {"cos"}, "tan": {"tan"}, "cot": {"cot"}, "asin": {"asin"}, "acos": {"acos"},
		"atan": {"atan"}, "atan2": {"atan2"}, "degrees": {"degrees"}, "radians": {"radians"},
		// dates
		"year": {"year"}, "month": {"month"}, "day": {"day", "dayofmonth"}, "quarter": {"quarter"},
		"dayofweek": {"dayofweek"}, "weekday": {"weekday"}, "dayofyear": {"dayofyear"},
		"week": {"week"}, "yearweek": {"yearweek"}, "weekofyear": {"weekofyear"},
		"dayname": {"dayname"}, "monthname": {"monthname"}, "last_day": {"last_day"},
		"hour": {"hour"}, "minute": {"minute"}, "second": {"second"}, "microsecond": {"microsecond"},
		"datediff": {"datediff"}, "date_format": {"date_format"}, "str_to_date": {"str_to_date"},
		"from_unixtime": {"from_unixtime"}, "date": {"date"}, "timestamp": {"timestamp"},
		"to_days": {"to_days"}, "from_days": {"from_days"},
		"time": {"time"}, "timediff": {"timediff"}, "addtime": {"addtime"}, "subtime": {"subtime"},
		"time_to_sec": {"time_to_sec"}, "sec_to_time": {"sec_to_time"},
	} {
		for _, n := range names {
			builtins[n] = plain(fn)
		}
	}
	for _, n := range []string{"date_add", "adddate", "date_sub", "subdate"} {
		builtins[n] = special((*Binder).bindDateArith)
	}
	for _, n := range []string{"now", "current_timestamp", "localtime", "localtimestamp", "utc_timestamp",
		"curdate", "current_date", "utc_date"} {
		builtins[n] = special((*Binder).bindNow)
	}
	for _, n := range []string{"trim", "ltrim", "rtrim"} {
		builtins[n] = special((*Binder).bindTrim)
	}
	builtins["unix_timestamp"] = special((*Binder).bindUnixTimestamp)
	builtins["extract"] = special((*Binder).bindExtract)
	builtins["timestampdiff"] = special((*Binder).bindTimestampDiff)
	builtins["timestampadd"] = special((*Binder).bindTimestampAdd)
	builtins["grouping"] = special((*Binder).bindGrouping)
	builtins[ast.DateLiteral] = builtin{bind: (*Binder).bindTypedLiteral, hidden: true}
	builtins[ast.TimestampLiteral] = builtin{bind: (*Binder).bindTypedLiteral, hidden: true}
	builtins[ast.TimeLiteral] = builtin{bind: (*Binder).bindTypedLiteral, hidden: true}
	// ANY_VALUE is a scalar pass-through in a query without aggregation
	// and an aggregate (any value of the group) in one with, as in MySQL.
	builtins["any_value"] = builtin{kind: aggregateKind, agg: "any_value", bind: (*Binder).bindAnyValue}

	// Aggregates. STD and STDDEV are MySQL's synonyms of STDDEV_POP,
	// VARIANCE of VAR_POP (the population forms).
	for agg, names := range map[string][]string{
		"sum": {"sum"}, "avg": {"avg"}, "min": {"min"}, "max": {"max"}, "count": {"count"},
		"stddev_samp": {"stddev_samp"}, "stddev_pop": {"stddev_pop", "stddev", "std"},
		"var_samp": {"var_samp"}, "var_pop": {"var_pop", "variance"},
		"bit_and": {"bit_and"}, "bit_or": {"bit_or"}, "bit_xor": {"bit_xor"},
	} {
		for _, n := range names {
			builtins[n] = builtin{kind: aggregateKind, agg: agg}
		}
	}
	builtins["group_concat"] = builtin{kind: aggregateKind, agg: "group_concat", noWindow: true}
	for _, n := range []string{"row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile",
		"lag", "lead", "first_value", "last_value", "nth_value"} {
		builtins[n] = builtin{kind: windowKind}
	}
}

// Builtins lists every function a query may call, by name, with its kind
// (scalar, aggregate or window), sorted by name: the rows of SHOW
// BUILTINS.
func Builtins() [][2]string {
	var out [][2]string
	for n, f := range builtins {
		if !f.hidden {
			out = append(out, [2]string{n, f.kind.String()})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

// unknownFunction is the error for a name the registry does not have, at
// the call (when its position is known), with the closest names it does
// have.
func unknownFunction(name, where string, at *errs.Position) error {
	msg := fmt.Sprintf("unknown function %s in %s", name, where)
	if at != nil {
		msg += " at " + at.String()
	}
	if s := suggestFunctions(name); len(s) > 0 {
		msg += "; did you mean " + strings.Join(s, " or ") + "?"
	}
	e := errs.New(errs.ErSpDoesNotExist, "%s (SHOW BUILTINS lists the functions fsql has)", msg)
	if at != nil {
		e = e.At(*at)
	}
	return e
}

// suggestFunctions returns the visible function names nearest to name
// (internal/suggest: at most three, only when near enough to be a
// likely typo).
func suggestFunctions(name string) []string {
	var names []string
	for n, f := range builtins {
		if !f.hidden {
			names = append(names, n)
		}
	}
	return suggest.Closest(strings.ToLower(name), names)
}

// bindFunc binds a function call through the registry.
func (b *Binder) bindFunc(x *ast.FuncCallExpr, c *exprCtx) (expr.Expr, error) {
	name := x.FnName.L
	f, ok := builtins[name]
	if !ok {
		return nil, unknownFunction(x.FnName.O, restore(x), b.pos(exprOffset(x)))
	}
	switch {
	case f.bind != nil:
		return f.bind(b, name, x, c)
	case f.kind == windowKind:
		return nil, b.errAt(x, errs.ErParseError, "window function %s needs an OVER clause", restore(x))
	}
	return nil, errs.New(errs.ErInvalidGroupFuncUse, "aggregate %s is not allowed here", restore(x))
}

func (b *Binder) bindArgs(ns []ast.ExprNode, c *exprCtx) ([]expr.Expr, error) {
	args := make([]expr.Expr, 0, len(ns))
	for _, a := range ns {
		if _, isDir := a.(*ast.TrimDirectionExpr); isDir {
			return nil, b.errAt(a, errs.Unsupported, "a TRIM direction (%s) outside TRIM: write TRIM([BOTH|LEADING|TRAILING] [remove] FROM s)", restore(a))
		}
		e, err := b.bindExpr(a, c)
		if err != nil {
			return nil, err
		}
		args = append(args, e)
	}
	return args, nil
}

// callAt binds fn like call, naming the SQL text of x in an error.
func (b *Binder) callAt(x ast.Node, fn string, args ...expr.Expr) (expr.Expr, error) {
	e, err := expr.NewCall(fn, args...)
	if err != nil {
		return nil, exprError(err, restore(x))
	}
	return e, nil
}

// exprError says where in the statement an expression-layer error at
// bind time happened. The error keeps its kind (an unsupported form, a
// type error); one the expression layer did not classify is a semantic
// error.
func exprError(err error, where string) error {
	return errs.Wrap(errs.Semantic, "%w in %s", err, where)
}

// bindTrim binds TRIM([[BOTH | LEADING | TRAILING] [x] FROM] s), which
// the parser gives as trim(s[, x[, direction]]) (x ' ' when only the
// direction is written), and LTRIM(s), RTRIM(s), which take one argument
// in MySQL. A direction picks the expression function: LEADING is ltrim,
// TRAILING rtrim, BOTH trim, each removing x (expr.bindTrim).
func (b *Binder) bindTrim(name string, x *ast.FuncCallExpr, c *exprCtx) (expr.Expr, error) {
	args := x.Args
	fn := name
	if name == "trim" && len(args) == 3 {
		d, ok := args[2].(*ast.TrimDirectionExpr)
		if !ok {
			return nil, b.errAt(x, errs.ErWrongArguments, "the direction of %s is not BOTH, LEADING or TRAILING", restore(x))
		}
		switch d.Direction {
		case ast.TrimLeading:
			fn = "ltrim"
		case ast.TrimTrailing:
			fn = "rtrim"
		}
		args = args[:2]
	}
	most := 1
	if name == "trim" {
		most = 2
	}
	if len(args) < 1 || len(args) > most {
		return nil, b.errAt(x, errs.ErWrongParamcountToNativeFct, "%s takes one argument, got %d in %s", strings.ToUpper(name), len(x.Args), restore(x))
	}
	bound, err := b.bindArgs(args, c)
	if err != nil {
		return nil, err
	}
	return b.callAt(x, fn, bound...)
}

// bindDateArith binds date_add/adddate/date_sub/subdate (and
// d ± INTERVAL n unit, which the parser turns into them).
func (b *Binder) bindDateArith(name string, x *ast.FuncCallExpr, c *exprCtx) (expr.Expr, error) {
	sub := name == "date_sub" || name == "subdate"
	if len(x.Args) != 3 {
		return nil, b.errAt(x, errs.ErWrongParamcountToNativeFct, "%s needs a date, an amount and a unit, got %d arguments in %s", x.FnName.O, len(x.Args), restore(x))
	}
	d, err := b.bindExpr(x.Args[0], c)
	if err != nil {
		return nil, err
	}
	n, err := b.bindExpr(x.Args[1], c)
	if err != nil {
		return nil, err
	}
	u, ok := x.Args[2].(*ast.TimeUnitExpr)
	if !ok {
		return nil, b.errAt(x, errs.Unsupported, "the interval unit %s in %s (fsql has MICROSECOND, SECOND, MINUTE, HOUR, DAY, WEEK, MONTH, QUARTER and YEAR)", restore(x.Args[2]), restore(x))
	}
	e, err := expr.NewDateArith(d, n, u.Unit.String(), sub)
	if err != nil {
		return nil, exprError(err, restore(x))
	}
	return e, nil
}

// bindTimestampAdd binds TIMESTAMPADD(unit, n, d), which is d + INTERVAL
// n unit.
func (b *Binder) bindTimestampAdd(_ string, x *ast.FuncCallExpr, c *exprCtx) (expr.Expr, error) {
	if len(x.Args) != 3 {
		return nil, b.errAt(x, errs.ErWrongParamcountToNativeFct, "TIMESTAMPADD needs a unit, an amount and a date, got %d arguments in %s", len(x.Args), restore(x))
	}
	u, ok := x.Args[0].(*ast.TimeUnitExpr)
	if !ok {
		return nil, b.errAt(x, errs.ErWrongArguments, "TIMESTAMPADD unit %s is not a time unit (YEAR, MONTH, DAY, HOUR, ...)", restore(x.Args[0]))
	}
	n, err := b.bindExpr(x.Args[1], c)
	if err != nil {
		return nil, err
	}
	d, err := b.bindExpr(x.Args[2], c)
	if err != nil {
		return nil, err
	}
	e, err := expr.NewDateArith(d, n, u.Unit.String(), false)
	if err != nil {
		return nil, exprError(err, restore(x))
	}
	return e, nil
}

// bindTimestampDiff binds TIMESTAMPDIFF(unit, a, b).
func (b *Binder) bindTimestampDiff(_ string, x *ast.FuncCallExpr, c *exprCtx) (expr.Expr, error) {
	if len(x.Args) != 3 {
		return nil, b.errAt(x, errs.ErWrongParamcountToNativeFct, "TIMESTAMPDIFF needs a unit and two dates, got %d arguments in %s", len(x.Args), restore(x))
	}
	u, ok := x.Args[0].(*ast.TimeUnitExpr)
	if !ok {
		return nil, b.errAt(x, errs.ErWrongArguments, "TIMESTAMPDIFF unit %s is not a time unit (YEAR, MONTH, DAY, HOUR, ...)", restore(x.Args[0]))
	}
	args, err := b.bindArgs(x.Args[1:], c)
	if err != nil {
		return nil, err
	}
	unit := expr.NewLiteral(strings.ToLower(u.Unit.String()), arrow.BinaryTypes.String)
	return b.callAt(x, "timestampdiff", append([]expr.Expr{unit}, args...)...)
}

// extractUnits maps EXTRACT's units to the parts they combine: a compound
// unit such as DAY_HOUR is day*100 + hour, as MySQL computes it.
var extractUnits = map[ast.TimeUnitType][]string{
	ast.TimeUnitYear: {"year"}, ast.TimeUnitQuarter: {"quarter"}, ast.TimeUnitMonth: {"month"},
	ast.TimeUnitWeek: {"week"}, ast.TimeUnitDay: {"day"}, ast.TimeUnitHour: {"hour"},
	ast.TimeUnitMinute: {"minute"}, ast.TimeUnitSecond: {"second"}, ast.TimeUnitMicrosecond: {"microsecond"},
	ast.TimeUnitYearMonth: {"year", "month"}, ast.TimeUnitDayHour: {"day", "hour"},
	ast.TimeUnitDayMinute: {"day", "hour", "minute"}, ast.TimeUnitDaySecond: {"day", "hour", "minute", "second"},
	ast.TimeUnitHourMinute: {"hour", "minute"}, ast.TimeUnitHourSecond: {"hour", "minute", "second"},
	ast.TimeUnitMinuteSecond:      {"minute", "second"},
	ast.TimeUnitSecondMicrosecond: {"second", "microsecond"},
	ast.TimeUnitMinuteMicrosecond: {"minute", "second", "microsecond"},
	ast.TimeUnitHourMicrosecond:   {"hour", "minute", "second", "microsecond"},
	ast.TimeUnitDayMicrosecond:    {"day", "hour", "minute", "second", "microsecond"},
}

func (b *Binder) bindExtract(_ string, x *ast.FuncCallExpr, c *exprCtx) (expr.Expr, error) {
	if len(x.Args) != 2 {
		return nil, b.errAt(x, errs.ErWrongParamcountToNativeFct, "EXTRACT needs a unit and a value, got %d arguments in %s", len(x.Args), restore(x))
	}
	u, ok := x.Args[0].(*ast.TimeUnitExpr)
	if !ok {
		return nil, b.errAt(x, errs.Unsupported, "the EXTRACT unit %s in %s", restore(x.Args[0]), restore(x))
	}
	parts, ok := extractUnits[u.Unit]
	if !ok {
		return nil, b.errAt(x, errs.Unsupported, "EXTRACT(%s FROM ...) in %s (fsql extracts the simple units MICROSECOND to YEAR and the compound ones such as YEAR_MONTH and DAY_SECOND)", u.Unit.String(), restore(x))
	}
	v, err := b.bindExpr(x.Args[1], c)
	if err != nil {
		return nil, err
	}
	var out expr.Expr
	for _, p := range parts {
		e, err := b.callAt(x, p, v)
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = e
			continue
		}
		scale := int64(100)
		if p == "microsecond" {
			scale = 1000000
		}
		if out, err = b.callAt(x, "*", out, expr.NewLiteral(scale, arrow.PrimitiveTypes.Int64)); err != nil {
			return nil, err
		}
		if out, err = b.callAt(x, "+", out, e); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// bindTypedLiteral binds DATE '...', TIMESTAMP '...' (a DATETIME, as in
// MySQL) and TIME '...'.
func (b *Binder) bindTypedLiteral(name string, x *ast.FuncCallExpr, c *exprCtx) (expr.Expr, error) {
	v, err := b.bindExpr(x.Args[0], c)
	if err != nil {
		return nil, err
	}
	to, what := arrow.DataType(arrow.FixedWidthTypes.Date32), "DATE"
	switch name {
	case ast.TimestampLiteral:
		to, what = expr.DatetimeType, "TIMESTAMP"
	case ast.TimeLiteral:
		to, what = expr.TimeType, "TIME"
	}
	e, err := expr.NewCast(v, to)
	if err != nil {
		return nil, exprError(err, restore(x))
	}
	// A literal that is not a date is an error here, at the literal.
	f, ferr := expr.ConstantFold(e, b.alloc)
	if ferr == nil {
		if _, ok := f.(*expr.Literal); !ok {
			return nil, b.errAt(x, errs.ErWrongValue, "%s is not a valid %s literal", restore(x.Args[0]), what)
		}
		return f, nil
	}
	return e, nil
}

// stmtTime is the statement's time: NOW() is one value for the whole
// statement, as in MySQL, taken when the binder first needs it.
func (b *Binder) stmtTime() time.Time {
	if b.now.IsZero() {
		b.now = time.Now().UTC()
	}
	return b.now
}

// bindNow binds NOW()/CURRENT_TIMESTAMP/LOCALTIME[STAMP]/UTC_TIMESTAMP
// (a DATETIME; NOW(n) keeps n digits of the second, NOW() none) and
// CURDATE()/CURRENT_DATE/UTC_DATE (a DATE). The session time zone is UTC,
// so the local and UTC forms agree.
func (b *Binder) bindNow(name string, x *ast.FuncCallExpr, c *exprCtx) (expr.Expr, error) {
	t := b.stmtTime()
	switch name {
	case "curdate", "current_date", "utc_date":
		if len(x.Args) != 0 {
			return nil, b.errAt(x, errs.ErWrongParamcountToNativeFct, "%s takes no arguments, got %d in %s", x.FnName.O, len(x.Args), restore(x))
		}
		days := t.Unix() / 86400
		return expr.NewLiteral(arrow.Date32(days), arrow.FixedWidthTypes.Date32), nil
	}
	fsp := int64(0)
	if len(x.Args) > 1 {
		return nil, b.errAt(x, errs.ErWrongParamcountToNativeFct, "%s takes at most one argument (the precision), got %d in %s", x.FnName.O, len(x.Args), restore(x))
	}
	if len(x.Args) == 1 {
		n, err := b.constInt(x.Args[0], x.FnName.O+"'s precision")
		if err != nil {
			return nil, err
		}
		if n < 0 || n > 6 {
			return nil, b.errAt(x, errs.ErTooBigPrecision, "precision %d in %s is out of range (0 to 6)", n, restore(x))
		}
		fsp = n
	}
	us := t.UnixMicro()
	unit := int64(1)
	for k := fsp; k < 6; k++ {
		unit *= 10
	}
	us -= us % unit
	return expr.NewLiteral(arrow.Timestamp(us), expr.DatetimeType), nil
}

// bindUnixTimestamp binds UNIX_TIMESTAMP() (the statement's time as a
// BIGINT) and UNIX_TIMESTAMP(d).
func (b *Binder) bindUnixTimestamp(_ string, x *ast.FuncCallExpr, c *exprCtx) (expr.Expr, error) {
	if len(x.Args) == 0 {
		return expr.NewLiteral(b.stmtTime().Unix(), arrow.PrimitiveTypes.Int64), nil
	}
	args, err := b.bindArgs(x.Args, c)
	if err != nil {
		return nil, err
	}
	return b.callAt(x, "unix_timestamp", args...)
}

// bindAnyValue binds ANY_VALUE(x) outside aggregation: x itself. With
// aggregation bindExpr finds it among the aggregates first.
func (b *Binder) bindAnyValue(_ string, x *ast.FuncCallExpr, c *exprCtx) (expr.Expr, error) {
	if len(x.Args) != 1 {
		return nil, b.errAt(x, errs.ErWrongParamcountToNativeFct, "ANY_VALUE takes one argument, got %d in %s", len(x.Args), restore(x))
	}
	if c.agg != nil {
		return b.bindExpr(&ast.AggregateFuncExpr{F: "any_value", Args: x.Args}, c)
	}
	return b.bindExpr(x.Args[0], c)
}

// bindGrouping binds grouping(col): 1 when col is rolled up in the row's
// grouping set. It reads the Aggregate's grouping id, never NULLs, since
// dimension columns hold real NULLs.
func (b *Binder) bindGrouping(_ string, x *ast.FuncCallExpr, c *exprCtx) (expr.Expr, error) {
	if c.agg == nil || c.agg.gidCol < 0 {
		return nil, b.errAt(x, errs.ErInvalidGroupFuncUse, "%s is only allowed in a query with GROUP BY ... WITH ROLLUP", restore(x))
	}
	if len(x.Args) != 1 {
		return nil, b.errAt(x, errs.Unsupported, "grouping() with %d arguments in %s: write one grouping(col) per column", len(x.Args), restore(x))
	}
	e, err := b.bindExpr(x.Args[0], c.agg.pre)
	if err != nil {
		return nil, err
	}
	idx, ok := c.agg.groupKeys[exprKey(e)]
	if !ok {
		return nil, b.errAt(x, errs.ErFieldInGroupingNotGroupBy, "the argument of grouping(%s) is not a GROUP BY expression", restore(x.Args[0]))
	}
	gid := c.sc.column(c.agg.gidCol)
	return b.call("getbit", gid, expr.NewLiteral(int64(idx), arrow.PrimitiveTypes.Int64))
}

// bindAggCall binds one aggregate call against the FROM scope.
func (b *Binder) bindAggCall(n *ast.AggregateFuncExpr, from *exprCtx) (planner.AggCall, error) {
	name := strings.ToLower(n.F)
	f, ok := builtins[name]
	if !ok || f.kind != aggregateKind {
		return planner.AggCall{}, unknownAggregate(n.F, restore(n))
	}
	fn := f.agg
	call := planner.AggCall{Fn: fn, Distinct: n.Distinct, Name: restore(n)}
	if fn == "group_concat" {
		return b.bindGroupConcat(n, from, call)
	}
	if n.Order != nil {
		return call, b.errAt(n, errs.ErParseError, "ORDER BY inside %s (only GROUP_CONCAT orders its values)", restore(n))
	}
	if fn == "count" && n.Distinct && len(n.Args) > 1 {
		return b.bindCountDistinct(n, from, call)
	}
	if len(n.Args) != 1 {
		return planner.AggCall{}, b.errAt(n, errs.Unsupported, "%s with %d arguments in %s (only COUNT(DISTINCT a, b, ...) and GROUP_CONCAT take several)", n.F, len(n.Args), restore(n))
	}
	if fn == "count" && !n.Distinct && isNonNullConst(n.Args[0]) {
		call.Fn = "count_star"
		call.Type = arrow.PrimitiveTypes.Int64
		return call, nil
	}
	if hasAgg(n.Args[0]) {
		return call, b.errAt(n.Args[0], errs.ErInvalidGroupFuncUse, "aggregate %s nested in another aggregate", restore(n.Args[0]))
	}
	arg, err := b.bindValue(n.Args[0], from)
	if err != nil {
		return call, err
	}
	if arg, err = expr.AggregateArg(fn, arg); err != nil {
		return call, exprError(err, restore(n))
	}
	call.Arg = arg
	t, err := expr.AggregateType(fn, arg.DataType())
	if err != nil {
		return call, exprError(err, restore(n))
	}
	call.Type = t
	return call, nil
}

// bindCountDistinct binds COUNT(DISTINCT a, b, ...): the number of
// distinct combinations with no NULL among them (MySQL's rule), as COUNT
// DISTINCT of one key made of all the values (expr.NewDistinctKey).
func (b *Binder) bindCountDistinct(n *ast.AggregateFuncExpr, from *exprCtx, call planner.AggCall) (planner.AggCall, error) {
	values := make([]expr.Expr, len(n.Args))
	for i, a := range n.Args {
		if hasAgg(a) {
			return call, b.errAt(a, errs.ErInvalidGroupFuncUse, "aggregate %s nested in another aggregate", restore(a))
		}
		v, err := b.bindValue(a, from)
		if err != nil {
			return call, err
		}
		values[i] = v
	}
	key, err := expr.NewDistinctKey(values...)
	if err != nil {
		return call, exprError(err, restore(n))
	}
	call.Arg, call.Type = key, arrow.PrimitiveTypes.Int64
	return call, nil
}

// unknownAggregate is the error for an aggregate name fsql lacks (the
// parser knows JSON_ARRAYAGG and others).
func unknownAggregate(name, where string) error {
	msg := fmt.Sprintf("aggregate function %s in %s", name, where)
	if s := suggestFunctions(name); len(s) > 0 {
		msg += "; did you mean " + strings.Join(s, " or ") + "?"
	}
	return errs.New(errs.Unsupported, "%s (SHOW BUILTINS lists the functions fsql has)", msg)
}

// bindGroupConcat binds GROUP_CONCAT([DISTINCT] v, ... [ORDER BY k [DESC],
// ...] [SEPARATOR s]). The parser appends the separator (',' by default)
// to the arguments. ORDER BY may name a position, which counts the
// values. DISTINCT is applied by the aggregate itself, so its partial
// states still merge.
func (b *Binder) bindGroupConcat(n *ast.AggregateFuncExpr, from *exprCtx, call planner.AggCall) (planner.AggCall, error) {
	if len(n.Args) < 2 {
		return call, b.errAt(n, errs.ErWrongParamcountToNativeFct, "%s needs a value", restore(n))
	}
	sepNode := n.Args[len(n.Args)-1]
	sepExpr, err := b.bindValue(sepNode, from)
	if err != nil {
		return call, err
	}
	sepLit, ok := sepExpr.(*expr.Literal)
	sep, isStr := "", false
	if ok {
		sep, isStr = sepLit.Value.(string)
	}
	if !isStr {
		return call, b.errAt(n, errs.ErParseError, "the SEPARATOR of %s must be a string constant", restore(n))
	}
	var values []expr.Expr
	for _, a := range n.Args[:len(n.Args)-1] {
		if hasAgg(a) {
			return call, b.errAt(a, errs.ErInvalidGroupFuncUse, "aggregate %s nested in another aggregate", restore(a))
		}
		v, err := b.bindValue(a, from)
		if err != nil {
			return call, err
		}
		values = append(values, v)
	}
	var keys []expr.Expr
	var desc []bool
	if n.Order != nil {
		for _, it := range n.Order.Items {
			var k expr.Expr
			if pos, ok := positionOf(it.Expr); ok {
				if pos < 1 || pos > len(values) {
					return call, b.errAt(n, errs.ErBadFieldError, "ORDER BY position %d in %s is not one of its %d values", pos, restore(n), len(values))
				}
				k = values[pos-1]
			} else {
				if hasAgg(it.Expr) {
					return call, b.errAt(it.Expr, errs.ErInvalidGroupFuncUse, "aggregate %s nested in another aggregate", restore(it.Expr))
				}
				if k, err = b.bindValue(it.Expr, from); err != nil {
					return call, err
				}
			}
			keys = append(keys, k)
			desc = append(desc, it.Desc)
		}
	}
	arg, err := expr.NewGroupConcatArg(sep, n.Distinct, values, keys, desc)
	if err != nil {
		return call, exprError(err, restore(n))
	}
	call.Arg, call.Distinct = arg, false
	call.Type = arrow.BinaryTypes.String
	return call, nil
}
