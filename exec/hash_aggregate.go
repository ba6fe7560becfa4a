package exec

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec/expr"
)

// AggMode says which half of a two-phase aggregation a HashAggregate runs.
type AggMode int

const (
	// AggSingle aggregates raw rows to final values in one step.
	AggSingle AggMode = iota
	// AggPartial aggregates raw rows to mergeable states (PartialSchema).
	AggPartial
	// AggFinal merges PartialSchema rows to final values.
	AggFinal
)

func (m AggMode) String() string {
	switch m {
	case AggPartial:
		return "partial"
	case AggFinal:
		return "final"
	}
	return "single"
}

// AggFunc is one aggregate call. Fn is one of sum, avg, min, max, count,
// count_star, stddev_samp (alias stddev), var_samp, stddev_pop, var_pop.
// Arg is nil for count_star and ignored in AggFinal mode. Distinct is only
// valid in AggSingle mode. Type is the result type the planner decided.
type AggFunc struct {
	Fn       string
	Arg      expr.Expr
	Distinct bool
	Type     arrow.DataType
	Name     string
}

func (f AggFunc) argType() arrow.DataType {
	if f.Arg == nil {
		return arrow.PrimitiveTypes.Int64
	}
	return f.Arg.DataType()
}

func (f AggFunc) String() string {
	arg := "*"
	if f.Arg != nil {
		arg = f.Arg.String()
	}
	if f.Distinct {
		arg = "DISTINCT " + arg
	}
	return fmt.Sprintf("%s(%s)", f.Fn, arg)
}

// HashAggregate groups rows by GroupBy and computes Aggs per group. Output:
// group columns then one column per aggregate (AggPartial: the state
// columns of PartialSchema instead). In AggFinal mode the input is
// PartialSchema rows and GroupBy are its first columns.
type HashAggregate struct {
	Child      Node
	Mode       AggMode
	GroupBy    []expr.Expr
	GroupNames []string
	Aggs       []AggFunc
	// Seed, when set, is the key (one literal per GroupBy) of a group that
	// exists even when no row arrives: ROLLUP's grand total, which an
	// empty input still answers with. AggPartial tasks all seed it (the
	// final merge of an empty state changes nothing); AggSingle and
	// AggFinal seed it in task 0 only, so the planner sets it there only
	// when the aggregate runs as one task.
	Seed []*expr.Literal
}

// PartialSchema is what AggPartial emits: group columns, then each
// aggregate's state columns (sum: value; avg: sum, count; stddev/var:
// count, mean, m2; min/max: value; count: int64).
func (a *HashAggregate) PartialSchema() *arrow.Schema {
	fs := fieldsOf(a.GroupBy, a.GroupNames)
	for _, f := range a.Aggs {
		types, names, err := aggStateTypes(f.Fn, f.argType(), f.Type)
		if err != nil {
			// Unknown functions fail in Open; the schema keeps a placeholder.
			types, names = []arrow.DataType{f.Type}, []string{"state"}
		}
		for i, t := range types {
			fs = append(fs, arrow.Field{Name: f.Name + "$" + names[i], Type: t, Nullable: true})
		}
	}
	return arrow.NewSchema(fs, nil)
}

// Schema implements Node.
func (a *HashAggregate) Schema() *arrow.Schema {
	if a.Mode == AggPartial {
		return a.PartialSchema()
	}
	fs := fieldsOf(a.GroupBy, a.GroupNames)
	for _, f := range a.Aggs {
		fs = append(fs, arrow.Field{Name: f.Name, Type: f.Type, Nullable: true})
	}
	return arrow.NewSchema(fs, nil)
}

// Children implements Node.
func (a *HashAggregate) Children() []Node { return []Node{a.Child} }

// SplittableInputs implements SplitInputs: a partial aggregate's groups
// are merged by the final one, so any division of its rows is right; the
// other modes need every row of a group.
func (a *HashAggregate) SplittableInputs() []bool { return []bool{a.Mode == AggPartial} }

// String implements Node.
func (a *HashAggregate) String() string {
	return fmt.Sprintf("HashAggregate(%s, group by [%s], aggs [%s])", a.Mode, exprList(a.GroupBy), aggList(a.Aggs))
}

