package planner

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fsql-dev/fsql/exec/expr"
)

// TestPushDistinctEitherSide: the pre-aggregation goes on the join's
// larger input on either side, and every column the rewritten join and
// DISTINCT read is the column of that name in their new inputs.
func TestPushDistinctEitherSide(t *testing.T) {
	i32, str := arrow.PrimitiveTypes.Int32, arrow.BinaryTypes.String
	values := nullValues
	col := func(p Plan, name string) expr.Expr { return colNamed(t, p, name) }
	eq := func(l, r expr.Expr) expr.Expr { return callOf(t, "=", l, r) }
	c := values(2, Column{Name: "ck", Type: i32}, Column{Name: "cn", Type: str})
	f := values(50, Column{Name: "x", Type: i32}, Column{Name: "y", Type: i32}, Column{Name: "v", Type: i32})
	d := values(3, Column{Name: "dk", Type: i32}, Column{Name: "dn", Type: str})
	fd := &Join{Type: InnerJoin, Left: f, Right: d}
	fd.Cond = eq(col(fd, "x"), col(fd, "dk"))
	for _, top := range []*Join{{Type: InnerJoin, Left: fd, Right: c}, {Type: InnerJoin, Left: c, Right: fd}} {
		top.Cond = eq(col(top, "y"), col(top, "ck"))
		agg := &Aggregate{Child: top, GroupBy: []expr.Expr{col(top, "dn"), col(top, "cn")}, Names: []string{"dn", "cn"}}
		p, changed, err := pushDistinctBelowJoin{}.Apply(agg, &Context{})
		if err != nil || !changed {
			t.Fatalf("changed %v, err %v", changed, err)
		}
		out := p.(*Aggregate)
		j := out.Child.(*Join)
		pre, ok := j.Left.(*Aggregate)
		if top.Left == c {
			pre, ok = j.Right.(*Aggregate)
		}
		if !ok || !pre.Local || Format(pre.Child) != Format(fd) {
			t.Fatalf("no pre-aggregation of the larger input:\n%s", Format(p))
		}
		if got := exprList(pre.GroupBy); got != "y, dn" {
			t.Errorf("pre-aggregation groups by %s, want y, dn", got)
		}
		check := func(where string, s Schema, es ...expr.Expr) {
			for _, e := range es {
				expr.Walk(e, func(x expr.Expr) bool {
					if c, ok := x.(*expr.Column); ok && (c.Index >= len(s) || s[c.Index].Name != c.Name) {
						t.Errorf("%s reads column %d as %s, which is %v", where, c.Index, c.Name, s)
					}
					return true
				})
			}
		}
		check("join condition", j.Schema(), j.Cond)
		check("DISTINCT", j.Schema(), out.GroupBy...)
		check("pre-aggregation", pre.Child.Schema(), pre.GroupBy...)
	}
}
