package sql

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/pingcap/tidb/pkg/parser/ast"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/planner"
)

// windowOut says where a bound window function's value is: column col of
// the plan after the windows; for LAG/LEAD with a default that is not a
// constant, column mark holds LAG/LEAD of TRUE (NULL where no row is N
// away) and the value is CASE WHEN mark IS NULL THEN def ELSE col END.
type windowOut struct {
	col, mark int
	def       expr.Expr
}

// windowValue is the expression of a window function over the scope after
// every Window node.
func (b *Binder) windowValue(out windowOut, sc *scope) (expr.Expr, error) {
	v := sc.column(out.col)
	if out.mark < 0 {
		return v, nil
	}
	missing, err := b.call("isnull", sc.column(out.mark))
	if err != nil {
		return nil, err
	}
	return b.call("case", missing, out.def, v)
}

// resolveWindow expands a window that names or refines a window of the
// WINDOW clause, with MySQL's rules: a refinement may add ORDER BY and a
// frame, never redefine PARTITION BY or ORDER BY, and the window it
// refines may not have a frame.
func (b *Binder) resolveWindow(spec ast.WindowSpec, defs []ast.WindowSpec, w *ast.WindowFuncExpr, depth int) (ast.WindowSpec, error) {
	where := restore(w)
	ref := spec.Ref.L
	if spec.OnlyAlias {
		ref = spec.Name.L
	}
	if ref == "" {
		return spec, nil
	}
	if depth > len(defs) {
		return spec, b.errAt(w, errs.ErWindowCircularityInWindowGraph, "the named windows of %s refer to each other in a cycle", where)
	}
	var base *ast.WindowSpec
	for i := range defs {
		if defs[i].Name.L == ref {
			if base != nil {
				return spec, b.errAt(w, errs.ErWindowDuplicateName, "window %s is defined twice", defs[i].Name.O)
			}
			base = &defs[i]
		}
	}
	if base == nil {
		return spec, b.errAt(w, errs.ErWindowNoSuchWindow, "unknown window %s in %s", ref, where)
	}
	out, err := b.resolveWindow(*base, defs, w, depth+1)
	if err != nil {
		return spec, err
	}
	if spec.OnlyAlias {
		return out, nil
	}
	switch {
	case spec.PartitionBy != nil:
		return spec, b.errAt(w, errs.ErWindowNoChildPartitioning, "a window refining window %s cannot have its own PARTITION BY, in %s", ref, where)
	case spec.OrderBy != nil && out.OrderBy != nil:
		return spec, b.errAt(w, errs.ErWindowNoRedefineOrderBy, "a window refining window %s cannot redefine its ORDER BY, in %s", ref, where)
	case out.Frame != nil:
		return spec, b.errAt(w, errs.ErWindowNoInheritFrame, "window %s has a frame, so another window cannot refine it, in %s", ref, where)
	}
	if spec.OrderBy != nil {
		out.OrderBy = spec.OrderBy
	}
	out.Frame = spec.Frame
	out.Name, out.Ref, out.OnlyAlias = spec.Name, spec.Ref, false
	return out, nil
}

// bindWindow appends the Window node(s) computing w; defs are the
// query's WINDOW clause.
func (b *Binder) bindWindow(w *ast.WindowFuncExpr, defs []ast.WindowSpec, plan planner.Plan, cur *exprCtx) (planner.Plan, windowOut, error) {
	none := windowOut{mark: -1}
	spec, err := b.resolveWindow(w.Spec, defs, w, 0)
	if err != nil {
		return nil, none, err
	}
	rw := *w
	rw.Spec = spec
	w = &rw
	name := strings.ToLower(w.Name)
	reg, known := builtins[name]
	switch {
	case !known:
		return nil, none, unknownFunction(w.Name, restore(w), b.pos(exprOffset(w)))
	case reg.kind == scalarKind, reg.kind == aggregateKind && (reg.noWindow || reg.agg == "any_value"):
		return nil, none, b.errAt(w, errs.ErParseError, "%s cannot be a window function (in %s)", w.Name, restore(w))
	}
	switch {
	case w.Distinct:
		return nil, none, b.errAt(w, errs.Unsupported, "DISTINCT in the window function %s (MySQL does not allow it either): aggregate DISTINCT values in a derived table and join it", restore(w))
	case w.FromLast:
		return nil, none, b.errAt(w, errs.Unsupported, "FROM LAST in %s (MySQL supports only FROM FIRST): reverse the window's ORDER BY", restore(w))
	case w.IgnoreNull:
		return nil, none, b.errAt(w, errs.Unsupported, "IGNORE NULLS in %s (MySQL supports only RESPECT NULLS): filter the NULLs out in a derived table first", restore(w))
	}
	win := &planner.Window{Child: plan}
	if w.Spec.PartitionBy != nil {
		for _, it := range w.Spec.PartitionBy.Items {
			e, err := b.bindValue(it.Expr, cur)
			if err != nil {
				return nil, none, err
			}
			win.PartitionBy = append(win.PartitionBy, e)
		}
	}
	if w.Spec.OrderBy != nil {
		for _, it := range w.Spec.OrderBy.Items {
			e, err := b.bindValue(it.Expr, cur)
			if err != nil {
				return nil, none, err
			}
			win.OrderBy = append(win.OrderBy, planner.SortKey{Expr: e, Desc: it.Desc, NullsFirst: !it.Desc})
		}
	}
	frame, err := b.windowFrame(w, win.OrderBy)
	if err != nil {
		return nil, none, err
	}
	win.Frame = frame
	f := planner.WindowCall{Fn: name, Name: restore(w)}
	var markDefault expr.Expr
	switch name {
	case "row_number", "rank", "dense_rank":
		if err := b.windowArity(w, 0, 0); err != nil {
			return nil, none, err
		}
		f.Type = arrow.PrimitiveTypes.Int64
	case "percent_rank", "cume_dist":
		if err := b.windowArity(w, 0, 0); err != nil {
			return nil, none, err
		}
		f.Type = arrow.PrimitiveTypes.Float64
	case "ntile":
		if err := b.windowArity(w, 1, 1); err != nil {
			return nil, none, err
		}
		n, err := b.windowInt(w, w.Args[0], "the number of buckets of NTILE", 1)
		if err != nil {
			return nil, none, err
		}
		f.N, f.Type = n, arrow.PrimitiveTypes.Int64
	case "lag", "lead":
		if err := b.windowArity(w, 1, 3); err != nil {
			return nil, none, err
		}
		f.N = 1
		if len(w.Args) >= 2 {
			if f.N, err = b.windowInt(w, w.Args[1], "the offset of "+strings.ToUpper(name), 0); err != nil {
				return nil, none, err
			}
		}
		arg, err := b.bindValue(w.Args[0], cur)
		if err != nil {
			return nil, none, err
		}
		f.Arg, f.Type = arg, arg.DataType()
		if len(w.Args) == 3 {
			def, err := b.bindValue(w.Args[2], cur)
			if err != nil {
				return nil, none, err
			}
			// The result type is that of COALESCE(arg, default).
			both, err := b.call("coalesce", arg, def)
			if err != nil {
				return nil, none, err
			}
			f.Type = both.DataType()
			if f.Arg, err = castIfNeeded(arg, f.Type); err != nil {
				return nil, none, err
			}
			dc, err := castIfNeeded(def, f.Type)
			if err != nil {
				return nil, none, err
			}
			if dc, err = expr.ConstantFold(dc, b.alloc); err != nil {
				return nil, none, exprError(err, restore(w))
			}
			if lit, ok := dc.(*expr.Literal); ok {
				f.Default = lit
			} else {
				markDefault = dc
			}
		}
	case "first_value", "last_value", "nth_value":
		lo, hi := 1, 1
		if name == "nth_value" {
			lo, hi = 2, 2
		}
		if err := b.windowArity(w, lo, hi); err != nil {
			return nil, none, err
		}
		if name == "nth_value" {
			if f.N, err = b.windowInt(w, w.Args[1], "the position of NTH_VALUE", 1); err != nil {
				return nil, none, err
			}
		}
		arg, err := b.bindValue(w.Args[0], cur)
		if err != nil {
			return nil, none, err
		}
		f.Arg, f.Type = arg, arg.DataType()
	default: // an aggregate
		f.Fn = reg.agg
		if err := b.windowArity(w, 1, 1); err != nil {
			return nil, none, err
		}
		if f.Fn == "count" && isNonNullConst(w.Args[0]) {
			f.Fn, f.Type = "count_star", arrow.PrimitiveTypes.Int64
			break
		}
		arg, err := b.bindValue(w.Args[0], cur)
		if err != nil {
			return nil, none, err
		}
		if arg, err = expr.AggregateArg(f.Fn, arg); err != nil {
			return nil, none, exprError(err, restore(w))
		}
		t, err := expr.AggregateType(f.Fn, arg.DataType())
		if err != nil {
			return nil, none, exprError(err, restore(w))
		}
		f.Arg, f.Type = arg, t
	}
	win.Funcs = []planner.WindowCall{f}
	out := windowOut{col: len(win.Schema()) - 1, mark: -1}
	if markDefault == nil {
		return win, out, nil
	}
	// A computed default: a second LAG/LEAD over TRUE marks the rows that
	// have a row N away.
	mark := f
	mark.Arg, mark.Type, mark.Default, mark.Name = expr.NewLiteral(true, arrow.FixedWidthTypes.Boolean), arrow.FixedWidthTypes.Boolean, nil, f.Name+" present"
	marked := &planner.Window{Child: win, PartitionBy: win.PartitionBy, OrderBy: win.OrderBy, Frame: win.Frame, Funcs: []planner.WindowCall{mark}}
	return marked, windowOut{col: out.col, mark: out.col + 1, def: markDefault}, nil
}

