package exec

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fsql-dev/fsql/exec/expr"
)

// JoinType is the kind of a join.
type JoinType int

const (
	// InnerJoin emits every matching (probe, build) pair.
	InnerJoin JoinType = iota
	// LeftJoin preserves the probe side: unmatched probe rows get NULL
	// build columns.
	LeftJoin
	// RightJoin preserves the build side: unmatched build rows of this task
	// get NULL probe columns, emitted after the probe side is exhausted.
	RightJoin
	// FullJoin preserves both sides.
	FullJoin
	// SemiJoin emits each probe row that has a match, once (EXISTS, IN).
	SemiJoin
	// AntiJoin emits each probe row without a match (NOT EXISTS).
	AntiJoin
	// NullAwareAntiJoin is NOT IN: a NULL build key makes every probe row
	// unknown (no rows); a probe row with a NULL key is dropped unless the
	// build side is empty.
	NullAwareAntiJoin
	// MarkJoin emits every probe row plus a nullable boolean "mark": true
	// if it has a match, NULL if it has none but a NULL key took part (the
	// IN result under three-valued logic), false otherwise.
	MarkJoin
)

func (t JoinType) String() string {
	switch t {
	case InnerJoin:
		return "inner"
	case LeftJoin:
		return "left"
	case RightJoin:
		return "right"
	case FullJoin:
		return "full"
	case SemiJoin:
		return "semi"
	case AntiJoin:
		return "anti"
	case NullAwareAntiJoin:
		return "null-aware anti"
	case MarkJoin:
		return "mark"
	}
	return fmt.Sprintf("join(%d)", int(t))
}

// emitsPairs reports whether the output holds build columns.
func (t JoinType) emitsPairs() bool { return t <= FullJoin }

// joinSchema is probe columns then build columns for pair-emitting joins
// (the side that may be NULL-extended marked nullable), probe columns for
// semi and anti joins, and probe columns plus "mark" for a mark join.
func joinSchema(t JoinType, probe, build *arrow.Schema) *arrow.Schema {
	var fs []arrow.Field
	for _, f := range probe.Fields() {
		if t == RightJoin || t == FullJoin {
			f.Nullable = true
		}
		fs = append(fs, f)
	}
	switch {
	case t.emitsPairs():
		for _, f := range build.Fields() {
			if t == LeftJoin || t == FullJoin {
				f.Nullable = true
			}
			fs = append(fs, f)
		}
	case t == MarkJoin:
		fs = append(fs, arrow.Field{Name: "mark", Type: arrow.FixedWidthTypes.Boolean, Nullable: true})
	}
	return arrow.NewSchema(fs, nil)
}

// pairSchema is the schema of a joined row as Residual sees it.
func pairSchema(probe, build *arrow.Schema) *arrow.Schema {
	return arrow.NewSchema(append(append([]arrow.Field{}, probe.Fields()...), build.Fields()...), nil)
}

// HashJoin joins Probe rows to Build rows with equal keys. The build side
// is read completely into a hash table; the probe side streams batch by
// batch. NULL keys never match. Residual, when set, is evaluated over the
// joined row (probe columns then build columns); a key match failing it is
// no match. Output, when set, lists the columns of the joined row (probe
// columns then build columns) the join emits, in order: a pair-emitting
// join without a residual then gathers only the columns its parent reads
// (hash_join_output.go); nil emits every column.
type HashJoin struct {
	Type                 JoinType
	Build, Probe         Node
	BuildKeys, ProbeKeys []expr.Expr
	Residual             expr.Expr
	Output               []int
}

// Schema implements Node.
func (j *HashJoin) Schema() *arrow.Schema {
	return j.projectOutput(joinSchema(j.Type, j.Probe.Schema(), j.Build.Schema()))
}

// Children implements Node: build first, then probe.
func (j *HashJoin) Children() []Node { return []Node{j.Build, j.Probe} }

