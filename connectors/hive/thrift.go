package hive

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Parquet's footer and page headers are Thrift structs in the compact
// protocol. compactReader reads that protocol straight from a byte slice:
// fields are walked in a loop and each decoder keeps only the fields fsql
// uses, skipping the rest, so decoding a footer allocates what fsql keeps
// and nothing else (parquet-go's decoder builds every field through
// reflection, and every query used to pay it once per file read).
//
// The input is hostile until proven otherwise: every length and count is
// checked against the bytes that remain before anything is allocated
// (each element takes at least one byte, so a list never claims more
// elements than there are bytes), nesting is bounded, and the first
// problem sticks: later reads return zero values and the decoder reports
// the error once, at its end.

// Compact protocol wire types.
const (
	tStop   = 0
	tTrue   = 1
	tFalse  = 2
	tByte   = 3
	tI16    = 4
	tI32    = 5
	tI64    = 6
	tDouble = 7
	tBinary = 8
	tList   = 9
	tSet    = 10
	tMap    = 11
	tStruct = 12
	tUUID   = 13
)

// maxThriftDepth bounds struct and container nesting. Parquet's deepest
// struct (a logical type inside a schema element inside the file
// metadata) is four levels down; skipping unknown fields may go deeper,
// but never this deep in a real file.
const maxThriftDepth = 32

type compactReader struct {
	b     []byte
	pos   int
	depth int
	err   error
}

func (r *compactReader) failf(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("thrift at byte %d: "+format, append([]any{r.pos}, args...)...)
	}
	r.pos = len(r.b) // every later read sees the end
}

func (r *compactReader) remaining() int { return len(r.b) - r.pos }

func (r *compactReader) readByte() byte {
	if r.pos < len(r.b) {
		c := r.b[r.pos]
		r.pos++
		return c
	}
	return r.eof()
}

// eof records reading past the end; kept out of line so the fast paths
// above inline.
//
//go:noinline
func (r *compactReader) eof() byte {
	r.failf("unexpected end of data")
	return 0
}

func (r *compactReader) uvarint() uint64 {
	if r.pos < len(r.b) && r.b[r.pos] < 0x80 { // most are one byte
		c := r.b[r.pos]
		r.pos++
		return uint64(c)
	}
	return r.uvarintSlow()
}

func (r *compactReader) uvarintSlow() uint64 {
	var x uint64
	for shift := uint(0); shift < 64; shift += 7 {
		if r.pos >= len(r.b) {
			r.failf("unexpected end of data in a varint")
			return 0
		}
		c := r.b[r.pos]
		r.pos++
		x |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return x
		}
	}
	r.failf("varint longer than 10 bytes")
	return 0
}