// aggList renders aggregates for EXPLAIN.
func aggList(fs []AggFunc) string {
	aggs := make([]string, len(fs))
	for i, f := range fs {
		aggs[i] = f.String()
	}
	return strings.Join(aggs, ", ")
}

func numStateCols(fn string) int {
	switch normAggFn(fn) {
	case "avg":
		return 2
	case "stddev_samp", "var_samp", "stddev_pop", "var_pop":
		return 3
	}
	return 1
}

// Open implements Node.
func (a *HashAggregate) Open(tc *TaskContext, inputs []Stream) (Stream, error) {
	if len(inputs) != 1 {
		return nil, fmt.Errorf("%w: HashAggregate wants 1 input, got %d", ErrInternal, len(inputs))
	}
	s := &hashAggStream{a: a, tc: tc, in: inputs[0], ec: exprContext(tc), schema: a.Schema()}
	types := make([]arrow.DataType, len(a.GroupBy))
	for i, g := range a.GroupBy {
		types[i] = g.DataType()
	}
	s.keyTypes = types
	s.groups = newGroupTable(types)
	col := len(a.GroupBy)
	in := a.Child.Schema()
	for _, f := range a.Aggs {
		if f.Distinct && a.Mode != AggSingle {
			return nil, fmt.Errorf("%w: DISTINCT aggregate %s in %s mode", ErrInternal, f, a.Mode)
		}
		t := f.argType()
		if a.Mode == AggFinal {
			k := numStateCols(f.Fn)
			if col+k > in.NumFields() {
				return nil, fmt.Errorf("%w: final aggregate input has %d columns, too few for its states", ErrInternal, in.NumFields())
			}
			idx := make([]int, k)
			for i := range idx {
				idx[i] = col + i
			}
			s.stateCols = append(s.stateCols, idx)
			t = in.Field(col).Type
			col += k
		} else if f.Arg == nil && normAggFn(f.Fn) != "count_star" {
			return nil, errs.New(errs.Internal, "aggregate %s needs an argument", f.Fn)
		}
		st, err := newAggStateOf(f, t)
		if err != nil {
			return nil, err
		}
		s.states = append(s.states, st)
		s.stateTypes = append(s.stateTypes, t)
	}
	s.distinct = s.newDistinct()
	s.conds, s.condMember = condAggs(a, s.states)
	s.shared = newSharedArgs(a)
	if a.Seed != nil && (a.Mode == AggPartial || tc.Task == 0) {
		if err := s.seed(); err != nil {
			return nil, err
		}
	}
	for _, st := range s.states {
		st.grow(s.groups.n)
	}
	s.res = tc.reservation("hash aggregate", true)
	s.inputRows = -1
	if len(tc.InputRows) == 1 {
		s.inputRows = tc.InputRows[0]
	}
	return s, nil
}

// seed adds the group of a.Seed with empty states.
func (s *hashAggStream) seed() error {
	if len(s.a.Seed) != len(s.a.GroupBy) {
		return fmt.Errorf("%w: aggregate seed has %d keys for %d group columns", ErrInternal, len(s.a.Seed), len(s.a.GroupBy))
	}
	one := array.NewRecordBatch(arrow.NewSchema(nil, nil), nil, 1)
	defer one.Release()
	keys := make([]arrow.Array, len(s.a.Seed))
	for i, l := range s.a.Seed {
		k, err := l.Eval(s.ec, one)
		if err != nil {
			releaseArrays(keys[:i])
			return err
		}
		keys[i] = k
	}
	var err error
	s.gids, err = s.groups.ids(keys, 1, s.gids)
	releaseArrays(keys)
	return err
}