// String implements Node.
func (j *HashJoin) String() string {
	s := fmt.Sprintf("HashJoin(%s, probe [%s] = build [%s]", j.Type, exprList(j.ProbeKeys), exprList(j.BuildKeys))
	if j.Residual != nil {
		s += ", residual " + j.Residual.String()
	}
	return s + j.outputString() + ")"
}

// Open implements Node.
func (j *HashJoin) Open(tc *TaskContext, inputs []Stream) (Stream, error) {
	if len(inputs) != 2 {
		return nil, fmt.Errorf("%w: HashJoin wants 2 inputs, got %d", ErrInternal, len(inputs))
	}
	if len(j.BuildKeys) != len(j.ProbeKeys) || len(j.BuildKeys) == 0 {
		return nil, fmt.Errorf("%w: hash join needs equally many build and probe keys (got %d and %d)", ErrInternal, len(j.BuildKeys), len(j.ProbeKeys))
	}
	if j.Type > MarkJoin || j.Type < InnerJoin {
		return nil, fmt.Errorf("%w: join type %s", ErrNotImplemented, j.Type)
	}
	if err := j.checkOutput(); err != nil {
		return nil, err
	}
	intKey := len(j.BuildKeys) == 1 && intKeyType(j.BuildKeys[0].DataType()) && intKeyType(j.ProbeKeys[0].DataType())
	if !intKey {
		// Keys are compared by their byte encoding, so both sides must
		// have the same type; the planner casts them pairwise.
		for i := range j.BuildKeys {
			if bt, pt := j.BuildKeys[i].DataType(), j.ProbeKeys[i].DataType(); !sameKeyEncoding(bt, pt) {
				return nil, fmt.Errorf("%w: join key %d has type %s on the build side and %s on the probe side", ErrInternal, i+1, bt, pt)
			}
		}
	}
	s := newJoinStream(tc, j, inputs, "hash join build")
	s.intKey = intKey
	s.kg = j.spillKeyGroups(tc)
	return s, nil
}

func newJoinStream(tc *TaskContext, j *HashJoin, inputs []Stream, who string) *hashJoinStream {
	s := &hashJoinStream{
		j: j, tc: tc, ec: exprContext(tc), build: inputs[0], probe: inputs[1],
		schema: j.Schema(), pairs: pairSchema(j.Probe.Schema(), j.Build.Schema()),
		who: who, prow: 0, pcur: -1, facts: &joinFacts{},
	}
	// A nested loop join (cross) has no keys to partition by, so it cannot
	// spill: its reservation grows until the budget refuses.
	s.res = tc.reservation(who, len(j.BuildKeys) > 0)
	if tc.SharedBuild != nil && j.Type != RightJoin && j.Type != FullJoin {
		// Every task keeps its own unmatched-build flags for right and
		// full joins, so only the others share a table.
		s.sb = tc.SharedBuild
	}
	return s
}

// joinFacts are what the NULL rules of anti, null-aware anti and mark
// joins need to know about the whole build side, whichever part of it a
// stream joins: how many rows it has and whether a key is NULL. A spilled
// join's partition streams share their parent's.
type joinFacts struct {
	rows int64
	null bool
}

