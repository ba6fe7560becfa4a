package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fsql-dev/fsql/exec/expr"
)

// Rollup rolls the partial states of ROLLUP's finest grouping set up to
// every shorter prefix of its keys, between the partial aggregate of the
// finest set and the final aggregate:
//
//	HashAggregate(final, group by keys + grouping_id)
//	  [hash exchange]
//	    Rollup(k keys)
//	      HashAggregate(partial, group by the k keys)
//
// Its input is the partial aggregate's rows: Keys group keys, then the
// state columns of Aggs (HashAggregate.PartialSchema). It emits them
// unchanged as the finest set's rows, and merges them into a table
// grouped by the first Keys-1 keys; when the input ends it emits that
// table's groups as their set's rows and merges them into a table of the
// next shorter prefix, and so on down to the grand total (no keys: one
// group, even for no input, so an empty input still answers with it).
// Each set is computed from the one above it, which is no larger, so
// ROLLUP costs the sizes of its sets instead of k+1 times the finest
// one's: q67's eight keys emitted and shuffled nine copies of every
// finest group before (Expand), and its coarser sets are a fraction of
// the finest.
//
// Output: the Keys key columns (those rolled up NULL), an Int64
// "grouping_id" (bit i set when key i is rolled up, as Expand), then the
// state columns. A key's rows of one set may come out more than once (a
// task's tables are flushed when they pass their share of the memory
// budget, and each task rolls up its own groups): the final aggregate
// merges them, as it merges partial aggregates' rows.
type Rollup struct {
	Child Node
	// Keys is how many leading columns of the child's rows are the
	// group keys, 1 to 62.
	Keys int
	// Aggs are the aggregates whose partial states follow the keys.
	Aggs []AggFunc
}

// Schema implements Node.
func (r *Rollup) Schema() *arrow.Schema {
	in := r.Child.Schema()
	fs := make([]arrow.Field, 0, in.NumFields()+1)
	for i := 0; i < in.NumFields(); i++ {
		f := in.Field(i)
		f.Nullable = true
		fs = append(fs, f)
	}
	// The grouping id goes after the keys (before the states, if any).
	k := min(r.Keys, len(fs))
	fs = append(fs[:k], append([]arrow.Field{{Name: "grouping_id", Type: arrow.PrimitiveTypes.Int64}}, fs[k:]...)...)
	return arrow.NewSchema(fs, nil)
}

// Children implements Node.
func (r *Rollup) Children() []Node { return []Node{r.Child} }

// SplittableInputs implements SplitInputs: its rows are partial states,
// which the final aggregate merges however the input was divided.
func (r *Rollup) SplittableInputs() []bool { return []bool{true} }

// String implements Node.
func (r *Rollup) String() string {
	in := r.Child.Schema()
	names := make([]string, 0, r.Keys)
	for i := 0; i < r.Keys && i < in.NumFields(); i++ {
		names = append(names, in.Field(i).Name)
	}
	return fmt.Sprintf("Rollup(keys [%s], %d prefix sets, merging [%s])", strings.Join(names, ", "), r.Keys+1, aggList(r.Aggs))
}

// Open implements Node.
func (r *Rollup) Open(tc *TaskContext, inputs []Stream) (Stream, error) {
	if len(inputs) != 1 {
		return nil, fmt.Errorf("%w: Rollup wants 1 input, got %d", ErrInternal, len(inputs))
	}
	if r.Keys < 1 || r.Keys > 62 {
		return nil, fmt.Errorf("%w: WITH ROLLUP over %d GROUP BY expressions (fsql's limit is 62): group by fewer", ErrNotImplemented, r.Keys)
	}
	in := r.Child.Schema()
	s := &rollupStream{r: r, tc: tc, in: inputs[0], ec: exprContext(tc), schema: r.Schema(), inSchema: in}
	col := r.Keys
	for _, f := range r.Aggs {
		k := numStateCols(f.Fn)
		if col+k > in.NumFields() {
			return nil, fmt.Errorf("%w: Rollup input has %d columns, too few for the states of %s", ErrInternal, in.NumFields(), f)
		}
		idx := make([]int, k)
		for i := range idx {
			idx[i] = col + i
		}
		s.stateCols = append(s.stateCols, idx)
		s.stateTypes = append(s.stateTypes, in.Field(col).Type)
		col += k
	}
	if col != in.NumFields() {
		return nil, fmt.Errorf("%w: Rollup input has %d columns for %d keys and states of %d columns", ErrInternal, in.NumFields(), r.Keys, col)
	}
	for i := 0; i < r.Keys; i++ {
		s.keyTypes = append(s.keyTypes, in.Field(i).Type)
	}
	s.levels = make([]*rollupLevel, r.Keys)
	for l := range s.levels {
		lv, err := s.newLevel(l)
		if err != nil {
			return nil, err
		}
		s.levels[l] = lv
	}
	s.res = tc.reservation("rollup", true)
	return s, nil
}

