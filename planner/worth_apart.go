package planner

// worthApart decides whether the copies of a subplan are better computed
// apart, each pruned by the dynamic filters of its own consumers' joins,
// than once for all of them (one shared copy serves consumers whose
// filters differ, so it keeps none of them; share_subplans): only when
// every copy is pruned from outside. A copy that no outside filter prunes
// is computed whole either way, so sharing it costs that consumer
// nothing and spares the others their pruned copies: q1's
// customer_total_return (one reference pruned to Tennessee's stores, the
// other read whole for the stores' averages), q33's, q70's and q14a's
// subplans took less CPU time shared (flat layout, scale 1: q1 about
// half, q33 and q70 about three quarters).
//
// When every copy is pruned, the copies stay apart. Summing the fractions
// each copy keeps (apart pays below 1) was tried and not kept: the
// estimates of those fractions, from fixed selectivities, put q2's and
// q59's weekly sales near 1 each (their pruned date_dim is small, and
// the rows it drops downstream are not seen), and shared they took 12%
// to 17% more CPU time; q23b's frequent_ss_items, pruned by item to
// about 38% and 52% of its rows (one month of web and of catalog sales),
// took about 15% more shared than apart.
//
// once reports the nodes that are shared whatever is decided here (no
// outside filter prunes them): their scans are not the copies' own.
func worthApart(d *dppPlan, copies []Plan, once func(Plan) bool) bool {
	for _, m := range copies {
		if !d.prunedOutside(m, once) {
			return false
		}
	}
	return true
}

// prunedOutside reports whether a dynamic filter of a join outside copy m
// prunes a scan of m that is not inside a node once reports.
func (d *dppPlan) prunedOutside(m Plan, once func(Plan) bool) bool {
	joins := joinsOf(m)
	seen := map[Plan]bool{}
	var walk func(n Plan) bool
	walk = func(n Plan) bool {
		if seen[n] || (n != m && once(n)) {
			return false
		}
		seen[n] = true
		if s, ok := n.(*Scan); ok {
			for _, t := range d.scans[s] {
				if !joins[t.join] {
					return true
				}
			}
		}
		for _, c := range n.Children() {
			if walk(c) {
				return true
			}
		}
		return false
	}
	return walk(m)
}