type hashJoinStream struct {
	j             *HashJoin
	tc            *TaskContext
	ec            *expr.Context
	build, probe  Stream
	schema, pairs *arrow.Schema
	who           string // budget name of the build side
	cross         bool   // every build row is a candidate (nested loop join)
	// res holds the build rows and the table. A partition stream uses its
	// parent's (shared): only one stream of a join holds memory at a time.
	res    *Reservation
	shared bool
	facts  *joinFacts
	// Spilling (hash_join_spill.go): level is 0 for the join itself and
	// n for a partition split off n times; sp is set once the build side
	// outgrew the share; sub is the spilled partition being joined; chunk
	// is set when this stream reads its build side in pieces; kg is the
	// task's key-group range the join partitions by first (nil: by the
	// seeded hash).
	level        int
	kg           *KeyGroups
	sp           *joinSpill
	sub          *hashJoinStream
	chunk        *joinChunk
	built        bool
	batches      []arrow.RecordBatch // build rows read, before indexing
	buildCols    []arrow.Array
	nb           int
	intKey       bool
	ihead        *intTable
	table        *joinTable // any key but one integer
	probeScratch joinProbe
	next         []int32
	// unique says no two build rows share a key (every chain is one
	// row): a left join then emits each probe row once, in probe order
	// (emitLeftUnique).
	unique       bool
	buildNullKey bool
	buildMatched []bool
	// sb, when set, is the stage's shared build of this join
	// (shared_build.go): building says this stream builds it for every
	// task, borrowed that the indexed side above is sb's (read-only).
	sb             *SharedBuild
	building       bool
	borrowed       bool
	ibuf           []int64
	pb             arrow.RecordBatch
	heads          []int32
	pnull          []bool
	pmatched       []bool
	prow           int
	pcur           int32
	pi, bi         []int32
	pending        []arrow.RecordBatch
	probeDone      bool
	tailDone       bool
	tailPos        int
	finishedOutput bool
}

func (s *hashJoinStream) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if !s.built {
		if err := s.buildSide(ctx); err != nil {
			return nil, err
		}
		s.built = true
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if len(s.pending) > 0 {
			b := s.pending[0]
			s.pending = s.pending[1:]
			return b, nil
		}
		if s.finishedOutput {
			return nil, io.EOF
		}
		if s.sub != nil {
			b, err := s.sub.Next(ctx)
			if err == io.EOF {
				s.sub.Close()
				s.sub = nil
				if err := s.nextPartition(ctx); err != nil {
					return nil, err
				}
				continue
			}
			return b, err
		}
		if s.pb == nil {
			if s.probeDone {
				if err := s.emitUnmatchedBuild(ctx); err != nil {
					return nil, err
				}
				continue
			}
			b, err := s.probe.Next(ctx)
			if err == io.EOF {
				s.probeDone = true
				s.probe.Close()
				s.probe = nil
				continue
			}
			if err != nil {
				return nil, err
			}
			if s.sp != nil {
				// Rows of spilled partitions go to disk; the rest is
				// joined now.
				if b, err = s.routeProbe(b); err != nil || b == nil {
					if err != nil {
						return nil, err
					}
					continue
				}
			}
			if err := s.startProbe(b); err != nil {
				return nil, err
			}
			continue
		}
		if err := s.step(); err != nil {
			return nil, err
		}
	}
}

// buildCost is what a buffered build batch is charged: its bytes and the
// hash table's share of its rows.
func buildCost(b arrow.RecordBatch) int64 { return recordBytes(b) + tableBytesPerRow*b.NumRows() }

// BuildCost is what a hash join's table of rows build rows of bytes
// bytes reserves, as buildCost charges it batch by batch: the runtime
// weighs a build side it has not opened yet by it (the co-partition
// switch).
func BuildCost(bytes, rows int64) int64 { return bytes + tableBytesPerRow*rows }

// tableBytesPerRow is what the hash table costs per build row (chain,
// head slot, match flag).
const tableBytesPerRow = 48

