package exec

import (
	"context"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/zeebo/xxh3"

	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/shuffle/keygroup"
	"github.com/fsql-dev/fsql/spill"
)

// A hash join whose build side outgrows its reservation's share spills
// (a hybrid hash join, as in Flink and DuckDB):
//
//  1. Partition. When both inputs were shuffled by the join's keys and
//     the task reads several whole key groups of them (KeyGroups), the
//     join itself cuts its rows into up to joinFanOut partitions of
//     whole, contiguous key groups: by the shuffle's own hash and
//     assignment, so the cut follows the exchange's. Otherwise (one key
//     group, a broadcast or forward input, a key group split for skew),
//     and in every partition split again, the rows are cut into
//     joinFanOut partitions by a hash of the key with a seed of the
//     stream's level, independent of the key groups and of the level
//     above. The largest partitions are written to disk until what stays
//     fits half the share; while the rest of the build side arrives,
//     rows of a spilled partition go straight to its file and, when the
//     reservation refuses, the largest partition still in memory is
//     written out.
//  2. Probe. The partitions left in memory are indexed as one table. A
//     probe row of a spilled partition is written to that partition's
//     probe file; every other row, and every row with a NULL key (which
//     matches nothing anywhere), is joined at once.
//  3. Spilled partitions, one by one. Each is joined by a stream of its
//     own over its two files (level + 1), which spills again, with its
//     own seed, if its build side still does not fit.
//  4. Chunks. A partition holding most of its parent's rows under the
//     seeded hash did not split (one hot key, or a few; a key-group
//     partition holding most rows is one hot key group, which the hash
//     still splits): splitting it again would not help,
//     so its build side is read in chunks that fit, and its probe file
//     is read once per chunk. The probe rows' matches are remembered
//     across chunks (one bit per probe row), so a left, semi, anti or
//     mark result is decided only in the last chunk's pass; pairs are
//     emitted as found, and a right or full join's unmatched build rows
//     after each chunk's pass.
//
// The NULL rules of anti, null-aware anti and mark joins depend on the
// whole build side (is it empty, has it a NULL key); every stream of a
// join reads them from the shared joinFacts, never from its partition.

const (
	joinFanBits  = 4
	joinFanOut   = 1 << joinFanBits
	maxJoinLevel = 4 // a partition this deep is joined in chunks
)

// joinSpill is a stream's partitioning once it spilled.
type joinSpill struct {
	seed uint64
	// kg, when set, partitions this level by key group into nkg
	// partitions of whole key groups instead of by the seeded hash.
	kg    *KeyGroups
	nkg   int
	parts [joinFanOut]joinPart
	// build and probe write the spilled partitions' rows, each side into
	// one file (spill.PartWriter); nil until a row goes to disk, and
	// once finished.
	build, probe *spillParts
	rows         int64 // build rows partitioned at this level
	next         int   // the next partition nextPartition looks at
	// shared says the build files are a shared build's
	// (shared_build_spill.go): read here, removed by their owner.
	shared bool
	// per-batch scratch
	ids    []uint8
	nulls  []bool
	idx    [joinFanOut][]int32
	keep   []int32
	enc    keyEncoder
	ibuf   []int64
	hashes []uint32
	hbuf   []uint32
}

// joinPart is one partition: in memory (batches, charged bytes) or on
// disk (its records of the level's build file, and of its probe file for
// the probe rows of its keys).
type joinPart struct {
	id      int
	batches []arrow.RecordBatch
	bytes   int64
	rows    int64
	onDisk  bool
	bf, pf  *spill.File
}

// joinChunk is the state of a stream that reads its build side in
// chunks (step 4).
type joinChunk struct {
	probeFile *spill.File // nil: no probe rows
	last      bool        // this chunk ends the build side
	held      arrow.RecordBatch
	seen      []uint64 // probe rows (by position in the file) matched so far
	pos       int      // position of the current probe batch's first row
	chunks    int
}

// joinSeed is the partitioning seed of a level.
func joinSeed(level int) uint64 {
	return mix64(0x9e3779b97f4a7c15*uint64(level+1) ^ 0x2545f4914f6cdd1d)
}