type hashAggStream struct {
	a         *HashAggregate
	tc        *TaskContext
	in        Stream
	ec        *expr.Context
	schema    *arrow.Schema
	groups    *groupTable
	states    []aggState
	stateCols [][]int
	// distinct holds, for each DISTINCT aggregate, the (group id, value)
	// pairs seen so far; nil for the others.
	distinct []*groupTable
	// conds are the families of conditional aggregates computed in one
	// pass (agg_cond.go); condMember[i] marks their members.
	conds      []*condAgg
	condMember []bool
	// shared are the subexpressions the arguments have in common,
	// evaluated once a batch (agg_shared_args.go); nil when none.
	shared *sharedArgs
	res    *Reservation
	gids   []int32
	pids   []int32
	seen   []bool // firstSeen scratch: pair ids this batch met

	// Partial pass-through (hash_aggregate_pass.go): rows read, whether
	// the sample was judged, whether rows now pass through, and the
	// identity group ids 0..n-1 they use.
	rowsIn      int64
	passChecked bool
	passing     bool
	ident       []int32

	// Sizing (hash_aggregate_size.go): the rows of the input when the
	// runtime knows them (-1 if not), whether the first batch was
	// judged, and the groups the table and states were sized for.
	inputRows   int64
	sizeChecked bool
	sized       int

	// Spilling (hash_aggregate_spill.go): the types to make fresh
	// tables and states with, the current partition writers, the spilled
	// partitions waiting to be merged, and whether the input ended.
	keyTypes   []arrow.DataType
	stateTypes []arrow.DataType
	parts      *spillParts
	partSchema *arrow.Schema
	level      int
	pending    []aggPartition
	// Without GROUP BY, each DISTINCT aggregate's values spill into
	// partitions of their own (hash_aggregate_distinct_spill.go).
	valueParts   []*spillParts
	valuePending []valuePartition
	// A keyed partition whose DISTINCT pairs outgrow the share is
	// divided by pair instead of by key (hash_aggregate_value_split.go):
	// byValue is set while it is read, pairParts are its files of each
	// DISTINCT aggregate, pairPending the files still to fold in.
	byValue     bool
	pairParts   []*spillParts
	pairPending []pairPartition
	inputDone   bool
	spilled     bool

	built bool
	out   []arrow.Array
	outN  int
	pos   int
}

func (s *hashAggStream) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for {
		if s.out != nil && s.pos < s.outN {
			start, end := s.pos, min(s.pos+BatchSize, s.outN)
			cols := sliceArrays(s.out, start, end)
			s.pos = end
			return newBatch(s.schema, cols, end-start), nil
		}
		releaseArrays(s.out)
		s.out, s.outN, s.pos = nil, 0, 0
		if s.built {
			return nil, io.EOF
		}
		if err := s.step(ctx); err != nil {
			return nil, err
		}
	}
}

// step produces the next output: the whole result when nothing spilled;
// else a partial aggregate's early flush, or one spilled partition merged.
func (s *hashAggStream) step(ctx context.Context) error {
	if !s.inputDone {
		flushed, err := s.consume(ctx)
		if err != nil || flushed {
			return err
		}
		s.inputDone = true
		if s.passing {
			s.built = true // the table was handed out when passing began
			return nil
		}
		if !s.spilled {
			s.built = true
			return s.finish()
		}
		// What is left in memory joins the partitions on disk.
		if err := s.spillTable(); err != nil {
			return err
		}
		if len(s.keyTypes) == 0 {
			s.built = true
			return s.mergeGlobalDistinct(ctx)
		}
		if err := s.finishParts(); err != nil {
			return err
		}
	}
	if len(s.pending) == 0 {
		s.built = true
		return nil
	}
	return s.mergePartition(ctx)
}

// consume folds input in until it ends or, in partial mode, the table was
// flushed early to make room (flushed: its groups are in s.out).
func (s *hashAggStream) consume(ctx context.Context) (flushed bool, err error) {
	for {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		b, err := s.in.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return false, err
		}
		rows := b.NumRows()
		if s.passing {
			if rows == 0 {
				b.Release()
				continue
			}
			err = s.passBatch(b)
			b.Release()
			return err == nil, err
		}
		err = s.add(b)
		b.Release()
		if err == errAggOver {
			if s.a.Mode == AggPartial {
				// Partial groups are merged downstream: hand these out
				// now and start an empty table.
				s.tc.notePasses(1)
				if err := s.finish(); err != nil {
					return false, err
				}
				s.resetTable()
				return true, nil
			}
			err = s.spillTable()
		}
		if err != nil {
			return false, err
		}
		s.rowsIn += rows
		if s.checkPassThrough() {
			// Hand out the groups made so far; later rows pass through.
			if err := s.finish(); err != nil {
				return false, err
			}
			s.groups = newGroupTable(s.keyTypes)
			s.res.Resize(0)
			return true, nil
		}
	}
	s.in.Close()
	s.in = nil
	return false, nil
}

