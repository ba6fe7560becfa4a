package exec

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// BatchBytes is the number of bytes of b's buffers that b's rows
// reference: a slice of rows [i, j) of a batch is charged for rows [i, j)
// of each buffer (the values, the validity bits, the offsets and the
// string bytes between them), not for the whole buffers it shares. The
// memory budget and the shuffle's byte counters use it, so a batch cut
// into slices is counted once in total, however many slices it is cut
// into. A buffer shared by two columns counts once. Nested and dictionary
// children, whose slicing follows other rules, count in full.
func BatchBytes(b arrow.RecordBatch) int64 {
	var seen bufferSet
	var n int64
	for _, c := range b.Columns() {
		n += sliceBytes(c.Data(), &seen)
	}
	return n
}

// recordBytes is what operators reserve in the memory budget for a batch
// they hold.
func recordBytes(b arrow.RecordBatch) int64 { return BatchBytes(b) }

// ArrayBytes is BatchBytes of one array.
func ArrayBytes(a arrow.Array) int64 {
	var seen bufferSet
	return sliceBytes(a.Data(), &seen)
}

// bufferSet remembers the buffers already counted; batches have few, so a
// short list beats a map.
type bufferSet struct {
	small [32]*memory.Buffer
	n     int
	more  map[*memory.Buffer]struct{}
}

// add reports whether buf was new.
func (s *bufferSet) add(buf *memory.Buffer) bool {
	for i := 0; i < s.n; i++ {
		if s.small[i] == buf {
			return false
		}
	}
	if _, ok := s.more[buf]; ok {
		return false
	}
	if s.n < len(s.small) {
		s.small[s.n] = buf
		s.n++
		return true
	}
	if s.more == nil {
		s.more = map[*memory.Buffer]struct{}{}
	}
	s.more[buf] = struct{}{}
	return true
}

func sliceBytes(d arrow.ArrayData, seen *bufferSet) int64 {
	typ := d.DataType()
	storage := typ
	if ext, ok := typ.(arrow.ExtensionType); ok {
		storage = ext.StorageType()
	}
	layout := storage.Layout()
	off, n := d.Offset(), d.Len()
	bufs := d.Buffers()
	var total int64
	for i, buf := range bufs {
		if buf == nil || !seen.add(buf) {
			continue
		}
		full := int64(buf.Len())
		ref := full
		if i < len(layout.Buffers) {
			switch spec := layout.Buffers[i]; spec.Kind {
			case arrow.KindBitmap:
				ref = bitutil.BytesForBits(int64(off+n)) - int64(off/8)
			case arrow.KindFixedWidth:
				rows := n
				if offsetsBuffer(storage.ID(), i) {
					rows = n + 1
				}
				ref = int64(rows) * int64(spec.ByteWidth)
			case arrow.KindVarWidth:
				if lo, hi, ok := valueRange(storage.ID(), bufs, off, n); ok {
					ref = hi - lo
				}
			case arrow.KindAlwaysNull:
				ref = 0
			}
		}
		total += max(min(ref, full), 0)
	}
	for _, c := range d.Children() {
		total += fullBytes(c, seen)
	}
	if typ.ID() == arrow.DICTIONARY {
		total += fullBytes(d.Dictionary(), seen)
	}
	return total
}

// offsetsBuffer reports whether buffer i of a type holds n+1 offsets.
func offsetsBuffer(id arrow.Type, i int) bool {
	switch id {
	case arrow.STRING, arrow.BINARY, arrow.LARGE_STRING, arrow.LARGE_BINARY, arrow.LIST, arrow.LARGE_LIST, arrow.MAP:
		return i == 1
	}
	return false
}

// valueRange is the byte range of rows [off, off+n) in the value buffer
// of a string or binary array, read from its offsets.
func valueRange(id arrow.Type, bufs []*memory.Buffer, off, n int) (lo, hi int64, ok bool) {
	if len(bufs) < 3 || bufs[1] == nil {
		return 0, 0, false
	}
	raw := bufs[1].Bytes()
	switch id {
	case arrow.STRING, arrow.BINARY:
		o := arrow.Int32Traits.CastFromBytes(raw)
		if off+n >= len(o) {
			return 0, 0, false
		}
		return int64(o[off]), int64(o[off+n]), true
	case arrow.LARGE_STRING, arrow.LARGE_BINARY:
		o := arrow.Int64Traits.CastFromBytes(raw)
		if off+n >= len(o) {
			return 0, 0, false
		}
		return o[off], o[off+n], true
	}
	return 0, 0, false
}

// fullBytes counts every buffer of d and its children whole.
func fullBytes(d arrow.ArrayData, seen *bufferSet) int64 {
	if d == nil {
		return 0
	}
	var n int64
	for _, buf := range d.Buffers() {
		if buf != nil && seen.add(buf) {
			n += int64(buf.Len())
		}
	}
	for _, c := range d.Children() {
		n += fullBytes(c, seen)
	}
	if d.DataType().ID() == arrow.DICTIONARY {
		n += fullBytes(d.Dictionary(), seen)
	}
	return n
}
