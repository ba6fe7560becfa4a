package planner

import (
	"fmt"
	"strings"

	"github.com/fsql-dev/fsql/exec/expr"
)

// Format renders a logical plan as an indented tree, one node per line,
// for tests and debugging.
func Format(p Plan) string {
	var sb strings.Builder
	var walk func(p Plan, depth int)
	walk = func(p Plan, depth int) {
		sb.WriteString(strings.Repeat("  ", depth))
		sb.WriteString(describe(p))
		sb.WriteString("\n")
		for _, c := range p.Children() {
			walk(c, depth+1)
		}
	}
	walk(p, 0)
	return sb.String()
}

func exprList(es []expr.Expr) string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = e.String()
	}
	return strings.Join(s, ", ")
}

func describe(p Plan) string {
	switch n := p.(type) {
	case *Scan:
		s := n.Schema()
		cols := make([]string, len(s))
		for i, c := range s {
			cols[i] = c.Name
		}
		out := fmt.Sprintf("Scan %s [%s]", n.Table.Name, strings.Join(cols, ", "))
		if len(n.Filters) > 0 {
			out += " filters [" + exprList(n.Filters) + "]"
		}
		if n.Pruned {
			out += fmt.Sprintf(" partitions %d/%d", len(n.Partitions), len(n.Table.Partitions))
		}
		return out
	case *Filter:
		return "Filter " + n.Cond.String()
	case *Project:
		return "Project [" + exprList(n.Exprs) + "]"
	case *Join:
		if n.Cond == nil {
			return "Join " + n.Type.String() + " (cross)"
		}
		return "Join " + n.Type.String() + " on " + n.Cond.String()
	case *MultiJoin:
		return "MultiJoin [" + exprList(n.Conds) + "]"
	case *Aggregate:
		aggs := make([]string, len(n.Aggs))
		for i, a := range n.Aggs {
			aggs[i] = a.Name
		}
		r := ""
		if n.Rollup {
			r = " with rollup"
		}
		if n.Local {
			return fmt.Sprintf("Aggregate(local) group by [%s]", exprList(n.GroupBy))
		}
		return fmt.Sprintf("Aggregate group by [%s]%s aggs [%s]", exprList(n.GroupBy), r, strings.Join(aggs, ", "))
	case *Sort:
		keys := make([]string, len(n.Keys))
		for i, k := range n.Keys {
			keys[i] = k.Expr.String()
			if k.Desc {
				keys[i] += " desc"
			}
		}
		return "Sort [" + strings.Join(keys, ", ") + "]"
	case *Limit:
		return fmt.Sprintf("Limit %d offset %d", n.N, n.Offset)
	case *Union:
		return "Union all"
	case *Window:
		return fmt.Sprintf("Window partition by [%s] (%d funcs)", exprList(n.PartitionBy), len(n.Funcs))
	case *Values:
		return fmt.Sprintf("Values (%d rows)", len(n.Rows))
	case *MaxOneRow:
		return "MaxOneRow"
	}
	return fmt.Sprintf("%T", p)
}