func (r *compactReader) zigzag() int64 {
	u := r.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

// integer reads an integer field of any width; fsql checks ranges itself.
func (r *compactReader) integer(typ byte) int64 {
	switch typ {
	case tByte:
		return int64(int8(r.readByte()))
	case tI16, tI32, tI64:
		return r.zigzag()
	}
	r.failf("integer field has wire type %d", typ)
	return 0
}

// int32Field reads an integer that must fit in 32 bits (sizes, counts,
// enum values): a larger one is corrupt, not silently truncated.
func (r *compactReader) int32Field(typ byte) int32 {
	v := r.integer(typ)
	if v < math.MinInt32 || v > math.MaxInt32 {
		r.failf("value %d does not fit in 32 bits", v)
		return 0
	}
	return int32(v)
}

func (r *compactReader) boolField(typ byte) bool {
	switch typ {
	case tTrue:
		return true
	case tFalse:
		return false
	}
	r.failf("boolean field has wire type %d", typ)
	return false
}

// binary returns the next binary value, aliasing the input.
func (r *compactReader) binary(typ byte) []byte {
	if typ != tBinary {
		r.failf("binary field has wire type %d", typ)
		return nil
	}
	n := r.uvarint()
	if n > uint64(r.remaining()) {
		r.failf("binary of %d bytes with %d left", n, r.remaining())
		return nil
	}
	b := r.b[r.pos : r.pos+int(n) : r.pos+int(n)]
	r.pos += int(n)
	return b
}

func (r *compactReader) str(typ byte) string { return string(r.binary(typ)) }

// fieldHeader reads the next field's id and wire type; ok is false at the
// struct's end (or after an error). last is the previous field's id, which
// short headers are relative to.
func (r *compactReader) fieldHeader(last *int16) (id int16, typ byte, ok bool) {
	c := r.readByte()
	if r.err != nil || c == tStop {
		return 0, 0, false
	}
	typ = c & 0x0f
	if delta := c >> 4; delta != 0 {
		id = *last + int16(delta)
	} else {
		v := r.zigzag()
		if v < math.MinInt16 || v > math.MaxInt16 {
			r.failf("field id %d out of range", v)
			return 0, 0, false
		}
		id = int16(v)
	}
	*last = id
	return id, typ, r.err == nil
}

// listHeader reads a list (or set) header. The element count is bounded
// by the bytes left: every element takes at least one.
func (r *compactReader) listHeader(typ byte) (n int, elem byte) {
	if typ != tList && typ != tSet {
		r.failf("list field has wire type %d", typ)
		return 0, 0
	}
	c := r.readByte()
	elem = c & 0x0f
	size := uint64(c >> 4)
	if size == 15 {
		size = r.uvarint()
	}
	if size > uint64(r.remaining()) {
		r.failf("list of %d elements with %d bytes left", size, r.remaining())
		return 0, 0
	}
	return int(size), elem
}

// enter and leave bound the nesting of structs and containers.
func (r *compactReader) enter() bool {
	r.depth++
	if r.depth > maxThriftDepth {
		r.failf("nesting deeper than %d", maxThriftDepth)
		return false
	}
	return r.err == nil
}

func (r *compactReader) leave() { r.depth-- }

// skip passes over one value of the given wire type.
func (r *compactReader) skip(typ byte) {
	switch typ {
	case tTrue, tFalse:
		// Field booleans live in the header; a boolean in a container is
		// one byte, which skipElem reads.
	case tByte:
		r.readByte()
	case tI16, tI32, tI64:
		r.uvarint()
	case tDouble:
		r.advance(8)
	case tUUID:
		r.advance(16)
	case tBinary:
		r.binary(tBinary)
	case tList, tSet:
		n, elem := r.listHeader(typ)
		if !r.enter() {
			return
		}
		for i := 0; i < n && r.err == nil; i++ {
			r.skipElem(elem)
		}
		r.leave()
	case tMap:
		n := r.uvarint()
		if n == 0 {
			return
		}
		kv := r.readByte()
		if n > uint64(r.remaining()) {
			r.failf("map of %d entries with %d bytes left", n, r.remaining())
			return
		}
		if !r.enter() {
			return
		}
		for i := uint64(0); i < n && r.err == nil; i++ {
			r.skipElem(kv >> 4)
			r.skipElem(kv & 0x0f)
		}
		r.leave()
	case tStruct:
		r.skipStruct()
	default:
		r.failf("unknown wire type %d", typ)
	}
}

// skipElem skips one container element: booleans take a byte there.
func (r *compactReader) skipElem(typ byte) {
	if typ == tTrue || typ == tFalse {
		r.readByte()
		return
	}
	r.skip(typ)
}

func (r *compactReader) skipStruct() {
	if !r.enter() {
		return
	}
	var last int16
	for {
		_, typ, ok := r.fieldHeader(&last)
		if !ok {
			break
		}
		r.skip(typ)
	}
	r.leave()
}

func (r *compactReader) advance(n int) {
	if n > r.remaining() {
		r.failf("unexpected end of data")
		return
	}
	r.pos += n
}

// readStruct calls field for every field of a struct until its end; field
// must consume the value (or skip it).
func (r *compactReader) readStruct(field func(id int16, typ byte)) {
	if !r.enter() {
		return
	}
	var last int16
	for {
		id, typ, ok := r.fieldHeader(&last)
		if !ok {
			break
		}
		field(id, typ)
	}
	r.leave()
}

// expectStruct checks a field holds a struct before readStruct reads it.
func (r *compactReader) expectStruct(typ byte) bool {
	if typ != tStruct {
		r.failf("struct field has wire type %d", typ)
		return false
	}
	return true
}

// le32 reads a little-endian uint32 from b (the footer length).
func le32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }
