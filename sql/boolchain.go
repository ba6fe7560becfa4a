package sql

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/planner"
)

// The parser turns `a OR b OR c ...` into a left-deep tree as deep as the
// chain is long; generated queries hold chains of tens of thousands of
// terms. Bound as written, every later walk (constant folding, keys,
// printing) would cost the depth at each level: quadratic. bindChain
// flattens a chain of one logical operator without recursing down it,
// binds each term, turns equalities of one column with literals into an
// IN list, and rebuilds a balanced tree in the written order.
// AND and OR are associative and commutative under three-valued logic, so
// the regrouping is exact.

// bindChain binds a chain of AND or OR.
func (b *Binder) bindChain(x *ast.BinaryOperationExpr, c *exprCtx) (expr.Expr, error) {
	terms := chainTerms(x)
	if x.Op == opcode.LogicOr {
		terms = b.orToIn(terms, c)
	}
	bound := make([]expr.Expr, len(terms))
	for i, t := range terms {
		if i%256 == 0 {
			if err := b.checkCtx(); err != nil {
				return nil, err
			}
		}
		e, err := b.bindExpr(t, c)
		if err != nil {
			return nil, err
		}
		bound[i] = e
	}
	fn := binaryOps[x.Op]
	e, err := planner.Balanced(fn, bound)
	if err != nil {
		return nil, errs.Wrap(errs.Semantic, "%w", err)
	}
	return e, nil
}

// chainTerms lists the operands of the chain of x's operator, left to
// right, looking through parentheses (explicit stack: chains are deep).
func chainTerms(x *ast.BinaryOperationExpr) []ast.ExprNode {
	var out []ast.ExprNode
	stack := []ast.ExprNode{x}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		inner := n
		for {
			p, ok := inner.(*ast.ParenthesesExpr)
			if !ok {
				break
			}
			inner = p.Expr
		}
		if bin, ok := inner.(*ast.BinaryOperationExpr); ok && bin.Op == x.Op {
			stack = append(stack, bin.R, bin.L) // L is visited first
			continue
		}
		out = append(out, n)
	}
	return out
}

// orToIn replaces the terms `col = literal` (either way round) of an OR
// chain by one `col IN (literals)` per column where at least two terms
// compare that column with literals of one type; the IN takes the place of
// the column's first equality. With every literal of one type, IN compares
// in the same common type as each equality, and without NULL literals
// `c = v1 OR c = v2` and `c IN (v1, v2)` agree on every row: NULL for a
// NULL c, TRUE on a match, FALSE otherwise. Comparisons in floating point
// are left alone (IN hashes values, and -0 = 0). Rewriting before binding
// binds each literal once, in one IN list.
func (b *Binder) orToIn(terms []ast.ExprNode, c *exprCtx) []ast.ExprNode {
	type group struct {
		col  *ast.ColumnNameExpr
		typ  arrow.DataType
		vals []ast.ExprNode
		at   int
	}
	groups := map[string]*group{}
	var order []*group
	member := make([]*group, len(terms))
	for i, t := range terms {
		col, val, ok := columnEqualsLiteral(t)
		if !ok {
			continue
		}
		lit, err := literal(val)
		if err != nil {
			continue
		}
		k := strings.ToLower(columnText(col.Name)) + "\x00" + lit.DataType().String()
		g := groups[k]
		if g == nil {
			g = &group{col: col, typ: lit.DataType(), at: i}
			groups[k] = g
			order = append(order, g)
		}
		g.vals = append(g.vals, val)
		member[i] = g
	}
	merged := false
	for _, g := range order {
		if len(g.vals) < 2 || !b.exactIn(g.col, g.typ, c) {
			g.vals = g.vals[:1] // keep the equalities
			continue
		}
		merged = true
	}
	if !merged {
		return terms
	}
	out := make([]ast.ExprNode, 0, len(terms))
	for i, t := range terms {
		g := member[i]
		switch {
		case g == nil || len(g.vals) == 1:
			out = append(out, t)
		case g.at == i:
			out = append(out, &ast.PatternInExpr{Expr: g.col, List: g.vals})
		}
	}
	return out
}

// exactIn reports whether col compared with literals of type lit
// compares exactly (integers, decimals, strings, dates).
func (b *Binder) exactIn(col *ast.ColumnNameExpr, lit arrow.DataType, c *exprCtx) bool {
	e, err := b.bindExpr(col, c)
	if err != nil {
		return false
	}
	t, err := expr.CommonType(e.DataType(), lit)
	if err != nil {
		return false
	}
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.DECIMAL128, arrow.STRING, arrow.DATE32:
		return true
	}
	return false
}

// columnEqualsLiteral matches `col = literal` and `literal = col` with a
// non-NULL literal.
func columnEqualsLiteral(t ast.ExprNode) (*ast.ColumnNameExpr, *driver.ValueExpr, bool) {
	for {
		p, ok := t.(*ast.ParenthesesExpr)
		if !ok {
			break
		}
		t = p.Expr
	}
	bin, ok := t.(*ast.BinaryOperationExpr)
	if !ok || bin.Op != opcode.EQ {
		return nil, nil, false
	}
	l, r := bin.L, bin.R
	if _, ok := l.(*driver.ValueExpr); ok {
		l, r = r, l
	}
	col, ok := l.(*ast.ColumnNameExpr)
	if !ok {
		return nil, nil, false
	}
	val, ok := r.(*driver.ValueExpr)
	if !ok || val.GetValue() == nil {
		return nil, nil, false
	}
	return col, val, true
}
