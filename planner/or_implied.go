package planner

import (
	"github.com/fsql-dev/fsql/exec/expr"
)

// impliedByOr derives, from a condition of an inner join that reads
// several inputs and is a disjunction, the weaker condition it implies on
// one input alone, so that input's rows can be filtered before the join.
// TPC-DS q13, q48 and q85 write
//
//	(cd_marital_status = 'M' AND ss_sales_price BETWEEN 100 AND 150)
//	OR (cd_marital_status = 'S' AND ss_sales_price BETWEEN 50 AND 100) ...
//
// over the join of store_sales and customer_demographics: nothing of it
// is one table's, so without this every store_sales row of the year went
// through the joins and met the OR at the end. But each branch restricts
// store_sales, so the whole implies
//
//	ss_sales_price BETWEEN 100 AND 150 OR ss_sales_price BETWEEN 50 AND 100 ...
//
// and the scan can test that (and skip row groups by it). The original
// condition stays where it is: the derived one only removes rows it would
// reject too.
//
// For input columns [lo, hi): when every branch b_k of cond = b_1 OR ...
// OR b_n has conjuncts confined to the input, whose conjunction is p_k,
// cond implies p_1 OR ... OR p_n. Under three-valued logic too: cond TRUE
// means some b_k TRUE, so each of its conjuncts and p_k TRUE. A join or
// filter keeps only rows whose condition is TRUE, so dropping the input's
// rows where the derived condition is not TRUE drops none it would keep.
// A branch without such conjuncts leaves the input unrestricted, and
// nothing is derived. fsql has no volatile functions, so a conjunct
// evaluated twice gives the same value.
//
// The result is factored (factorOr) into conjuncts: a test every branch
// shares, like q13's ca_country = 'United States', becomes a plain
// conjunct that row-group statistics can use.
func impliedByOr(cond expr.Expr, lo, hi int) []expr.Expr {
	call, ok := cond.(*expr.Call)
	if !ok || call.Fn != "or" || colRange(cond, lo, hi) {
		return nil
	}
	branches := splitOr(cond)
	parts := make([]expr.Expr, 0, len(branches))
	for _, b := range branches {
		var mine []expr.Expr
		for _, c := range expr.SplitAnd(b) {
			if len(expr.Columns(c)) > 0 && colRange(c, lo, hi) {
				mine = append(mine, c)
			}
		}
		if len(mine) == 0 {
			return nil
		}
		parts = append(parts, joinAnd(mine))
	}
	// Branches that restrict the input alike (q13's hd_dep_count = 1
	// twice) need testing once.
	or, err := Balanced("or", dedupConjuncts(parts))
	if err != nil {
		return nil
	}
	return factorOr(or)
}

// dedupConjuncts drops repeated terms (by canonKey) of a conjunction or
// a disjunction, keeping the first of each. Derived conditions are derived again on every pushdown
// pass; without this each pass would add another copy where the last one
// landed, and the pushdown would never reach its fixed point.
func dedupConjuncts(cs []expr.Expr) []expr.Expr {
	if len(cs) < 2 {
		return cs
	}
	seen := make(map[string]bool, len(cs))
	out := cs[:0:0]
	for _, c := range cs {
		k := canonKey(c)
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, c)
	}
	return out
}
