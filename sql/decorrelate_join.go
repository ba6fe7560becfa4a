package sql

import (
	"fmt"

	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/planner"
)

// join flattens a two-input join. A dependent side is flattened and
// carries D; with both sides dependent (or a dependent condition over an
// independent left side, which then is crossed with D) the sides' domain
// columns must match, NULL-safely. Semi, anti and mark joins keep the left
// side's columns (and D); inner and left joins put D after both sides.
func (f *flattener) join(n *planner.Join) (flat, error) {
	k := f.corr.k()
	lw, rw := len(n.Left.Schema()), len(n.Right.Schema())
	rd := f.dependent(n.Right)
	if rd && n.Type == planner.NullAwareAntiJoin {
		return flat{}, fmt.Errorf("%w: NOT IN subquery correlated with a query two levels out", exec.ErrInternal)
	}
	l, err := f.flatten(n.Left) // crosses an independent left side with D
	if err != nil {
		return flat{}, err
	}
	var right planner.Plan
	var rnull []bool
	if rd {
		r, err := f.flatten(n.Right)
		if err != nil {
			return flat{}, err
		}
		right, rnull = r.plan, r.nullable
	} else if right, err = decrement(n.Right); err != nil {
		return flat{}, err
	}
	// Condition columns: left [0,lw) stay, right [lw,lw+rw) move past
	// the left's domain columns.
	var conds []expr.Expr
	if n.Cond != nil {
		c, err := remapColumns(n.Cond, func(i int) int {
			if i >= lw {
				return i + k
			}
			return i
		})
		if err != nil {
			return flat{}, err
		}
		if c, err = f.rewrite(c, lw); err != nil {
			return flat{}, err
		}
		conds = append(conds, c)
	}
	if rd {
		rbase := lw + k + rw
		for j, d := range f.domainCols(lw) {
			eq, err := f.b.domainEq(d, expr.NewColumn(rbase+j, f.corr.types[j], d.String()), l.nullable[j] && rnull[j])
			if err != nil {
				return flat{}, err
			}
			conds = append(conds, eq...)
		}
	}
	j := &planner.Join{Type: n.Type, Left: l.plan, Right: right, Cond: planner.JoinAnd(conds)}
	s := j.Schema()
	switch n.Type {
	case planner.SemiJoin, planner.AntiJoin, planner.NullAwareAntiJoin:
		return flat{plan: j, width: lw, nullable: l.nullable}, nil
	case planner.MarkJoin:
		exprs, names := passthrough(s, 0, lw)
		exprs, names = append(exprs, expr.NewColumn(lw+k, s[lw+k].Type, "mark")), append(names, "mark")
		return flat{plan: f.project(j, exprs, names, lw), width: lw + 1, nullable: l.nullable}, nil
	}
	exprs, names := passthrough(s, 0, lw)
	e2, n2 := passthrough(s, lw+k, rw)
	proj := f.project(j, append(exprs, e2...), append(names, n2...), lw)
	proj.Tables = tablesOf(s, lw, k, rw)
	return flat{plan: proj, width: lw + rw, nullable: l.nullable}, nil
}

// tablesOf lists the qualifiers of columns [0,lw) and [lw+k, lw+k+rw).
func tablesOf(s planner.Schema, lw, k, rw int) []string {
	var out []string
	for i := 0; i < lw; i++ {
		out = append(out, s[i].Table)
	}
	for i := lw + k; i < lw+k+rw; i++ {
		out = append(out, s[i].Table)
	}
	return out
}