// rollupLevel is the table of one grouping set: groups by the first keys
// keys, with the merged states of each.
type rollupLevel struct {
	keys   int
	groups *groupTable
	states []aggState
}

type rollupStream struct {
	r          *Rollup
	tc         *TaskContext
	in         Stream
	ec         *expr.Context
	schema     *arrow.Schema
	inSchema   *arrow.Schema
	keyTypes   []arrow.DataType
	stateTypes []arrow.DataType
	stateCols  [][]int
	// levels[l] groups by the first l keys; the finest set (all keys)
	// has no table, its rows are the input's.
	levels []*rollupLevel
	gids   []int32
	res    *Reservation
	// last is the finest level still to flush once the input ended.
	last int
	// out holds whole sets' rows still to hand out, in order.
	out []rollupOut
	pos int
}

// rollupOut is rows waiting to be handed out: columns of the output
// schema, n rows.
type rollupOut struct {
	cols []arrow.Array
	n    int
}

func (s *rollupStream) newLevel(l int) (*rollupLevel, error) {
	lv := &rollupLevel{keys: l, groups: newGroupTable(s.keyTypes[:l])}
	for i, f := range s.r.Aggs {
		st, err := newAggStateOf(f, s.stateTypes[i])
		if err != nil {
			return nil, err
		}
		st.grow(lv.groups.n)
		lv.states = append(lv.states, st)
	}
	return lv, nil
}

func (s *rollupStream) Next(ctx context.Context) (arrow.RecordBatch, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if len(s.out) > 0 {
			o := &s.out[0]
			if s.pos < o.n {
				start, end := s.pos, min(s.pos+BatchSize, o.n)
				s.pos = end
				if start == 0 && end == o.n {
					// Hand the columns over whole.
					cols := o.cols
					o.cols = nil
					return newBatch(s.schema, cols, end), nil
				}
				return newBatch(s.schema, sliceArrays(o.cols, start, end), end-start), nil
			}
			releaseArrays(o.cols)
			s.out = s.out[1:]
			s.pos = 0
			continue
		}
		if s.in == nil {
			// The input ended: each set from the next finer one, down to
			// the grand total, one set at a time, so a set's rows are
			// handed out before the next coarser one is made.
			if s.last < 0 {
				return nil, io.EOF
			}
			if err := s.flush(s.last); err != nil {
				return nil, err
			}
			s.levels[s.last] = nil
			s.last--
			if err := s.res.Resize(s.need()); err != nil {
				return nil, err
			}
			continue
		}
		b, err := s.in.Next(ctx)
		if err == io.EOF {
			s.in.Close()
			s.in = nil
			s.last = len(s.levels) - 1
			continue
		}
		if err != nil {
			return nil, err
		}
		if b.NumRows() == 0 {
			b.Release()
			continue
		}
		err = s.addInput(b)
		b.Release()
		if err != nil {
			return nil, err
		}
	}
}

// addInput queues batch b as the finest set's rows and merges it into
// the table of the next shorter prefix.
func (s *rollupStream) addInput(b arrow.RecordBatch) error {
	n := int(b.NumRows())
	cols := make([]arrow.Array, b.NumCols())
	for i := range cols {
		cols[i] = b.Column(i)
	}
	if err := s.merge(s.levels[len(s.levels)-1], cols, n); err != nil {
		return err
	}
	s.queue(len(s.levels), cols, n)
	return s.reserve()
}

// merge folds n rows in the input's layout (keys, then states) into
// level lv.
func (s *rollupStream) merge(lv *rollupLevel, cols []arrow.Array, n int) error {
	var err error
	if s.gids, err = lv.groups.ids(cols[:lv.keys], n, s.gids); err != nil {
		return err
	}
	for i, st := range lv.states {
		st.grow(lv.groups.n)
		sc := make([]arrow.Array, len(s.stateCols[i]))
		for k, c := range s.stateCols[i] {
			sc[k] = cols[c]
		}
		if err := st.merge(s.gids, sc); err != nil {
			return err
		}
	}
	return nil
}

