package planner

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fsql-dev/fsql/exec/expr"
)

// TestPushExpressionsEitherSide: an expression over the small input moves
// below the join whether that input is on the left or the right, and
// every column the new projection, join condition and expressions read
// is the one they read before.
func TestPushExpressionsEitherSide(t *testing.T) {
	i32, str := arrow.PrimitiveTypes.Int32, arrow.BinaryTypes.String
	values := nullValues
	col := func(p Plan, name string) expr.Expr { return colNamed(t, p, name) }
	call := func(fn string, args ...expr.Expr) expr.Expr { return callOf(t, fn, args...) }
	f := values(50, Column{Name: "k", Type: i32}, Column{Name: "v", Type: i32})
	d := values(3, Column{Name: "dk", Type: i32}, Column{Name: "s", Type: str})
	for _, j := range []*Join{{Type: InnerJoin, Left: f, Right: d}, {Type: InnerJoin, Left: d, Right: f}} {
		j.Cond = call("=", col(j, "k"), col(j, "dk"))
		upper := call("upper", col(j, "s"))
		p := &Project{Child: j, Exprs: []expr.Expr{col(j, "v"), upper, col(j, "k")}, Names: []string{"v", "u", "k"}}
		out, changed, err := pushExpressionsBelowJoin{}.Apply(p, &Context{})
		if err != nil || !changed {
			t.Fatalf("changed %v, err %v", changed, err)
		}
		np := out.(*Project)
		nj := np.Child.(*Join)
		small := nj.Right
		if j.Left == d {
			small = nj.Left
		}
		sp, ok := small.(*Project)
		if !ok || len(sp.Exprs) != 3 || sp.Exprs[2].String() != "upper(s)" {
			t.Fatalf("upper(s) not computed on d:\n%s", Format(out))
		}
		js := nj.Schema()
		for _, e := range append([]expr.Expr{nj.Cond}, np.Exprs[0], np.Exprs[2]) {
			expr.Walk(e, func(x expr.Expr) bool {
				if c, ok := x.(*expr.Column); ok && js[c.Index].Name != c.Name {
					t.Errorf("%s reads column %d as %s, which is %s", e, c.Index, c.Name, js[c.Index].Name)
				}
				return true
			})
		}
		if c, ok := np.Exprs[1].(*expr.Column); !ok || js[c.Index].Name != "upper(s)" {
			t.Errorf("the projection reads %s for upper(s), in %v", np.Exprs[1], js)
		}
	}
}