// multiJoin flattens an inner join of several inputs: dependent inputs
// are flattened and their domain columns equated with the first one's;
// when only the conditions are dependent, D joins as one more input.
func (f *flattener) multiJoin(n *planner.MultiJoin) (flat, error) {
	k := f.corr.k()
	var inputs []planner.Plan
	var oldOff, newOff, widths []int
	dbase, first := -1, -1
	var dnull []bool
	var conds []expr.Expr
	o, no := 0, 0
	for i, in := range n.Inputs {
		w := len(in.Schema())
		oldOff, newOff, widths = append(oldOff, o), append(newOff, no), append(widths, w)
		if f.dependent(in) {
			fl, err := f.flatten(in)
			if err != nil {
				return flat{}, err
			}
			inputs = append(inputs, fl.plan)
			if first < 0 {
				first, dbase, dnull = i, no+w, fl.nullable
			} else {
				for j, d := range f.domainCols(dbase) {
					eq, err := f.b.domainEq(d, expr.NewColumn(no+w+j, f.corr.types[j], d.String()), dnull[j] && fl.nullable[j])
					if err != nil {
						return flat{}, err
					}
					conds = append(conds, eq...)
				}
			}
			no += w + k
		} else {
			p, err := decrement(in)
			if err != nil {
				return flat{}, err
			}
			inputs = append(inputs, p)
			no += w
		}
		o += w
	}
	if first < 0 {
		inputs = append(inputs, f.domain())
		dbase, dnull = no, allNullable(k)
	}
	remap := func(i int) int {
		for in := len(oldOff) - 1; in >= 0; in-- {
			if i >= oldOff[in] {
				return newOff[in] + i - oldOff[in]
			}
		}
		return i
	}
	for _, c := range n.Conds {
		r, err := remapColumns(c, remap)
		if err != nil {
			return flat{}, err
		}
		if r, err = f.rewrite(r, dbase); err != nil {
			return flat{}, err
		}
		conds = append(conds, r)
	}
	mj := &planner.MultiJoin{Inputs: inputs, Conds: conds}
	s := mj.Schema()
	var exprs []expr.Expr
	var names, tables []string
	for i := range n.Inputs {
		e, nm := passthrough(s, newOff[i], widths[i])
		exprs, names = append(exprs, e...), append(names, nm...)
		for c := newOff[i]; c < newOff[i]+widths[i]; c++ {
			tables = append(tables, s[c].Table)
		}
	}
	proj := f.project(mj, exprs, names, dbase)
	proj.Tables = tables
	return flat{plan: proj, width: o, nullable: dnull}, nil
}

// union flattens every input (an independent one is crossed with D).
//
// An input whose domain column j is an inner expression (eliminate: not
// nullable) holds NULL there for rows whose equality with the host could
// never hold; as long as every later domain equality is a plain =, they
// never join back. Once another input's column j comes from the host
// (nullable), the union's column j is nullable and joins back NULL-safely,
// and those rows would match a NULL host value: EXISTS (SELECT 1 FROM u
// WHERE u.k = t.a UNION ALL SELECT 1 FROM u WHERE u.k < t.a) was true for
// a NULL t.a when u.k held a NULL. So such an input drops them first.
func (f *flattener) union(n *planner.Union) (flat, error) {
	u := &planner.Union{}
	var nullable []bool
	var fls []flat
	w := 0
	for _, in := range n.Inputs {
		fl, err := f.flatten(in)
		if err != nil {
			return flat{}, err
		}
		fls = append(fls, fl)
		w = fl.width
		if nullable == nil {
			nullable = make([]bool, len(fl.nullable))
		}
		for j, x := range fl.nullable {
			nullable[j] = nullable[j] || x
		}
	}
	for _, fl := range fls {
		var keep []expr.Expr
		for j, x := range fl.nullable {
			if x || !nullable[j] {
				continue
			}
			c, err := f.b.call("isnotnull", expr.NewColumn(fl.width+j, f.corr.types[j], fmt.Sprintf("__domain%d", j)))
			if err != nil {
				return flat{}, err
			}
			keep = append(keep, c)
		}
		p := fl.plan
		if len(keep) > 0 {
			p = &planner.Filter{Child: p, Cond: planner.JoinAnd(keep)}
		}
		u.Inputs = append(u.Inputs, p)
	}
	return flat{plan: u, width: w, nullable: nullable}, nil
}
