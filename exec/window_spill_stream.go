package exec

import (
	"context"
	"io"
	"strings"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
)

// A partition larger than the window's share whose functions are all
// row_number, rank or dense_rank is not written to a file of its own:
// those functions need neither the partition's row count nor any row
// after the current one (they ignore the frame), so each row's value is
// known from the rows before it, carried from batch to batch as the
// position, the current peer group's first row and the dense count.
// The partition is computed batch by batch as the merge of the sorted
// runs hands it out (or as a presorted input does), in the memory of the
// batch in flight. When the sort spilled, a big partition's rows were
// otherwise written and read back twice, once as sorted runs and once as
// the partition's file; the top-N-per-group statements (a rank filtered
// by a bound, q67's by category) are this shape.

// bigPartitionsStreamed counts the partitions computed as they come out
// of the merge (tests check that theirs were).
var bigPartitionsStreamed atomic.Int64

// rankOnly reports whether every function of fs is computed from the
// rows before the current one alone.
func rankOnly(fs []WindowFunc) bool {
	for _, f := range fs {
		switch strings.ToLower(f.Fn) {
		case "row_number", "rank", "dense_rank":
		default:
			return false
		}
	}
	return len(fs) > 0
}

// streamPartition starts computing the chunk, one partition so far and
// larger than the share, and (unless it ended) the rest of that
// partition as the merge hands it out, without writing it anywhere
// (s.big). The chunk's rows stay charged until they are computed; the
// rows after the partition wait in s.waiting.
func (s *windowStream) streamPartition(ended bool) {
	np := len(s.w.PartitionBy)
	p := &bigPartition{s: s, orderSpecs: s.keys[np:], stream: true}
	for _, k := range p.orderSpecs {
		p.orderExprs = append(p.orderExprs, k.Expr)
	}
	for _, f := range s.w.Funcs {
		p.fns = append(p.fns, strings.ToLower(f.Fn))
	}
	p.queue = s.acc
	s.acc, s.accRows, s.lastCut = nil, 0, 0
	s.big = p // closed with the stream from here on
	bigPartitionsStreamed.Add(1)
	if ended {
		p.endStream()
	}
}

// endStream notes that the partition's last row was read: the next
// partition starts at s.waiting's first row.
func (p *bigPartition) endStream() {
	p.ended = true
	releaseArrays(p.s.prevKey)
	p.s.prevKey = nil
}

// nextStreamed computes the next batch of a streamed partition: the
// chunk's rows first, then the merge's up to the partition's end.
func (p *bigPartition) nextStreamed(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := p.s
	var b arrow.RecordBatch
	if len(p.queue) > 0 {
		b = p.queue[0]
		p.queue[0] = nil
		p.queue = p.queue[1:]
		var rest int64
		for _, q := range p.queue {
			rest += s.rowsCost(q)
		}
		s.res.Shrink(s.res.Size() - rest)
	} else {
		var err error
		if b, err = p.pull(ctx); err != nil {
			return nil, err
		}
	}
	defer b.Release()
	return p.computeStreamed(b)
}

// pull reads the partition's next rows from the merge, io.EOF past its
// last row (the rows after it wait in s.waiting).
func (p *bigPartition) pull(ctx context.Context) (arrow.RecordBatch, error) {
	s := p.s
	for !p.ended {
		b, err := s.nextSorted(ctx)
		if err == io.EOF {
			s.eof = true
			p.endStream()
			break
		}
		if err != nil {
			return nil, err
		}
		cut, err := s.firstCut(b, true)
		if err != nil {
			b.Release()
			return nil, err
		}
		if cut < 0 {
			return b, nil
		}
		s.waiting = b.NewSlice(int64(cut), b.NumRows())
		var head arrow.RecordBatch
		if cut > 0 {
			head = b.NewSlice(0, int64(cut))
		}
		b.Release()
		p.endStream()
		if head != nil {
			return head, nil
		}
	}
	return nil, io.EOF
}

// computeStreamed computes the functions over b, the partition's rows
// after the p.n handed out before.
func (p *bigPartition) computeStreamed(b arrow.RecordBatch) (arrow.RecordBatch, error) {
	s := p.s
	blk := &partRec{start: p.n, n: int(b.NumRows()), batch: b}
	order, err := evalExprs(s.buf.ec, p.orderExprs, b)
	if err != nil {
		return nil, err
	}
	defer releaseArrays(order)
	blk.order = order
	ps, _, dense, err := p.peers(blk)
	if err != nil {
		return nil, err
	}
	p.n += int64(blk.n)
	out := make([]arrow.Array, 0, int(b.NumCols())+len(p.fns))
	for _, c := range b.Columns() {
		c.Retain()
		out = append(out, c)
	}
	for i, f := range s.w.Funcs {
		a, err := p.function(i, f, blk, ps, nil, dense, nil, nil)
		if err == nil && !arrow.TypeEqual(a.DataType(), f.Type) {
			var c arrow.Array
			c, err = castArray(s.buf.ec.Alloc, a, f.Type)
			a.Release()
			a = c
		}
		if err != nil {
			releaseArrays(out)
			return nil, err
		}
		out = append(out, a)
	}
	return newBatch(s.schema, out, blk.n), nil
}
