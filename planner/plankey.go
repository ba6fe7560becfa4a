package planner

import (
	"reflect"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fsql-dev/fsql/exec/expr"
)

// samePlan reports whether two plans have the same shape and expressions,
// so a rule can tell whether it changed anything. It compares what the
// rules rewrite (scan columns, filters and partitions, filter, project and
// join expressions) and node kinds elsewhere. Shared subtrees and
// expressions compare by pointer first, so a pass that moved nothing costs
// about the number of nodes, not the size of the plan's text.
func samePlan(a, b Plan) bool {
	if a == b {
		return true
	}
	if reflect.TypeOf(a) != reflect.TypeOf(b) {
		return false
	}
	switch x := a.(type) {
	case *Scan:
		y := b.(*Scan)
		if x.Table != y.Table || !slices.Equal(x.Columns, y.Columns) || len(x.Partitions) != len(y.Partitions) || x.Pruned != y.Pruned || !sameExprs(x.Filters, y.Filters) {
			return false
		}
	case *Filter:
		if !sameExpr(x.Cond, b.(*Filter).Cond) {
			return false
		}
	case *Project:
		if !sameExprs(x.Exprs, b.(*Project).Exprs) {
			return false
		}
	case *Join:
		y := b.(*Join)
		if x.Type != y.Type || !sameExpr(x.Cond, y.Cond) {
			return false
		}
	case *MultiJoin:
		if !sameExprs(x.Conds, b.(*MultiJoin).Conds) {
			return false
		}
	}
	ca, cb := a.Children(), b.Children()
	if len(ca) != len(cb) {
		return false
	}
	for i := range ca {
		if !samePlan(ca[i], cb[i]) {
			return false
		}
	}
	return true
}

func sameExprs(a, b []expr.Expr) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !sameExpr(a[i], b[i]) {
			return false
		}
	}
	return true
}

// sameExpr is ExprKey(a) == ExprKey(b) without building the keys.
func sameExpr(a, b expr.Expr) bool {
	if a == b {
		return true
	}
	if a == nil || b == nil {
		return false
	}
	switch x := a.(type) {
	case *expr.Column:
		y, ok := b.(*expr.Column)
		return ok && x.Index == y.Index
	case *expr.Literal:
		y, ok := b.(*expr.Literal)
		if !ok || !arrow.TypeEqual(x.Type, y.Type) {
			return false
		}
		if x.Value != nil && y.Value != nil && reflect.TypeOf(x.Value).Comparable() && reflect.TypeOf(x.Value) == reflect.TypeOf(y.Value) {
			return x.Value == y.Value
		}
		return x.String() == y.String()
	case *expr.Call:
		y, ok := b.(*expr.Call)
		if !ok || x.Fn != y.Fn || len(x.Args) != len(y.Args) || !arrow.TypeEqual(x.Type, y.Type) {
			return false
		}
		for i := range x.Args {
			if !sameExpr(x.Args[i], y.Args[i]) {
				return false
			}
		}
		return true
	}
	return reflect.TypeOf(a) == reflect.TypeOf(b) && a.String() == b.String()
}
