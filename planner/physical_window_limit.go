package planner

import (
	"strings"

	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/exec/expr"
)

// rankLimit finds, among the conjuncts of cond (a filter directly over
// window w), a bound on the result r of one of w's rank() or row_number()
// calls: r <= K, r < K, r = K or the same with the sides swapped, K an
// integer constant. The window may then drop the rows it would number
// past K as it sorts, and the tasks below its exchange may keep only
// those rows of their own (exec.RankLimit, exec.WindowGroupLimit): q67
// keeps 100 of each category's 654k-row ranking, q44 ten, q70 five. The
// filter stays; the limit only saves work.
//
// Every function of w must be rank, row_number or dense_rank: their value
// on a row depends only on the rows before it, all of which a kept row
// keeps. (An aggregate over the partition, or a lead, would read dropped
// rows.) Of several bounds the smallest K serves.
func rankLimit(cond expr.Expr, w *Window) *exec.RankLimit {
	base := len(w.Child.Schema())
	for _, f := range w.Funcs {
		switch strings.ToLower(f.Fn) {
		case "rank", "row_number", "dense_rank":
		default:
			return nil
		}
	}
	var best *exec.RankLimit
	for _, c := range expr.SplitAnd(cond) {
		call, ok := c.(*expr.Call)
		if !ok || len(call.Args) != 2 {
			continue
		}
		op := call.Fn
		a, b := call.Args[0], call.Args[1]
		if _, ok := a.(*expr.Literal); ok {
			a, b = b, a
			op = map[string]string{"<=": ">=", "<": ">", ">=": "<=", ">": "<", "=": "="}[op]
		}
		col, ok := a.(*expr.Column)
		lit, ok2 := b.(*expr.Literal)
		if !ok || !ok2 || col.Index < base || col.Index >= base+len(w.Funcs) {
			continue
		}
		fn := strings.ToLower(w.Funcs[col.Index-base].Fn)
		k, ok := lit.Value.(int64)
		if !ok || (fn != "rank" && fn != "row_number") {
			continue
		}
		switch op {
		case "<":
			k--
		case "<=", "=":
		default:
			continue
		}
		k = max(k, 0)
		if best == nil || k < best.K {
			best = &exec.RankLimit{Fn: fn, K: k}
		}
	}
	return best
}