func castIfNeeded(e expr.Expr, t arrow.DataType) (expr.Expr, error) {
	if arrow.TypeEqual(e.DataType(), t) {
		return e, nil
	}
	c, err := expr.NewCast(e, t)
	if err != nil {
		return nil, errs.Wrap(errs.Semantic, "%w", err)
	}
	return c, nil
}

func (b *Binder) windowArity(w *ast.WindowFuncExpr, lo, hi int) error {
	if len(w.Args) < lo || len(w.Args) > hi {
		want := fmt.Sprint(lo)
		if hi != lo {
			want = fmt.Sprintf("%d to %d", lo, hi)
		}
		return b.errAt(w, errs.ErWrongParamcountToNativeFct, "%s takes %s arguments, got %d in %s", w.Name, want, len(w.Args), restore(w))
	}
	return nil
}

// windowInt reads a constant integer argument of at least lo (MySQL
// requires a literal for these; it calls any other ER_WRONG_ARGUMENTS).
func (b *Binder) windowInt(w *ast.WindowFuncExpr, n ast.ExprNode, what string, lo int64) (int64, error) {
	v, ok := n.(*driver.ValueExpr)
	var k int64
	if ok {
		switch x := v.GetValue().(type) {
		case int64:
			k = x
		case uint64:
			if x > 1<<62 {
				ok = false
			}
			k = int64(x)
		default:
			ok = false
		}
	}
	if !ok || k < lo {
		return 0, b.errAt(w, errs.ErWrongArguments, "%s must be an integer constant of at least %d, got %s in %s", what, lo, restore(n), restore(w))
	}
	return k, nil
}

// windowFrame binds the frame clause with MySQL's rules: ROWS offsets are
// non-negative integer constants; RANGE offsets need exactly one ORDER BY
// key, numeric (with a numeric offset) or temporal (with an INTERVAL);
// the start may not be UNBOUNDED FOLLOWING, the end not UNBOUNDED
// PRECEDING, and the start may not come after the end by its kind (CURRENT
// ROW ... n PRECEDING). GROUPS frames fail, as in MySQL.
func (b *Binder) windowFrame(w *ast.WindowFuncExpr, order []planner.SortKey) (exec.WindowFrame, error) {
	f := w.Spec.Frame
	if f == nil {
		return exec.FrameDefault, nil
	}
	where := restore(w)
	fr := exec.WindowFrame{Unit: exec.FrameRows}
	switch f.Type {
	case ast.Rows:
	case ast.Ranges:
		fr.Unit = exec.FrameRange
	default:
		return fr, b.errAt(w, errs.Unsupported, "a GROUPS frame in the window of %s: write ROWS or RANGE (MySQL has no GROUPS either)", w.Name)
	}
	var err error
	if fr.Start, err = b.frameBound(w, &f.Extent.Start, fr.Unit, order); err != nil {
		return fr, err
	}
	if fr.End, err = b.frameBound(w, &f.Extent.End, fr.Unit, order); err != nil {
		return fr, err
	}
	switch {
	case fr.Start.Kind == exec.UnboundedFollowing:
		return fr, b.errAt(w, errs.ErWindowFrameStartIllegal, "a frame cannot start at UNBOUNDED FOLLOWING in %s", where)
	case fr.End.Kind == exec.UnboundedPreceding:
		return fr, b.errAt(w, errs.ErWindowFrameEndIllegal, "a frame cannot end at UNBOUNDED PRECEDING in %s", where)
	case fr.Start.Kind == exec.CurrentRow && fr.End.Kind == exec.Preceding,
		fr.Start.Kind == exec.Following && (fr.End.Kind == exec.Preceding || fr.End.Kind == exec.CurrentRow):
		return fr, b.errAt(w, errs.ErWindowFrameIllegal, "the frame's start comes after its end in %s", where)
	}
	return fr, nil
}