// mix64 is murmur3's 64-bit finalizer.
func mix64(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// spillKeyGroups is the key-group range the join partitions by first
// when it spills: the task's, when it holds several key groups and both
// inputs were shuffled by the join's own keys (build, then probe, as
// Children lists them); nil otherwise.
func (j *HashJoin) spillKeyGroups(tc *TaskContext) *KeyGroups {
	kg := tc.KeyGroups
	if kg == nil || kg.Start < 0 || kg.End <= kg.Start || kg.End >= kg.Count ||
		!kg.hashedBy(0, j.BuildKeys) || !kg.hashedBy(1, j.ProbeKeys) {
		return nil
	}
	return kg
}

// partitionIDs evaluates keys over b and sets each row's partition and
// whether its key is NULL. By key group, it computes the shuffle's key
// group; by the seeded hash, it hashes exactly what the table compares
// (the widened integer, or the key's byte encoding). Either way rows that
// can match meet in the same partition: the shuffle already relies on
// equal keys of the two sides hashing alike.
func (s *hashJoinStream) partitionIDs(keyExprs []expr.Expr, b arrow.RecordBatch) error {
	sp := s.sp
	n := int(b.NumRows())
	keys, err := evalExprs(s.ec, keyExprs, b)
	if err != nil {
		return err
	}
	defer releaseArrays(keys)
	sp.ids = growSlice(sp.ids[:0], n)[:n]
	sp.nulls = growSlice(sp.nulls[:0], n)[:n]
	if sp.kg != nil {
		sp.keyGroupIDs(keys, n)
		return nil
	}
	if s.intKey {
		sp.ibuf = intKeys(keys[0], sp.ibuf)
		bits, off := validity(keys[0])
		for i, v := range sp.ibuf {
			sp.nulls[i] = !isValid(bits, off, i)
			sp.ids[i] = uint8(mix64(uint64(v)^sp.seed) >> (64 - joinFanBits))
		}
		return nil
	}
	if err := sp.enc.encode(keys, n); err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		sp.nulls[i] = sp.enc.hasNull[i]
		sp.ids[i] = uint8(xxh3.HashSeed(sp.enc.key(i), sp.seed) >> (64 - joinFanBits))
	}
	return nil
}

// keyGroupIDs sets each row's partition by key group: the range's key
// groups are cut into nkg contiguous runs, so a partition is a set of
// whole key groups. A row outside the range (which the runtime does not
// hand the task) would still get a partition by the same rule on both
// sides, so the join stays correct whatever it is given.
func (sp *joinSpill) keyGroupIDs(keys []arrow.Array, n int) {
	sp.hashes = growSlice(sp.hashes[:0], n)[:n]
	sp.hbuf = growSlice(sp.hbuf[:0], n)[:n]
	hashKeyColumns(keys, sp.hashes, sp.hbuf)
	kg := sp.kg
	span := kg.span()
	for i, h := range sp.hashes {
		g := keygroup.ForHash(h, kg.Count) - kg.Start
		if g < 0 || g >= span {
			g = (g%span + span) % span
		}
		sp.ids[i] = uint8(g * sp.nkg / span)
	}
	clear(sp.nulls)
	for _, k := range keys {
		switch {
		case k.DataType().ID() == arrow.NULL:
			for i := range sp.nulls {
				sp.nulls[i] = true
			}
		case k.NullN() > 0:
			bits, off := validity(k)
			for i := range sp.nulls {
				if !isValid(bits, off, i) {
					sp.nulls[i] = true
				}
			}
		}
	}
}

// takeRows returns the rows idx (ascending) of b as a new batch.
func (s *hashJoinStream) takeRows(b arrow.RecordBatch, idx []int32) (arrow.RecordBatch, error) {
	if len(idx) == int(b.NumRows()) {
		b.Retain()
		return b, nil
	}
	cols, err := takeArrays(s.ec.Alloc, b.Columns(), idx)
	if err != nil {
		return nil, err
	}
	return newBatch(b.Schema(), cols, len(idx)), nil
}

