package planner

import (
	"sort"
	"strings"

	"github.com/fsql-dev/fsql/exec/expr"
)

// factorOr pulls the conjuncts every branch of a disjunction shares out
// in front of it: (A AND B) OR (A AND C) becomes A AND (B OR C). TPC-DS
// writes join conditions inside OR branches (q13, q48, q85); factored out,
// they become equalities the join ordering and hash joins can use, instead
// of a cross product filtered afterwards. The rewrite is exact under
// three-valued logic: (A∧B)∨(A∧C) ≡ A∧(B∨C) holds for TRUE, FALSE and NULL.
// FactorOr is factorOr for the binder, which needs correlated equalities
// out of ORs before decorrelating.
func FactorOr(e expr.Expr) []expr.Expr { return factorOr(e) }

func factorOr(e expr.Expr) []expr.Expr {
	call, ok := e.(*expr.Call)
	if !ok || call.Fn != "or" {
		return []expr.Expr{e}
	}
	branches := splitOr(e)
	conj := make([][]expr.Expr, len(branches))
	keys := make([][]string, len(branches)) // canonKey of each conjunct, computed once
	split := func(i int) {
		conj[i] = expr.SplitAnd(branches[i])
		keys[i] = make([]string, len(conj[i]))
		for j, c := range conj[i] {
			keys[i][j] = canonKey(c)
		}
	}
	// Conjuncts of the first branch present in every other branch; most
	// ORs share nothing, which the second branch usually shows.
	split(0)
	candidates := map[string]bool{}
	for _, k := range keys[0] {
		candidates[k] = true
	}
	for i := 1; i < len(branches); i++ {
		split(i)
		here := map[string]bool{}
		for _, k := range keys[i] {
			if candidates[k] {
				here[k] = true
			}
		}
		if candidates = here; len(candidates) == 0 {
			return []expr.Expr{e}
		}
	}
	var common []expr.Expr
	isCommon := map[string]bool{}
	for j, c := range conj[0] {
		if k := keys[0][j]; candidates[k] && !isCommon[k] {
			isCommon[k] = true
			common = append(common, c)
		}
	}
	var rest []expr.Expr
	for i, cs := range conj {
		var keep []expr.Expr
		for j, c := range cs {
			if !isCommon[keys[i][j]] {
				keep = append(keep, c)
			}
		}
		if len(keep) == 0 {
			// One branch is exactly the common part: the OR is implied.
			return common
		}
		rest = append(rest, joinAnd(keep))
	}
	or, err := Balanced("or", rest)
	if err != nil {
		return []expr.Expr{e}
	}
	return append(common, or)
}

func splitOr(e expr.Expr) []expr.Expr {
	if c, ok := e.(*expr.Call); ok && c.Fn == "or" {
		var out []expr.Expr
		for _, a := range c.Args {
			out = append(out, splitOr(a)...)
		}
		return out
	}
	return []expr.Expr{e}
}

// commutative functions: a = b is the same conjunct as b = a.
var commutative = map[string]bool{"=": true, "<>": true, "<=>": true, "and": true, "or": true, "+": true, "*": true}

// canonKey is exprKey with the arguments of commutative functions sorted,
// so equal conjuncts written in another order match.
func canonKey(e expr.Expr) string {
	c, ok := e.(*expr.Call)
	if !ok {
		return exprKey(e)
	}
	args := make([]string, len(c.Args))
	for i, a := range c.Args {
		args[i] = canonKey(a)
	}
	if commutative[c.Fn] {
		sort.Strings(args)
	}
	return c.Fn + "(" + strings.Join(args, ",") + "):" + c.DataType().String()
}
