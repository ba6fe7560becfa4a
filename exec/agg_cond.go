package exec

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/fsql-dev/fsql/exec/expr"
)

// Conditional aggregates. q43, q59 and q2 sum one column seven times,
// once per day name:
//
//	sum(CASE WHEN d_day_name = 'Sunday' THEN ss_sales_price ELSE NULL END)
//
// Evaluated one by one, each CASE compares every row's key with its
// literal and each SUM then walks every row to find the seventh that
// have a value (the CASE eval and the sums' row loops were a fifth of
// q59's CPU samples). A family of such aggregates, one key column
// compared with distinct string literals, is computed in one pass
// instead: each row's key is matched once against the literals, giving
// the rows of each member, and each member's state folds in only its
// own rows of the THEN column. The results are the same: a row whose
// key is NULL or matches no literal gives no member a value, as the
// CASE gives it NULL.

// condAgg is one family: the aggregates (by index) whose arguments
// compare the column key with lits[j] and take the column vals[j].
type condAgg struct {
	key     int   // input column compared
	members []int // aggregate indexes
	lits    []string
	vals    []int // input column each member sums
	rows    [][]int32
}

// condAggs finds the families among a's aggregates (raw modes only);
// member[i] says aggregate i is computed by one of them.
func condAggs(a *HashAggregate, states []aggState) (fams []*condAgg, member []bool) {
	if a.Mode == AggFinal {
		return nil, nil
	}
	byKey := map[int]*condAgg{}
	var order []int
	for i, f := range a.Aggs {
		if f.Distinct {
			continue
		}
		if _, ok := states[i].(*decSumState); !ok {
			continue
		}
		key, lit, val, ok := condArg(f.Arg)
		if !ok {
			continue
		}
		fam := byKey[key]
		if fam == nil {
			fam = &condAgg{key: key}
			byKey[key] = fam
			order = append(order, key)
		}
		dup := false
		for _, l := range fam.lits {
			dup = dup || l == lit
		}
		if dup {
			continue // a row would take two members: left to the CASE
		}
		fam.members = append(fam.members, i)
		fam.lits = append(fam.lits, lit)
		fam.vals = append(fam.vals, val)
	}
	for _, k := range order {
		fam := byKey[k]
		if len(fam.members) < 2 {
			continue
		}
		if member == nil {
			member = make([]bool, len(a.Aggs))
		}
		for _, i := range fam.members {
			member[i] = true
		}
		fam.rows = make([][]int32, len(fam.members))
		fams = append(fams, fam)
	}
	return fams, member
}

// condArg matches CASE WHEN key = 'lit' THEN val ELSE NULL END over a
// string column key and a decimal column val.
func condArg(e expr.Expr) (key int, lit string, val int, ok bool) {
	c, isCall := e.(*expr.Call)
	if !isCall || c.Fn != "case" || len(c.Args) != 3 {
		return 0, "", 0, false
	}
	if l, isLit := c.Args[2].(*expr.Literal); !isLit || l.Value != nil {
		return 0, "", 0, false
	}
	v, isCol := c.Args[1].(*expr.Column)
	if !isCol || v.Type.ID() != arrow.DECIMAL128 {
		return 0, "", 0, false
	}
	eq, isCall := c.Args[0].(*expr.Call)
	if !isCall || eq.Fn != "=" || len(eq.Args) != 2 {
		return 0, "", 0, false
	}
	k, isCol := eq.Args[0].(*expr.Column)
	l, isLit := eq.Args[1].(*expr.Literal)
	if !isCol || !isLit || k.Type.ID() != arrow.STRING || l.Type.ID() != arrow.STRING {
		return 0, "", 0, false
	}
	s, isStr := l.Value.(string)
	if !isStr {
		return 0, "", 0, false
	}
	return k.Index, s, v.Index, true
}

// ready reports whether batch b's columns are of the form matched, so
// update can fold it in.
func (f *condAgg) ready(states []aggState, b arrow.RecordBatch) bool {
	if f.key >= int(b.NumCols()) {
		return false
	}
	if _, ok := b.Column(f.key).(*array.String); !ok {
		return false
	}
	for j, i := range f.members {
		if _, ok := states[i].(*decSumState); !ok || f.vals[j] >= int(b.NumCols()) || b.Column(f.vals[j]).DataType().ID() != arrow.DECIMAL128 {
			return false
		}
	}
	return true
}

// update folds batch b (ready) in for the family's members, whose
// states are states[member].
func (f *condAgg) update(states []aggState, b arrow.RecordBatch, gids []int32) {
	k := b.Column(f.key).(*array.String)
	for j := range f.rows {
		f.rows[j] = f.rows[j][:0]
	}
	n := int(b.NumRows())
	offs := k.ValueOffsets()
	data := k.ValueBytes()
	base := offs[0]
	bits, off := validity(k)
	for r := 0; r < n; r++ {
		if !isValid(bits, off, r) {
			continue
		}
		lo, hi := offs[r]-base, offs[r+1]-base
		s := data[lo:hi]
		for j, l := range f.lits {
			if len(l) == len(s) && string(s) == l {
				f.rows[j] = append(f.rows[j], int32(r))
				break
			}
		}
	}
	for j, i := range f.members {
		states[i].(*decSumState).updateRows(gids, b.Column(f.vals[j]), f.rows[j])
	}
}

// updateRows is update for the rows listed only (a decimal argument).
func (s *decSumState) updateRows(gids []int32, arg arrow.Array, rows []int32) {
	v := arrow.GetValues[decimal128.Num](arg.Data(), 1)
	bits, off := validity(arg)
	for _, r := range rows {
		if isValid(bits, off, int(r)) {
			s.add(gids[r], v[r], 1)
		}
	}
}