// startSpill turns the buffered build batches into partitions: the
// largest are marked for disk until the rest fits half the share, then
// every buffered batch is routed.
func (s *hashJoinStream) startSpill(ctx context.Context) error {
	s.sp = &joinSpill{seed: joinSeed(s.level)}
	sp := s.sp
	for id := range sp.parts {
		sp.parts[id].id = id
	}
	if s.level == 0 {
		if s.kg != nil {
			sp.kg, sp.nkg = s.kg, min(s.kg.span(), joinFanOut)
		}
		if op := s.tc.Op; op != nil && sp.kg != nil {
			op.Spill.KeyGroupTasks.Add(1)
		} else if op != nil {
			op.Spill.HashTasks.Add(1)
		}
	}
	batches := s.batches
	s.batches = nil
	defer func() { releaseBatches(batches) }()
	outer := s.j.Type == RightJoin || s.j.Type == FullJoin
	var size [joinFanOut]float64
	var total float64
	for _, b := range batches {
		if err := s.partitionIDs(s.j.BuildKeys, b); err != nil {
			return err
		}
		per := float64(buildCost(b)) / float64(b.NumRows())
		for i, id := range sp.ids {
			if !sp.nulls[i] || outer {
				size[id] += per
				total += per
			}
		}
	}
	target := float64(max(s.res.Share(), 0)) / 2
	for total > target {
		big := -1
		for id := range sp.parts {
			if !sp.parts[id].onDisk && size[id] > 0 && (big < 0 || size[id] > size[big]) {
				big = id
			}
		}
		if big < 0 {
			break
		}
		sp.parts[big].onDisk = true
		total -= size[big]
	}
	for len(batches) > 0 {
		b := batches[0]
		batches = batches[1:]
		s.res.Shrink(buildCost(b))
		err := s.routeBuild(ctx, b)
		b.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// routeBuild sends the rows of a build batch (which the caller still
// owns) to their partitions. Rows with a NULL key match nothing: only a
// right or full join keeps them (to emit unmatched).
func (s *hashJoinStream) routeBuild(ctx context.Context, b arrow.RecordBatch) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	sp := s.sp
	if err := s.partitionIDs(s.j.BuildKeys, b); err != nil {
		return err
	}
	outer := s.j.Type == RightJoin || s.j.Type == FullJoin
	for id := range sp.idx {
		sp.idx[id] = sp.idx[id][:0]
	}
	for i, id := range sp.ids {
		if sp.nulls[i] {
			s.facts.null = true
			if !outer {
				continue
			}
		}
		sp.idx[id] = append(sp.idx[id], int32(i))
	}
	for id := range sp.parts {
		idx := sp.idx[id]
		if len(idx) == 0 {
			continue
		}
		piece, err := s.takeRows(b, idx)
		if err != nil {
			return err
		}
		p := &sp.parts[id]
		p.rows += int64(len(idx))
		sp.rows += int64(len(idx))
		if err := s.keepOrWrite(p, piece); err != nil {
			return err
		}
	}
	return nil
}

// keepOrWrite keeps a build piece (which it owns) in memory while its
// partition is there and the reservation grows; while it refuses, the
// largest partition in memory is written out, and once the piece's own
// partition is on disk the piece goes to its file.
func (s *hashJoinStream) keepOrWrite(p *joinPart, piece arrow.RecordBatch) error {
	for !p.onDisk {
		cost := buildCost(piece)
		err := s.res.Grow(cost)
		if err == nil {
			p.batches = append(p.batches, piece)
			p.bytes += cost
			return nil
		}
		if !s.tc.canSpill(err) {
			piece.Release()
			return err
		}
		v := s.sp.largestInMemory()
		if v == nil || v.bytes == 0 {
			v = p
		}
		if err := s.spillPart(v); err != nil {
			piece.Release()
			return err
		}
	}
	err := s.writeTo(&s.sp.build, s.j.Build.Schema(), "join-build", p.id, piece)
	piece.Release()
	return err
}

func (sp *joinSpill) largestInMemory() *joinPart {
	var big *joinPart
	for id := range sp.parts {
		p := &sp.parts[id]
		if !p.onDisk && (big == nil || p.bytes > big.bytes) {
			big = p
		}
	}
	return big
}

// spillPart writes a partition's build rows to its file and gives their
// memory back; its later rows go to the file too.
func (s *hashJoinStream) spillPart(p *joinPart) error {
	p.onDisk = true
	for len(p.batches) > 0 {
		b := p.batches[0]
		p.batches = p.batches[1:]
		err := s.writeTo(&s.sp.build, s.j.Build.Schema(), "join-build", p.id, b)
		b.Release()
		if err != nil {
			return err
		}
	}
	p.batches = nil
	s.res.Shrink(p.bytes)
	p.bytes = 0
	return nil
}

// writeTo appends b to partition id of the side's file *w, creating it
// first.
func (s *hashJoinStream) writeTo(w **spillParts, schema *arrow.Schema, purpose string, id int, b arrow.RecordBatch) error {
	if *w == nil {
		f, err := s.tc.createSpillParts(s.who, purpose, schema, joinFanOut, s.res)
		if err != nil {
			return err
		}
		*w = f
	}
	return (*w).write(id, b)
}

// finishSpillBuild closes the build file of the spilled partitions and
// indexes the partitions left in memory as one table.
func (s *hashJoinStream) finishSpillBuild() error {
	sp := s.sp
	build := sp.build
	sp.build = nil
	if err := build.finish(func(id int, f *spill.File) { sp.parts[id].bf = f }); err != nil {
		return err
	}
	for id := range sp.parts {
		p := &sp.parts[id]
		if !p.onDisk {
			s.batches = append(s.batches, p.batches...)
			p.batches = nil
			continue
		}
		if p.bf == nil {
			// Marked for disk but no row came: nothing to join later.
			p.onDisk = false
		}
	}
	return s.index()
}

// routeProbe writes the rows of a probe batch (which it owns) whose
// partition spilled to that partition's probe file, and returns the
// others (nil when none) to be joined now.
func (s *hashJoinStream) routeProbe(b arrow.RecordBatch) (arrow.RecordBatch, error) {
	sp := s.sp
	n := int(b.NumRows())
	if n == 0 {
		return b, nil
	}
	if err := s.partitionIDs(s.j.ProbeKeys, b); err != nil {
		b.Release()
		return nil, err
	}
	for id := range sp.idx {
		sp.idx[id] = sp.idx[id][:0]
	}
	keep := sp.keep[:0]
	for i, id := range sp.ids {
		if sp.nulls[i] || !sp.parts[id].onDisk {
			keep = append(keep, int32(i))
			continue
		}
		sp.idx[id] = append(sp.idx[id], int32(i))
	}
	sp.keep = keep
	for id := range sp.parts {
		idx := sp.idx[id]
		if len(idx) == 0 {
			continue
		}
		piece, err := s.takeRows(b, idx)
		if err != nil {
			b.Release()
			return nil, err
		}
		err = s.writeTo(&sp.probe, s.j.Probe.Schema(), "join-probe", id, piece)
		piece.Release()
		if err != nil {
			b.Release()
			return nil, err
		}
	}
	if len(keep) == n {
		return b, nil
	}
	defer b.Release()
	if len(keep) == 0 {
		return nil, nil
	}
	return s.takeRows(b, keep)
}

// endPass follows the end of a pass over the probe side (and the
// unmatched build rows): the next chunk, the next spilled partition, or
// the end.
func (s *hashJoinStream) endPass(ctx context.Context) error {
	if s.chunk != nil && !s.chunk.last {
		return s.nextChunk(ctx)
	}
	if s.sp != nil {
		if s.borrowed {
			s.dropBorrowed()
		} else {
			s.releaseTable()
		}
		return s.nextPartition(ctx)
	}
	s.finishedOutput = true
	return nil
}

// nextPartition starts the join of the next spilled partition, or ends
// the output when none is left.
func (s *hashJoinStream) nextPartition(ctx context.Context) error {
	sp := s.sp
	if sp.probe != nil {
		// The probe side ended: its rows of the spilled partitions are
		// all in the file.
		probe := sp.probe
		sp.probe = nil
		if err := probe.finish(func(id int, f *spill.File) { sp.parts[id].pf = f }); err != nil {
			return err
		}
	}
	for sp.next < len(sp.parts) {
		if err := ctx.Err(); err != nil {
			return err
		}
		p := &sp.parts[sp.next]
		sp.next++
		if !p.onDisk {
			continue
		}
		if p.pf == nil && s.j.Type != RightJoin && s.j.Type != FullJoin {
			// No probe row has these keys, and no build row is kept
			// unmatched.
			if !sp.shared {
				p.bf.Remove()
			}
			p.bf = nil
			continue
		}
		sub, err := s.partitionStream(p)
		if err != nil {
			return err
		}
		s.sub = sub
		return nil
	}
	s.finishedOutput = true
	return nil
}

// partitionStream returns the stream joining a spilled partition; it
// owns the partition's files from then on.
func (s *hashJoinStream) partitionStream(p *joinPart) (*hashJoinStream, error) {
	sub := &hashJoinStream{
		j: s.j, tc: s.tc, ec: s.ec, schema: s.schema, pairs: s.pairs, who: s.who, intKey: s.intKey,
		res: s.res, shared: true, facts: s.facts, level: s.level + 1, prow: 0, pcur: -1,
	}
	bf, pf := p.bf, p.pf
	p.bf, p.pf = nil, nil
	build, err := s.tc.openSpill(s.who, bf, !s.sp.shared)
	if err != nil {
		if pf != nil {
			pf.Remove()
		}
		return nil, err
	}
	sub.build = build
	switch {
	case sub.level >= maxJoinLevel || s.sp.kg == nil && 4*p.rows >= 3*s.sp.rows:
		// The partition did not split under the hash (its keys are
		// few): splitting it again would not help, so it is joined in
		// chunks.
		sub.chunk = &joinChunk{probeFile: pf}
	case pf != nil:
		probe, err := s.tc.openSpill(s.who, pf, true)
		if err != nil {
			build.Close()
			return nil, err
		}
		sub.probe = probe
	default:
		sub.probe = emptyStream{}
	}
	s.tc.notePasses(sub.level)
	return sub, nil
}

// buildChunk reads the next chunk of the build side, as much as the
// share holds (at least one batch, the one in flight), indexes it and
// opens the probe file for a pass over it.
func (s *hashJoinStream) buildChunk(ctx context.Context) error {
	c := s.chunk
	c.chunks++
	c.pos = 0
	if c.held != nil {
		s.batches = append(s.batches, c.held)
		// Past the share only if this batch alone is: then it is the
		// batch in flight every operator may hold.
		_ = s.res.Grow(buildCost(c.held))
		c.held = nil
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		b, err := s.build.Next(ctx)
		if err == io.EOF {
			c.last = true
			s.build.Close()
			s.build = nil
			break
		}
		if err != nil {
			return err
		}
		if b.NumRows() == 0 {
			b.Release()
			continue
		}
		if err := s.res.Grow(buildCost(b)); err != nil {
			if !s.tc.canSpill(err) {
				b.Release()
				return err
			}
			if len(s.batches) == 0 {
				s.batches = append(s.batches, b)
				continue
			}
			c.held = b
			break
		}
		s.batches = append(s.batches, b)
	}
	if err := s.index(); err != nil {
		return err
	}
	s.noteReserved()
	s.res.Seal()
	if c.chunks > 1 {
		s.tc.notePasses(s.level + c.chunks - 1)
	}
	if c.probeFile == nil {
		s.probe = emptyStream{}
		return nil
	}
	probe, err := s.tc.openSpill(s.who, c.probeFile, false)
	if err != nil {
		return err
	}
	s.probe = probe
	return nil
}

// nextChunk drops the chunk just joined and reads the next.
func (s *hashJoinStream) nextChunk(ctx context.Context) error {
	s.releaseTable()
	s.probeDone, s.tailDone, s.tailPos = false, false, 0
	return s.buildChunk(ctx)
}

// fold merges the matches of the probe batch at c.pos with those of the
// earlier chunks (matched gets every match so far) and reports whether
// the probe rows' output is due: only in the last chunk's pass, for the
// joins that emit probe rows by whether they matched.
func (c *joinChunk) fold(t JoinType, matched []bool) bool {
	if t == InnerJoin || t == RightJoin {
		return true
	}
	n := len(matched)
	for need := (c.pos + n + 63) / 64; len(c.seen) < need; {
		c.seen = append(c.seen, 0)
	}
	for i, m := range matched {
		o := c.pos + i
		w, bit := o/64, uint64(1)<<(o%64)
		switch {
		case m:
			c.seen[w] |= bit
		case c.seen[w]&bit != 0:
			matched[i] = true
		}
	}
	c.pos += n
	return c.last
}

// closeSpill releases what spilling holds: batches, open writers, files.
func (s *hashJoinStream) closeSpill() {
	if sp := s.sp; sp != nil {
		sp.build.abort()
		sp.probe.abort()
		sp.build, sp.probe = nil, nil
		for id := range sp.parts {
			p := &sp.parts[id]
			releaseBatches(p.batches)
			p.batches = nil
			if !sp.shared {
				p.bf.Remove()
			}
			p.pf.Remove()
			p.bf, p.pf = nil, nil
		}
	}
	if c := s.chunk; c != nil {
		if c.held != nil {
			c.held.Release()
			c.held = nil
		}
		if c.probeFile != nil {
			c.probeFile.Remove()
			c.probeFile = nil
		}
	}
}

// emptyStream has no rows.
type emptyStream struct{}

func (emptyStream) Next(context.Context) (arrow.RecordBatch, error) { return nil, io.EOF }
func (emptyStream) Close()                                          {}