// buildSide reads the whole build input and indexes it by key. Past the
// reservation's share it partitions the build side and spills
// partitions (hash_join_spill.go); what is left in memory is indexed.
func (s *hashJoinStream) buildSide(ctx context.Context) error {
	if s.chunk != nil {
		return s.buildChunk(ctx)
	}
	if s.sb != nil {
		side, build, err := s.sb.acquire(ctx)
		if err != nil {
			return err
		}
		if side != nil {
			s.borrow(side)
			return nil
		}
		if build {
			s.building = true
			defer func() {
				if s.building {
					// The build failed or was cancelled: the next
					// attempt that needs the table builds it.
					s.building = false
					s.sb.giveUp()
				}
			}()
		}
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		b, err := s.build.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if b.NumRows() == 0 {
			b.Release()
			continue
		}
		if s.level == 0 {
			s.facts.rows += b.NumRows()
		}
		if s.sp == nil {
			err := s.res.Grow(buildCost(b))
			if err == nil {
				s.batches = append(s.batches, b)
				continue
			}
			if s.cross || !s.tc.canSpill(err) {
				b.Release()
				return err
			}
			if err := s.startSpill(ctx); err != nil {
				b.Release()
				return err
			}
		}
		err = s.routeBuild(ctx, b)
		b.Release()
		if err != nil {
			return err
		}
		if s.j.Type == NullAwareAntiJoin && s.facts.null {
			// NOT IN over a set holding NULL is never true: the rest of
			// the build side does not matter.
			break
		}
	}
	s.build.Close()
	s.build = nil
	if s.sp != nil {
		if err := s.finishSpillBuild(); err != nil {
			return err
		}
	} else if err := s.index(); err != nil {
		return err
	}
	if s.j.Type == NullAwareAntiJoin && s.facts.null {
		// NOT IN over a set holding NULL is never true.
		s.finishedOutput = true
	}
	s.noteReserved()
	if s.building {
		s.building = false
		s.share()
	}
	s.res.Seal()
	return nil
}

// share hands the table this stream built, and the partitions it
// spilled, to the stage's other tasks; the stream's reservation hands
// its bytes over to the stage.
func (s *hashJoinStream) share() {
	if s.sp != nil && s.sp.kg != nil {
		// Partitioned by this task's key groups: not another task's.
		s.sb.refuse()
		return
	}
	side := &builtSide{
		cols: s.buildCols, nb: s.nb, next: s.next, ihead: s.ihead, table: s.table,
		unique: s.unique, nullKey: s.buildNullKey, rows: s.facts.rows, spilled: s.spilledSide(),
	}
	if s.sb.publish(side, s.res) {
		s.borrowed = true
		if s.sp != nil {
			s.sp.shared = true
		}
		if s.tc.Op != nil {
			s.tc.Op.SharedBuilt.Add(1)
		}
	}
}

// borrow takes the stage's shared build side in place of reading the
// build input, which it closes unread (every task reads it whole).
func (s *hashJoinStream) borrow(side *builtSide) {
	s.borrowed = true
	if s.tc.Op != nil {
		s.tc.Op.SharedBorrowed.Add(1)
	}
	s.build.Close()
	s.build = nil
	s.buildCols, s.nb, s.next, s.ihead, s.table = side.cols, side.nb, side.next, side.ihead, side.table
	s.unique = side.unique
	s.buildNullKey = side.nullKey
	s.facts.rows, s.facts.null = side.rows, side.nullKey
	if side.spilled != nil {
		s.borrowSpilled(side.spilled)
	}
	switch {
	case s.nb == 0 && s.sp == nil && (s.j.Type == InnerJoin || s.j.Type == SemiJoin):
		s.finishedOutput = true
	case s.j.Type == NullAwareAntiJoin && s.facts.null:
		s.finishedOutput = true
	}
}

// unborrow lets go of the shared build side.
func (s *hashJoinStream) unborrow() {
	s.borrowed = false
	s.buildCols, s.nb, s.next, s.ihead, s.table = nil, 0, nil, nil, nil
	s.unique = false
	s.sb.release()
}

// noteReserved records what the reservation holds for EXPLAIN ANALYZE;
// it is called where the reservation stops growing (the table is built).
func (s *hashJoinStream) noteReserved() {
	if s.tc.Op != nil {
		s.tc.Op.NoteReserved(s.res.Size())
	}
}

