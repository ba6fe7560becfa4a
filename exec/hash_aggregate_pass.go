package exec

import (
	"github.com/apache/arrow-go/v18/arrow"
)

// A partial aggregate exists to shrink what the exchange carries to the
// final one. When its rows barely share groups (q23a's frequent items:
// 2.2M rows, 1.79M groups) it shrinks little and costs a hash table as
// large as its input. So, as Spark's skipPartialAggregate and DuckDB do,
// a partial aggregate samples its first rows: when the groups it made are
// more than passThroughRatio of the rows it read, it hands out the table
// it has and turns every later row into the partial state of a group of
// one row, which the final aggregate merges as it would any other.

// passThroughSample is how many rows a partial aggregate reads before it
// decides (once) whether grouping them pays.
const passThroughSample = 64 << 10

// passThroughRatio is the groups-per-row ratio past which it stops
// grouping: 0.8 (DataFusion's and Trino's default) keeps the table
// unless it removes under a fifth of the rows. A fifth does not pay for
// the table: q23a's two partials (0.87 and 0.83 groups a row in their
// samples, 0.81 over their input) each built a table of about 900k
// groups to spare the final aggregates a fifth of their rows.
const passThroughRatio = 0.8

// checkPassThrough decides, once the sample is read, whether a partial
// aggregate stops grouping.
func (s *hashAggStream) checkPassThrough() bool {
	if s.a.Mode != AggPartial || s.passChecked || s.rowsIn < passThroughSample || len(s.keyTypes) == 0 {
		return false
	}
	s.passChecked = true
	if float64(s.groups.n) <= passThroughRatio*float64(s.rowsIn) {
		return false
	}
	s.passing = true
	if s.tc.Op != nil {
		s.tc.Op.Agg.PassTasks.Add(1)
	}
	return true
}

// passBatch turns every row of b into its own group's partial states,
// set as the output.
func (s *hashAggStream) passBatch(b arrow.RecordBatch) error {
	n := int(b.NumRows())
	alloc := s.ec.Alloc
	out, err := evalExprs(s.ec, s.a.GroupBy, b)
	if err != nil {
		return err
	}
	if len(s.ident) < n {
		s.ident = make([]int32, n)
		for i := range s.ident {
			s.ident[i] = int32(i)
		}
	}
	gids := s.ident[:n]
	args, err := s.shared.extend(s.ec, b)
	if err != nil {
		releaseArrays(out)
		return err
	}
	defer args.Release()
	for i, f := range s.a.Aggs {
		st, err := newAggStateOf(f, s.stateTypes[i])
		if err == nil {
			st.grow(n)
			var arg arrow.Array
			if f.Arg != nil {
				arg, err = s.shared.arg(s.a, i).Eval(s.ec, args)
			}
			if err == nil {
				err = st.update(gids, arg)
				if arg != nil {
					arg.Release()
				}
			}
			if err == nil {
				var cols []arrow.Array
				cols, err = st.partial(alloc, n)
				out = append(out, cols...)
			}
		}
		if err != nil {
			releaseArrays(out)
			return err
		}
	}
	if err := s.castToSchema(out); err != nil {
		releaseArrays(out)
		return err
	}
	if s.tc.Op != nil {
		s.tc.Op.Agg.PassRows.Add(int64(n))
	}
	s.out, s.outN, s.pos = out, n, 0
	return nil
}