// add folds one input batch in: group ids for the whole batch first, then
// one typed pass per aggregate.
func (s *hashAggStream) add(b arrow.RecordBatch) error {
	n := int(b.NumRows())
	if n == 0 {
		return nil
	}
	var keys []arrow.Array
	var err error
	if s.a.Mode == AggFinal {
		keys = make([]arrow.Array, len(s.a.GroupBy))
		for i := range keys {
			keys[i] = b.Column(i)
			keys[i].Retain()
		}
	} else if keys, err = evalExprs(s.ec, s.a.GroupBy, b); err != nil {
		return err
	}
	s.gids, err = s.groups.ids(keys, n, s.gids)
	releaseArrays(keys)
	if err != nil {
		return err
	}
	if !s.sizeChecked {
		s.sizeChecked = true
		s.sizeFor(n)
	}
	for _, st := range s.states {
		st.grow(s.groups.n)
	}
	done := s.condMember
	for _, f := range s.conds {
		if !f.ready(s.states, b) {
			done = nil // the CASEs below compute every aggregate
			break
		}
	}
	if done != nil {
		for _, f := range s.conds {
			f.update(s.states, b, s.gids)
		}
	}
	args := b
	if s.a.Mode != AggFinal && s.shared != nil {
		if args, err = s.shared.extend(s.ec, b); err != nil {
			return err
		}
		defer args.Release()
	}
	for i, f := range s.a.Aggs {
		st := s.states[i]
		if done != nil && done[i] {
			continue
		}
		if s.a.Mode == AggFinal {
			cols := make([]arrow.Array, len(s.stateCols[i]))
			for k, c := range s.stateCols[i] {
				cols[k] = b.Column(c)
			}
			if err := st.merge(s.gids, cols); err != nil {
				return err
			}
			continue
		}
		if f.Arg == nil {
			if err := st.update(s.gids, nil); err != nil {
				return err
			}
			continue
		}
		arg, err := s.shared.arg(s.a, i).Eval(s.ec, args)
		if err != nil {
			return err
		}
		gids := s.gids
		if s.distinct[i] != nil {
			var dArg arrow.Array
			dArg, gids, err = s.firstSeen(i, arg, gids)
			arg.Release()
			if err != nil {
				return err
			}
			arg = dArg
		}
		err = st.update(gids, arg)
		arg.Release()
		if err != nil {
			return err
		}
	}
	return s.reserve()
}

// newDistinct makes an empty pair table for every DISTINCT aggregate:
// its keys are the group id and the argument, so each (group, value)
// pair gets one id, and its key columns give the pairs back when the
// aggregate spills (hash_aggregate_spill.go).
func (s *hashAggStream) newDistinct() []*groupTable {
	d := make([]*groupTable, len(s.a.Aggs))
	for i, f := range s.a.Aggs {
		if f.Distinct {
			d[i] = newGroupTable([]arrow.DataType{arrow.PrimitiveTypes.Int32, s.stateTypes[i]})
		}
	}
	return d
}

// firstSeen keeps the rows whose (group, value) pair was not seen before,
// which turns any aggregate into its DISTINCT form. NULLs are dropped.
func (s *hashAggStream) firstSeen(i int, arg arrow.Array, gids []int32) (arrow.Array, []int32, error) {
	pairs := s.distinct[i]
	ga := fixedArray(s.ec.Alloc, arrow.PrimitiveTypes.Int32, gids, nil)
	before := int32(pairs.n)
	var err error
	s.pids, err = pairs.ids([]arrow.Array{ga, arg}, len(gids), s.pids)
	ga.Release()
	if err != nil {
		return nil, nil, err
	}
	// A pair is new when its id is one this batch added; its first row
	// keeps it (GROUP_CONCAT keeps arrival order).
	s.seen = growSlice(s.seen[:0], pairs.n-int(before))
	clear(s.seen)
	bits, off := validity(arg)
	var sel, kept []int32
	for r, id := range s.pids {
		if id < before || s.seen[id-before] {
			continue
		}
		s.seen[id-before] = true
		if isValid(bits, off, r) {
			sel = append(sel, int32(r))
			kept = append(kept, gids[r])
		}
	}
	out, err := takeArrays(s.ec.Alloc, []arrow.Array{arg}, sel)
	if err != nil {
		return nil, nil, err
	}
	return out[0], kept, nil
}