// index concatenates the buffered build batches and builds the hash
// table over them.
func (s *hashJoinStream) index() error {
	s.unique = false
	batches := s.batches
	s.batches = nil
	defer func() { releaseBatches(batches) }()
	cols, err := concatColumns(s.ec.Alloc, s.j.Build.Schema(), batches)
	if err != nil {
		return err
	}
	s.buildCols = cols
	s.nb = 0
	for _, b := range batches {
		s.nb += int(b.NumRows())
	}
	releaseBatches(batches)
	batches = nil
	if s.nb == 0 {
		if s.sp == nil && s.chunk == nil {
			switch s.j.Type {
			case InnerJoin, SemiJoin, RightJoin:
				// Nothing can match and nothing of the probe side is kept.
				s.finishedOutput = true
			}
		}
		return nil
	}
	if s.cross {
		// One chain through all build rows: every pair is a candidate.
		s.next = make([]int32, s.nb)
		for i := range s.next {
			s.next[i] = int32(i + 1)
		}
		s.next[s.nb-1] = -1
		return nil
	}
	// Key columns over the concatenated build rows.
	bb := array.NewRecordBatch(s.j.Build.Schema(), s.buildCols, int64(s.nb))
	rowBytes := recordBytes(bb)
	keys, err := evalExprs(s.ec, s.j.BuildKeys, bb)
	bb.Release()
	if err != nil {
		return err
	}
	defer releaseArrays(keys)
	defer func() { s.chargeIndex(rowBytes, keys) }()
	s.next = make([]int32, s.nb)
	if s.j.Type == RightJoin || s.j.Type == FullJoin {
		s.buildMatched = make([]bool, s.nb)
	}
	defer func() { s.unique = uniqueChains(s.next) }()
	defer func() { s.facts.null = s.facts.null || s.buildNullKey }()
	if s.intKey {
		s.ihead = newIntTable(s.nb)
		vals := intKeys(keys[0], nil)
		bits, off := validity(keys[0])
		for hi := s.nb; hi > 0; {
			lo := max(hi-touchRun, 0)
			s.probeScratch.sink = uint64(s.ihead.touch(vals[lo:hi]))
			for i := hi - 1; i >= lo; i-- {
				if !isValid(bits, off, i) {
					s.buildNullKey = true
					continue
				}
				slot := s.ihead.upsert(vals[i])
				s.next[i] = s.ihead.value(slot)
				s.ihead.set(slot, int32(i))
			}
			hi = lo
		}
		return nil
	}
	t, err := newJoinTable(keys, s.nb, nil, s.next)
	if err != nil {
		return err
	}
	s.table = t
	s.buildNullKey = t.nullKey
	return nil
}

// chargeIndex sets the reservation to what the indexed build side holds
// (its rows, the key index, the chains and match flags, key columns
// computed apart from the rows) in place of the per-row estimate the
// buffered batches were charged. Past the share it keeps the estimate:
// the rows are in memory already, and the table is sealed next.
func (s *hashJoinStream) chargeIndex(rowBytes int64, keys []arrow.Array) {
	n := rowBytes + int64(cap(s.next))*4 + int64(cap(s.buildMatched))
	if s.ihead != nil {
		n += s.ihead.bytes()
	}
	if s.table != nil {
		n += s.table.bytes()
	}
	for _, k := range keys {
		if !slices.Contains(s.buildCols, k) {
			n += ArrayBytes(k)
		}
	}
	_ = s.res.Resize(n)
}

// releaseTable drops the indexed build rows and gives their memory back.
func (s *hashJoinStream) releaseTable() {
	releaseArrays(s.buildCols)
	s.buildCols = nil
	s.nb = 0
	s.dropTable()
	s.next, s.buildMatched = nil, nil
	s.unique = false
	s.buildNullKey = false
	s.res.Resize(0)
}

// dropTable lets go of the key index.
func (s *hashJoinStream) dropTable() {
	s.ihead = nil
	if s.table != nil {
		s.table.release()
		s.table = nil
	}
}

