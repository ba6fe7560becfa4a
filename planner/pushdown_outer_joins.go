package planner

import "github.com/fsql-dev/fsql/exec/expr"

// spliceJoins returns a MultiJoin's inputs and conjuncts with its LEFT
// JOIN inputs turned into inner joins where a conjunct across inputs
// rejects NULLs of the optional side, and every inner Join input spliced
// into the MultiJoin: its two sides become inputs and its condition
// conjuncts, so the join order search sees them.
//
// TPC-DS q93 is the case: `store_sales LEFT JOIN store_returns ON ...,
// reason WHERE sr_reason_sk = r_reason_sk AND r_reason_desc = '...'`. The
// WHERE equality spans two inputs of the comma join, so it never reached
// the outer join below it, which stayed an outer join: all 2.9 M
// store_sales rows probed store_returns before the one reason filtered
// them. Inner, the filtered reason joins store_returns first and the
// result is a small build side for store_sales.
//
// Splicing keeps every column where it was: a Join's columns are its
// left side's followed by its right side's, the inputs' concatenation.
func spliceJoins(inputs []Plan, conds []expr.Expr) ([]Plan, []expr.Expr) {
	for {
		offsets := make([]int, len(inputs)+1)
		for i, in := range inputs {
			offsets[i+1] = offsets[i] + width(in)
		}
		at := -1
		for i, in := range inputs {
			j, ok := in.(*Join)
			if !ok {
				continue
			}
			if j.Type == InnerJoin || j.Type == LeftJoin && rejectsOptionalSide(conds, offsets[i], offsets[i]+width(j.Left), offsets[i+1]) {
				at = i
				break
			}
		}
		if at < 0 {
			return inputs, conds
		}
		j := inputs[at].(*Join)
		spliced := append(append(append([]Plan{}, inputs[:at]...), j.Left, j.Right), inputs[at+1:]...)
		var own []expr.Expr
		for _, c := range expr.SplitAnd(j.Cond) {
			if c != nil {
				own = append(own, shift(c, offsets[at]))
			}
		}
		inputs, conds = spliced, append(append([]expr.Expr{}, conds...), own...)
	}
}

// rejectsOptionalSide reports whether a conjunct of conds that reads
// columns outside the input at [lo, hi) cannot be TRUE when that input's
// optional side, columns [opt, hi), is NULL-extended. (A conjunct within
// the input is pushed into the outer join, which decides it there.)
func rejectsOptionalSide(conds []expr.Expr, lo, opt, hi int) bool {
	for _, c := range conds {
		if !colRange(c, lo, hi) && nullRejecting(c, opt, hi) {
			return true
		}
	}
	return false
}
