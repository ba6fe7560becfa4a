package planner

// knownSizeMargin: an inner join builds on a side whose size is known
// (a table read whole) rather than on a side whose size is an estimate,
// unless the estimate is this many times smaller in rows and in bytes.
//
// An estimate over filters and joins errs low: fixed selectivities and
// the independence of conditions, and a foreign-key join that keeps the
// fact in the fraction the dimension kept, although a fact's keys cover
// few of its dimension's rows (store sales span 5 of date_dim's 200
// years, so a year of dates keeps a fifth of the sales, not 0.5%). A
// table's row count comes from the Parquet footers and is exact. And a
// hash table costs per row as much as per byte, so a side of more rows
// is no cheaper to build for being narrower. q38 is why: a year of store
// sales with their dates was estimated at 314k rows of 9 bytes, 2.8 MB,
// against 100k customers with two names, 5.3 MB, and became the build
// side; at run time it held 548k rows (38 MB of hash table), and the
// probe side, customer's one row group, ran the join and the DISTINCT
// after it in one task while the other slot idled. Built on customer,
// the sales stream through the join in as many tasks as they have
// splits. q74's year_total is the same join.
const knownSizeMargin = 2

// buildOnLeft reports whether inner join j builds its hash table on its
// left input (le and re are the inputs' estimates): on the smaller side
// in bytes, but on a side of known size unless the other, an inner
// join's estimate, is estimated knownSizeMargin times smaller in both
// rows and bytes.
func buildOnLeft(j *Join, le, re Stats) bool {
	lb, rb := le.Bytes(), re.Bytes()
	switch lk, rk := knownSize(j.Left), knownSize(j.Right); {
	case lk && !joined(j.Right) || rk && !joined(j.Left):
		// The estimate of an aggregate or a window's filter errs high
		// as often (q44 ranks items to keep ten): bytes decide.
	case lk && !rk:
		return !(rb*knownSizeMargin < lb && re.Rows*knownSizeMargin < le.Rows)
	case rk && !lk:
		return lb*knownSizeMargin < rb && le.Rows*knownSizeMargin < re.Rows
	}
	return lb < rb
}

// knownSize reports whether p's row count is known before it runs: a
// scan without filters (of the partitions static pruning kept, whose
// footers give their rows) under projections.
func knownSize(p Plan) bool {
	for {
		switch n := p.(type) {
		case *Scan:
			return len(n.Filters) == 0
		case *Project:
			p = n.Child
		default:
			return false
		}
	}
}

// joined reports whether p is an inner join under filters and
// projections: a foreign-key estimate, the one that errs low.
func joined(p Plan) bool {
	for {
		switch n := p.(type) {
		case *Join:
			return n.Type == InnerJoin
		case *Project:
			p = n.Child
		case *Filter:
			p = n.Child
		default:
			return false
		}
	}
}