// startProbe looks up the chain head of every row of a new probe batch.
func (s *hashJoinStream) startProbe(b arrow.RecordBatch) error {
	n := int(b.NumRows())
	if n == 0 || (s.j.Type == NullAwareAntiJoin && s.facts.null) {
		// NOT IN over a set holding NULL is never true.
		b.Release()
		return nil
	}
	s.pb = b
	s.prow, s.pcur = 0, -1
	s.heads = growSlice(s.heads[:0], n)
	s.pnull = growSlice(s.pnull[:0], n)
	s.pmatched = growSlice(s.pmatched[:0], n)
	clear(s.pmatched)
	if s.nb == 0 {
		for i := range s.heads {
			s.heads[i] = -1
		}
		if s.facts.rows == 0 {
			// Against an empty build side NULL probe keys do not matter:
			// x IN () is false and x NOT IN () true even for a NULL x.
			clear(s.pnull)
			return nil
		}
		// Nothing of the build side is here (it spilled), but which
		// probe keys are NULL still decides NOT IN and mark results.
		return s.probeNulls(b)
	}
	if s.cross {
		clear(s.heads)
		clear(s.pnull)
		return nil
	}
	keys, err := evalExprs(s.ec, s.j.ProbeKeys, b)
	if err != nil {
		return err
	}
	defer releaseArrays(keys)
	if s.intKey {
		s.ibuf = intKeys(keys[0], s.ibuf)
		bits, off := validity(keys[0])
		for lo := 0; lo < n; lo += touchRun {
			hi := min(lo+touchRun, n)
			s.probeScratch.sink = uint64(s.ihead.touch(s.ibuf[lo:hi]))
			for i := lo; i < hi; i++ {
				if !isValid(bits, off, i) {
					s.heads[i], s.pnull[i] = -1, true
					continue
				}
				s.pnull[i] = false
				s.heads[i] = s.ihead.get(s.ibuf[i])
			}
		}
		return nil
	}
	return s.table.lookup(&s.probeScratch, keys, n, s.heads, s.pnull)
}

// probeNulls marks the probe rows of b whose key is NULL.
func (s *hashJoinStream) probeNulls(b arrow.RecordBatch) error {
	keys, err := evalExprs(s.ec, s.j.ProbeKeys, b)
	if err != nil {
		return err
	}
	defer releaseArrays(keys)
	if s.intKey {
		bits, off := validity(keys[0])
		for i := range s.pnull {
			s.pnull[i] = !isValid(bits, off, i)
		}
		return nil
	}
	keyNulls(keys, nil, len(s.pnull), s.pnull)
	return nil
}

// step produces up to one batch worth of candidate pairs from the current
// probe batch, and the per-row output once the batch is done.
func (s *hashJoinStream) step() error {
	n := int(s.pb.NumRows())
	t := s.j.Type
	if !t.emitsPairs() && s.j.Residual == nil {
		// Existence is all semi, anti and mark joins need.
		for i := 0; i < n; i++ {
			s.pmatched[i] = s.heads[i] >= 0
		}
		s.prow = n
		return s.finishProbe()
	}
	if s.j.Residual == nil && s.unique && s.chunk == nil && s.prow == 0 && s.pcur < 0 &&
		(t == LeftJoin || t == InnerJoin && allMatched(s.heads[:n])) {
		// An inner join whose every probe row finds its one build row
		// emits what a left join would: the probe batch passed on (q78's
		// and q97's date_dim joins, which the dynamic filter leaves
		// nothing to drop).
		return s.emitLeftUnique()
	}
	s.pi, s.bi = s.pi[:0], s.bi[:0]
	for s.prow < n && len(s.pi) < BatchSize {
		if s.pcur < 0 {
			s.pcur = s.heads[s.prow]
			if s.pcur < 0 {
				s.prow++
				continue
			}
		}
		for s.pcur >= 0 && len(s.pi) < BatchSize {
			s.pi = append(s.pi, int32(s.prow))
			s.bi = append(s.bi, s.pcur)
			s.pcur = s.next[s.pcur]
		}
		if s.pcur < 0 {
			s.prow++
		}
	}
	if len(s.pi) > 0 {
		if err := s.emitPairs(); err != nil {
			return err
		}
	}
	if s.prow >= n {
		return s.finishProbe()
	}
	return nil
}