// reserve keeps the budget reservation ahead of the table's estimated
// size, growing in steps so the shared counter is touched rarely. Past
// the aggregate's share it returns errAggOver: the caller flushes or
// spills the table.
func (s *hashAggStream) reserve() error {
	need := s.tableNeed(true)
	have := s.res.Size()
	if need <= have {
		return nil
	}
	err := s.res.Grow(max(need-have, need/4, 1<<20))
	if err == nil {
		return nil
	}
	if !s.res.Spillable() || !s.tc.canSpill(err) {
		return err
	}
	// The step did not fit the share; what the table needs may (a share
	// under 1 MiB refuses any step).
	if s.res.Grow(need-have) == nil {
		return nil
	}
	if len(s.keyTypes) == 0 && !s.globalDistinctSpills() {
		// No GROUP BY: one group, nothing to split but DISTINCT values.
		return errs.New(errs.Resources, "hash aggregate without GROUP BY: its one group's state (%d bytes, DISTINCT values or GROUP_CONCAT entries) outgrows the aggregate's share of the memory budget (%d bytes); raise it with --set execution.memory.query-budget=<bytes>", need, s.res.Share())
	}
	return errAggOver
}

// tableNeed estimates what the table holds: its groups and states, and
// with pairs the DISTINCT aggregates' (group, value) pairs.
func (s *hashAggStream) tableNeed(pairs bool) int64 {
	need := s.groups.bytes() + int64(max(s.groups.n, s.sized))*int64(24*len(s.states))
	for _, d := range s.distinct {
		if d != nil && pairs {
			need += d.bytes()
		}
	}
	for _, st := range s.states {
		if sz, ok := st.(sizedState); ok {
			need += sz.bytes()
		}
	}
	return need
}

func (s *hashAggStream) finish() error {
	alloc := s.ec.Alloc
	n := s.groups.n
	out, err := s.groups.arrays(alloc)
	if err != nil {
		return err
	}
	for _, st := range s.states {
		if s.a.Mode == AggPartial {
			cols, err := st.partial(alloc, n)
			if err != nil {
				releaseArrays(out)
				return err
			}
			out = append(out, cols...)
			continue
		}
		a, err := st.final(alloc, n)
		if err != nil {
			releaseArrays(out)
			return err
		}
		out = append(out, a)
	}
	if err := s.castToSchema(out); err != nil {
		releaseArrays(out)
		return err
	}
	s.out, s.outN, s.pos = out, n, 0
	s.states = nil
	s.distinct = nil
	return nil
}

// castToSchema casts, in place, output columns whose type the state does
// not produce natively (e.g. count as a narrower integer) so batches match
// the schema. On error the caller still owns out.
func (s *hashAggStream) castToSchema(out []arrow.Array) error {
	for i, a := range out {
		want := s.schema.Field(i).Type
		if !arrow.TypeEqual(a.DataType(), want) {
			c, err := castArray(s.ec.Alloc, a, want)
			if err != nil {
				return err
			}
			a.Release()
			out[i] = c
		}
	}
	return nil
}

func (s *hashAggStream) Close() {
	if s.in != nil {
		s.in.Close()
		s.in = nil
	}
	releaseArrays(s.out)
	s.out = nil
	s.pos = 0
	s.groups = &groupTable{}
	s.parts.abort()
	s.parts = nil
	for _, p := range s.pending {
		p.file.Remove()
	}
	s.pending = nil
	s.closeGlobalDistinct()
	s.closeValueSplit()
	s.res.Free()
}
