package planner

import (
	"fmt"
	"strings"
)

// planKey renders a plan's shape and expressions, so a rule can tell
// whether it changed anything.
func planKey(p Plan) string {
	var sb strings.Builder
	var walk func(p Plan, depth int)
	walk = func(p Plan, depth int) {
		sb.WriteString(strings.Repeat(" ", depth))
		switch n := p.(type) {
		case *Scan:
			fmt.Fprintf(&sb, "scan %s %v", n.Table.Name, n.Columns)
			for _, f := range n.Filters {
				sb.WriteString(" " + exprKey(f))
			}
			fmt.Fprintf(&sb, " parts=%d/%v", len(n.Partitions), n.Pruned)
		case *Filter:
			sb.WriteString("filter " + exprKey(n.Cond))
		case *Project:
			sb.WriteString("project")
			for _, e := range n.Exprs {
				sb.WriteString(" " + exprKey(e))
			}
		case *Join:
			sb.WriteString("join " + n.Type.String())
			if n.Cond != nil {
				sb.WriteString(" " + exprKey(n.Cond))
			}
		case *MultiJoin:
			sb.WriteString("multijoin")
			for _, c := range n.Conds {
				sb.WriteString(" " + exprKey(c))
			}
		default:
			fmt.Fprintf(&sb, "%T", p)
		}
		sb.WriteString("\n")
		for _, c := range p.Children() {
			walk(c, depth+1)
		}
	}
	walk(p, 0)
	return sb.String()
}