// gather builds joined rows: probe row pi[k] (NULL when -1 or no probe
// batch) next to build row bi[k] (NULL when -1).
func (s *hashJoinStream) gather(pb arrow.RecordBatch, pi, bi []int32, schema *arrow.Schema) (arrow.RecordBatch, error) {
	if s.j.Output != nil {
		return s.gatherOutput(pb, pi, bi)
	}
	alloc := s.ec.Alloc
	var cols []arrow.Array
	if pb != nil {
		pc, err := takeArrays(alloc, pb.Columns(), pi)
		if err != nil {
			return nil, err
		}
		cols = pc
	} else {
		for _, f := range s.j.Probe.Schema().Fields() {
			cols = append(cols, array.MakeArrayOfNull(alloc, f.Type, len(bi)))
		}
	}
	bc, err := takeArrays(alloc, s.buildCols, bi)
	if err != nil {
		releaseArrays(cols)
		return nil, err
	}
	return newBatch(schema, append(cols, bc...), len(bi)), nil
}

func (s *hashJoinStream) emitPairs() error {
	t := s.j.Type
	schema := s.pairs
	if t.emitsPairs() {
		schema = s.schema
	}
	joined, err := s.gather(s.pb, s.pi, s.bi, schema)
	if err != nil {
		return err
	}
	if s.j.Residual == nil {
		for k, p := range s.pi {
			s.pmatched[p] = true
			if s.buildMatched != nil {
				s.buildMatched[s.bi[k]] = true
			}
		}
		s.pending = append(s.pending, joined)
		return nil
	}
	defer joined.Release()
	m, err := s.j.Residual.Eval(s.ec, joined)
	if err != nil {
		return err
	}
	defer m.Release()
	mask, ok := m.(*array.Boolean)
	if !ok {
		return fmt.Errorf("%w: join condition %s returned %s", ErrInternal, s.j.Residual, m.DataType())
	}
	bits, off := validity(mask)
	for k, p := range s.pi {
		if isValid(bits, off, k) && mask.Value(k) {
			s.pmatched[p] = true
			if s.buildMatched != nil {
				s.buildMatched[s.bi[k]] = true
			}
		}
	}
	if !t.emitsPairs() {
		return nil
	}
	out, err := filterByMask(s.ec, joined, mask)
	if err != nil || out == nil {
		return err
	}
	s.pending = append(s.pending, out)
	return nil
}

// finishProbe emits what depends on all matches of the probe batch
// (unmatched rows, semi/anti/mark output) and releases it.
func (s *hashJoinStream) finishProbe() error {
	pb := s.pb
	s.pb = nil
	defer pb.Release()
	n := int(pb.NumRows())
	if s.chunk != nil && !s.chunk.fold(s.j.Type, s.pmatched[:n]) {
		// A chunk before the last: the probe rows' fate is not known yet.
		return nil
	}
	var keep []int32
	switch s.j.Type {
	case LeftJoin, FullJoin:
		for i := 0; i < n; i++ {
			if !s.pmatched[i] {
				keep = append(keep, int32(i))
			}
		}
		if len(keep) == 0 {
			return nil
		}
		nulls := make([]int32, len(keep))
		for i := range nulls {
			nulls[i] = -1
		}
		for start := 0; start < len(keep); start += BatchSize {
			end := min(start+BatchSize, len(keep))
			b, err := s.gather(pb, keep[start:end], nulls[start:end], s.schema)
			if err != nil {
				return err
			}
			s.pending = append(s.pending, b)
		}
		return nil
	case SemiJoin:
		for i := 0; i < n; i++ {
			if s.pmatched[i] {
				keep = append(keep, int32(i))
			}
		}
	case AntiJoin:
		for i := 0; i < n; i++ {
			if !s.pmatched[i] {
				keep = append(keep, int32(i))
			}
		}
	case NullAwareAntiJoin:
		for i := 0; i < n; i++ {
			if !s.pmatched[i] && (!s.pnull[i] || s.facts.rows == 0) {
				keep = append(keep, int32(i))
			}
		}
	case MarkJoin:
		vals := make([]bool, n)
		valid := make([]bool, n)
		for i := 0; i < n; i++ {
			switch {
			case s.pmatched[i]:
				vals[i], valid[i] = true, true
			case s.facts.rows > 0 && (s.pnull[i] || s.facts.null):
				// x IN (set with NULL) or NULL IN (non-empty set): unknown.
			default:
				valid[i] = true
			}
		}
		mark := boolArray(s.ec.Alloc, vals, valid)
		cols := append(append([]arrow.Array{}, pb.Columns()...), mark)
		for _, c := range pb.Columns() {
			c.Retain()
		}
		s.pending = append(s.pending, newBatch(s.schema, cols, n))
		return nil
	default:
		return nil
	}
	if len(keep) == n {
		s.pending = append(s.pending, array.NewRecordBatch(s.schema, pb.Columns(), int64(n)))
		return nil
	}
	if len(keep) == 0 {
		return nil
	}
	cols, err := takeArrays(s.ec.Alloc, pb.Columns(), keep)
	if err != nil {
		return err
	}
	s.pending = append(s.pending, newBatch(s.schema, cols, len(keep)))
	return nil
}