func (b *Binder) frameBound(w *ast.WindowFuncExpr, fb *ast.FrameBound, unit exec.FrameUnit, order []planner.SortKey) (exec.FrameBound, error) {
	where := restore(w)
	var out exec.FrameBound
	switch {
	case fb.Type == ast.CurrentRow:
		out.Kind = exec.CurrentRow
		return out, nil
	case fb.UnBounded && fb.Type == ast.Preceding:
		out.Kind = exec.UnboundedPreceding
		return out, nil
	case fb.UnBounded:
		out.Kind = exec.UnboundedFollowing
		return out, nil
	case fb.Type == ast.Preceding:
		out.Kind = exec.Preceding
	default:
		out.Kind = exec.Following
	}
	isInterval := fb.Unit != ast.TimeUnitInvalid
	if unit == exec.FrameRows {
		if isInterval {
			return out, b.errAt(w, errs.ErWindowRowsIntervalUse, "a ROWS frame counts rows, not an INTERVAL, in %s", where)
		}
		n, err := b.constInt(fb.Expr, "a ROWS frame offset")
		if err != nil || n < 0 {
			return out, b.errAt(w, errs.ErWindowFrameIllegal, "a ROWS frame offset must be a non-negative integer constant, got %s in %s", restore(fb.Expr), where)
		}
		out.Rows = n
		return out, nil
	}
	if len(order) != 1 {
		return out, b.errAt(w, errs.ErWindowRangeFrameOrderType, "a RANGE frame with an offset needs exactly one ORDER BY expression, in %s", where)
	}
	key := order[0]
	kt := key.Expr.DataType()
	off, err := b.bindScalar(fb.Expr, newScope(nil, nil))
	if err != nil {
		return out, err
	}
	if off, err = expr.ConstantFold(off, b.alloc); err != nil {
		return out, exprError(err, where)
	}
	lit, ok := off.(*expr.Literal)
	if !ok || lit.Value == nil {
		return out, b.errAt(w, errs.ErWindowRangeBoundNotConstant, "a RANGE frame offset must be a constant, got %s in %s", restore(fb.Expr), where)
	}
	// The bound's key is key - N or key + N, mirrored for DESC.
	subtract := (out.Kind == exec.Preceding) != key.Desc
	col := expr.NewColumn(0, kt, "key")
	temporal := kt.ID() == arrow.DATE32 || kt.ID() == arrow.TIMESTAMP
	switch {
	case temporal && !isInterval:
		return out, b.errAt(w, errs.ErWindowRangeFrameTemporalType, "a RANGE frame over the date/time key %s needs an INTERVAL offset, in %s", key.Expr, where)
	case !temporal && isInterval:
		return out, b.errAt(w, errs.ErWindowRangeFrameNumericType, "a RANGE frame over the key %s takes a number, not an INTERVAL, in %s", key.Expr, where)
	case !temporal && !isNumericType(kt):
		return out, b.errAt(w, errs.ErWindowRangeFrameOrderType, "a RANGE frame with an offset needs a numeric or date/time ORDER BY key, not %s, in %s", key.Expr, where)
	}
	if neg, err := b.call("<", lit, expr.NewLiteral(int64(0), arrow.PrimitiveTypes.Int64)); err == nil {
		if v, ferr := expr.ConstantFold(neg, b.alloc); ferr == nil {
			if l, ok := v.(*expr.Literal); ok && l.Value == true {
				return out, b.errAt(w, errs.ErWindowFrameIllegal, "a RANGE frame offset must not be negative, got %s in %s", restore(fb.Expr), where)
			}
		}
	}
	var bound expr.Expr
	if temporal {
		bound, err = expr.NewDateArith(col, lit, fb.Unit.String(), subtract)
	} else {
		op := "+"
		if subtract {
			op = "-"
		}
		bound, err = expr.NewCall(op, col, lit)
	}
	if err != nil {
		return out, exprError(err, where)
	}
	out.Value = bound
	return out, nil
}

func isNumericType(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT64, arrow.FLOAT32, arrow.FLOAT64, arrow.DECIMAL128:
		return true
	}
	return false
}