// queue adds n rows of set l (the first l keys kept) in the input's
// layout to the output: keys l.. become NULL, the grouping id goes in
// after the keys. It takes references of its own to cols.
func (s *rollupStream) queue(l int, cols []arrow.Array, n int) {
	k := s.r.Keys
	out := make([]arrow.Array, 0, len(cols)+1)
	for i := 0; i < k; i++ {
		if i < l {
			cols[i].Retain()
			out = append(out, cols[i])
		} else {
			out = append(out, array.MakeArrayOfNull(s.ec.Alloc, s.keyTypes[i], n))
		}
	}
	gid := int64(0)
	for i := l; i < k; i++ {
		gid |= 1 << i
	}
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = gid
	}
	out = append(out, fixedArray(s.ec.Alloc, arrow.PrimitiveTypes.Int64, ids, nil))
	for _, c := range cols[k:] {
		c.Retain()
		out = append(out, c)
	}
	s.out = append(s.out, rollupOut{cols: out, n: n})
}

// flush hands out the groups of level l as its set's rows, merges them
// into the next shorter prefix's table, and empties level l.
func (s *rollupStream) flush(l int) error {
	lv := s.levels[l]
	n := lv.groups.n
	if n == 0 {
		return nil
	}
	alloc := s.ec.Alloc
	cols, err := lv.groups.arrays(alloc)
	if err != nil {
		return err
	}
	for i, st := range lv.states {
		sc, err := st.partial(alloc, n)
		if err == nil {
			err = s.castStates(sc, s.stateCols[i])
		}
		cols = append(cols, sc...)
		if err != nil {
			releaseArrays(cols)
			return err
		}
	}
	// Level l has l key columns; the input's layout has k.
	full := make([]arrow.Array, 0, s.inSchema.NumFields())
	full = append(full, cols[:l]...)
	for i := l; i < s.r.Keys; i++ {
		full = append(full, nil)
	}
	full = append(full, cols[l:]...)
	if l > 0 {
		err = s.merge(s.levels[l-1], full, n)
	}
	if err == nil {
		s.queue(l, full, n)
	}
	releaseArrays(cols)
	if err != nil {
		return err
	}
	s.levels[l], err = s.newLevel(l)
	return err
}

// castStates casts, in place, state columns whose type the state does not
// produce natively to the input's types (as HashAggregate.castToSchema).
// On error the caller still owns sc.
func (s *rollupStream) castStates(sc []arrow.Array, idx []int) error {
	for i, a := range sc {
		want := s.inSchema.Field(idx[i]).Type
		if !arrow.TypeEqual(a.DataType(), want) {
			c, err := castArray(s.ec.Alloc, a, want)
			if err != nil {
				return err
			}
			a.Release()
			sc[i] = c
		}
	}
	return nil
}

// need estimates what the tables hold, as hashAggStream.tableNeed.
func (s *rollupStream) need() int64 {
	var need int64
	for _, lv := range s.levels {
		if lv == nil {
			continue
		}
		need += lv.groups.bytes() + int64(lv.groups.n)*int64(24*len(lv.states))
		for _, st := range lv.states {
			if sz, ok := st.(sizedState); ok {
				need += sz.bytes()
			}
		}
	}
	return need
}

// reserve keeps the reservation ahead of the tables. Past the share
// (or the budget) the tables are flushed, finest first, each into the
// next (the grand total's one group stays): their groups are partial
// states, which the final aggregate merges, so a flush costs only more
// rows out, never a spill file. It stops once the tables need at most
// half the share: the finer sets are the large ones, and a
// coarser table flushed with them would hand out its groups again at
// every flush (q67's product, year and quarter sets under its month
// set), rows the exchange carries and the final aggregate merges for
// nothing; kept, it grows by what the finer ones merge into it and goes
// out once, at the end, unless it becomes large itself.
func (s *rollupStream) reserve() error {
	need, have := s.need(), s.res.Size()
	if need <= have {
		return nil
	}
	err := s.res.Grow(max(need-have, need/4, 1<<20))
	if err == nil || s.res.Grow(need-have) == nil {
		return nil
	}
	if IsNoShare(err) || !errors.Is(err, ErrResourcesExhausted) {
		return err
	}
	target := s.res.Share() / 2
	if target < 0 { // not divided: the budget itself refused
		target = have / 2
	}
	for l := len(s.levels) - 1; l >= 1; l-- {
		if err := s.flush(l); err != nil {
			return err
		}
		if s.need() <= target {
			break
		}
	}
	return s.res.Resize(s.need())
}

func (s *rollupStream) Close() {
	if s.in != nil {
		s.in.Close()
		s.in = nil
	}
	for _, o := range s.out {
		releaseArrays(o.cols)
	}
	s.out = nil
	s.levels = nil
	s.res.Free()
}
