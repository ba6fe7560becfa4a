package planner_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/planner"
	"github.com/fsql-dev/fsql/sql"
)

func TestOrOfEqualitiesBecomesIn(t *testing.T) {
	cat := catalog(t)
	for _, c := range []struct {
		query     string
		want, not []string
	}{
		{"select name from l where id = 1 or id = 2 or 3 = id", []string{"(l.id IN (1, 2, 3))"}, []string{" OR "}},
		{"select name from l where id = 1 or name = 'x' or id = 2", []string{"(l.id IN (1, 2))", "(l.name = 'x')"}, nil},
		{"select name from l where name = 'a' or (name = 'b') or lv > 3", []string{"(l.name IN ('a', 'b'))"}, nil},
		// One equality per column, a NULL, or a floating-point comparison
		// (IN hashes, -0 = 0) stay as written.
		{"select name from l where id = 1 or lv = 2", []string{"((l.id = 1) OR (l.lv = 2))"}, []string{"IN"}},
		{"select name from l where id = 1 or id = null", nil, []string{"IN"}},
		{"select name from l where id = 1e0 or id = 2e0", nil, []string{"IN"}},
	} {
		plan := optimize(t, cat, c.query)
		for _, w := range c.want {
			if !strings.Contains(plan, w) {
				t.Errorf("%s: plan lacks %q:\n%s", c.query, w, plan)
			}
		}
		for _, n := range c.not {
			if strings.Contains(plan, n) {
				t.Errorf("%s: plan has %q:\n%s", c.query, n, plan)
			}
		}
	}
}

// TestChainsBindBalanced: a long chain of one logical operator binds to a
// tree about log2(terms) deep, so walks over it stay linear.
func TestChainsBindBalanced(t *testing.T) {
	cat := catalog(t)
	for _, op := range []string{" or ", " and "} {
		terms := make([]string, 10000)
		for i := range terms {
			terms[i] = fmt.Sprintf("lv > %d", i)
		}
		stmts, err := sql.Parse("select name from l where " + strings.Join(terms, op))
		if err != nil {
			t.Fatal(err)
		}
		st, err := sql.NewBinder(cat).Bind(stmts[0])
		if err != nil {
			t.Fatal(err)
		}
		var filter *planner.Filter
		for p := st.Plan; p != nil && filter == nil; {
			filter, _ = p.(*planner.Filter)
			if ch := p.Children(); len(ch) == 1 {
				p = ch[0]
			} else {
				p = nil
			}
		}
		if filter == nil {
			t.Fatalf("no filter in\n%s", planner.Format(st.Plan))
		}
		if d := depth(filter.Cond); d > 20 {
			t.Errorf("%q chain of 10000 terms binds %d deep", op, d)
		}
	}
}

func depth(e expr.Expr) int {
	d := 0
	for _, c := range e.Children() {
		d = max(d, depth(c))
	}
	return d + 1
}

// TestFoldConstants: the one-pass fold gives what expr.ConstantFold gives.
func TestFoldConstants(t *testing.T) {
	col := expr.NewColumn(0, arrow.PrimitiveTypes.Int64, "x")
	lit := func(v int64) expr.Expr { return expr.NewLiteral(v, arrow.PrimitiveTypes.Int64) }
	call := func(fn string, args ...expr.Expr) expr.Expr {
		e, err := expr.NewCall(fn, args...)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	for _, e := range []expr.Expr{
		col,
		lit(3),
		call("+", lit(1), lit(2)),
		call("+", col, call("*", lit(2), lit(3))),
		call(">", call("+", call("+", col, lit(1)), call("-", lit(5), lit(2))), call("abs", lit(-4))),
		call("or", call("=", col, lit(1)), call("=", lit(1), lit(2))),
		call("case", call("=", lit(1), lit(1)), col, lit(0)),
	} {
		want, err := expr.ConstantFold(e, memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		got, err := planner.FoldConstants(e, memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		if planner.ExprKey(got) != planner.ExprKey(want) {
			t.Errorf("FoldConstants(%s) = %s, ConstantFold gives %s", e, got, want)
		}
	}
	same := call("+", col, lit(1))
	if got, _ := planner.FoldConstants(same, memory.DefaultAllocator); got != same {
		t.Errorf("FoldConstants rebuilt %s, which has nothing to fold", same)
	}
}

// TestPlanningStopsWhenCancelled: binder, optimizer and physical planner
// return the context's error.
func TestPlanningStopsWhenCancelled(t *testing.T) {
	cat := catalog(t)
	stmts, err := sql.Parse("select l.name, count(*) from l join r on l.id = r.id where lv > 1 group by l.name")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := sql.NewBinder(cat).BindContext(ctx, stmts[0]); !errors.Is(err, context.Canceled) {
		t.Errorf("BindContext: %v, want context.Canceled", err)
	}
	st, err := sql.NewBinder(cat).Bind(stmts[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := planner.Optimize(st.Plan, &planner.Context{Ctx: ctx}); !errors.Is(err, context.Canceled) {
		t.Errorf("Optimize: %v, want context.Canceled", err)
	}
	lp, err := planner.Optimize(st.Plan, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := planner.PhysicalContext(ctx, lp, planner.PhysicalConfig{MaxParallelism: 8}); !errors.Is(err, context.Canceled) {
		t.Errorf("PhysicalContext: %v, want context.Canceled", err)
	}
}