// emitUnmatchedBuild emits, for right and full joins, the build rows no
// probe row matched, one batch per call.
func (s *hashJoinStream) emitUnmatchedBuild(ctx context.Context) error {
	if s.buildMatched == nil || s.tailDone {
		return s.endPass(ctx)
	}
	var bi []int32
	for s.tailPos < s.nb && len(bi) < BatchSize {
		if !s.buildMatched[s.tailPos] {
			bi = append(bi, int32(s.tailPos))
		}
		s.tailPos++
	}
	if s.tailPos >= s.nb {
		s.tailDone = true
	}
	if len(bi) == 0 {
		return nil
	}
	b, err := s.gather(nil, nil, bi, s.schema)
	if err != nil {
		return err
	}
	s.pending = append(s.pending, b)
	return nil
}

// filterByMask keeps the rows of b where mask is TRUE (nil when none).
func filterByMask(ec *expr.Context, b arrow.RecordBatch, mask *array.Boolean) (arrow.RecordBatch, error) {
	return filterBatch(ec, maskExpr{mask}, b)
}

// maskExpr hands out a precomputed boolean column as an expression.
type maskExpr struct{ m *array.Boolean }

func (m maskExpr) DataType() arrow.DataType { return arrow.FixedWidthTypes.Boolean }
func (m maskExpr) Eval(*expr.Context, arrow.RecordBatch) (arrow.Array, error) {
	m.m.Retain()
	return m.m, nil
}
func (m maskExpr) Children() []expr.Expr { return nil }
func (m maskExpr) String() string        { return "mask" }

func (s *hashJoinStream) Close() {
	if s.build != nil {
		s.build.Close()
		s.build = nil
	}
	if s.probe != nil {
		s.probe.Close()
		s.probe = nil
	}
	if s.pb != nil {
		s.pb.Release()
		s.pb = nil
	}
	releaseBatches(s.pending)
	s.pending = nil
	releaseBatches(s.batches)
	s.batches = nil
	if s.sub != nil {
		s.sub.Close()
		s.sub = nil
	}
	s.closeSpill()
	if s.building {
		s.building = false
		s.sb.giveUp()
	}
	if s.borrowed {
		s.unborrow()
	}
	releaseArrays(s.buildCols)
	s.buildCols = nil
	s.dropTable()
	s.next = nil
	if s.shared {
		s.res.Resize(0)
	} else {
		s.res.Free()
	}
	s.finishedOutput = true
	s.built = true
}

// sameKeyEncoding reports whether values of a and b that are equal in SQL
// get equal key encodings: same type, decimals of the same scale (the
// precision does not change the stored integer), or two string types.
func sameKeyEncoding(a, b arrow.DataType) bool {
	if arrow.TypeEqual(a, b) {
		return true
	}
	da, ok1 := a.(*arrow.Decimal128Type)
	db, ok2 := b.(*arrow.Decimal128Type)
	if ok1 && ok2 {
		return da.Scale == db.Scale
	}
	return isStringLike(a) && isStringLike(b)
}

func isStringLike(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW, arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW:
		return true
	}
	return false
}
