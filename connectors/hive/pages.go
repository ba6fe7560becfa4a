package hive

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/bits"

	"github.com/klauspost/compress/snappy"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/encoding"
	"github.com/parquet-go/parquet-go/format"
)

// pageReader reads the pages of one column chunk, whose place in the file
// the footer gave (chunkLoc): page headers through compactReader, page
// bodies decompressed with parquet-go's codecs, levels and dictionary
// indexes by hybrid.go, values by parquet-go's encodings. It never parses
// the footer: the scan reuses what the catalog decoded.
//
// The chunk's bytes come from a window: the whole chunk when the reader
// fetched it with its neighbours (FileReader.openRowGroup), else reads of
// up to chunkWindow bytes at a time, so a chunk of a huge row group does
// not sit in memory whole.
type pageReader struct {
	ra    io.ReaderAt
	loc   chunkLoc
	info  *columnInfo
	codec compress.Codec

	pos    int64 // file offset of the next page header
	win    []byte
	winOff int64 // file offset of win[0]
	own    []byte

	values int64 // values (levels) of the pages read so far

	dec   []byte // decompressed page
	dict  *dictionary
	def   []byte
	idx   []int32
	bufs  valueBufs
	dbufs valueBufs
	bits  []byte // RLE booleans, packed
}

// chunkWindow is the most of a chunk read at once when it was not
// fetched whole.
const chunkWindow = 4 << 20

// maxPageSize bounds a page's decompressed size: a header claiming more
// is corrupt (no writer makes pages this big), and the bound keeps a
// damaged header from allocating gigabytes.
const maxPageSize = 1 << 30

// dictionary is a chunk's decoded dictionary page.
type dictionary struct {
	vals values
	n    int
}

// page is one decoded data page.
type page struct {
	n    int    // levels: rows, for a flat column
	def  []byte // definition levels; nil for a required column
	used int    // non-NULL values
	vals values // the values, or the dictionary's when idx is set
	idx  []int32
}

// valueBufs are reusable slices values are decoded into.
type valueBufs struct {
	i32  []int32
	i64  []int64
	i96  []deprecated.Int96
	f32  []float32
	f64  []float64
	data []byte
	offs []uint32
}

func (p *pageReader) reset(ra io.ReaderAt, loc chunkLoc, info *columnInfo, prefetched []byte) error {
	p.ra, p.loc, p.info = ra, loc, info
	p.pos, p.values, p.dict = loc.start, 0, nil
	p.win, p.winOff = prefetched, loc.start
	if loc.codec == format.Uncompressed {
		p.codec = nil
	} else {
		// parquet-go reads SNAPPY, GZIP, BROTLI, ZSTD and LZ4_RAW; not
		// LZO, nor the deprecated Hadoop-framed LZ4.
		p.codec = parquet.LookupCompressionCodec(loc.codec)
		if p.codec.CompressionCodec() != loc.codec || p.codec.String() == "UNSUPPORTED" {
			return fmt.Errorf("%w: compression codec %s", ErrUnsupported, loc.codec)
		}
	}
	return nil
}

// bytes returns n bytes of the chunk from file offset off.
func (p *pageReader) bytes(off int64, n int) ([]byte, error) {
	end := p.loc.start + p.loc.length
	if n < 0 || off < p.loc.start || off+int64(n) > end {
		return nil, fmt.Errorf("page of %d bytes at offset %d past its column chunk [%d, %d)", n, off, p.loc.start, end)
	}
	if off >= p.winOff && off+int64(n) <= p.winOff+int64(len(p.win)) {
		s := off - p.winOff
		return p.win[s : s+int64(n)], nil
	}
	size := int(min(end-off, int64(max(n, chunkWindow))))
	if cap(p.own) < size {
		p.own = make([]byte, size)
	}
	p.win, p.winOff = p.own[:size], off
	if _, err := p.ra.ReadAt(p.win, off); err != nil {
		p.win = nil
		return nil, fmt.Errorf("reading column chunk: %w", err)
	}
	return p.win[:n], nil
}

// header decodes the page header at p.pos; a header longer than what the
// window holds is retried with more.
func (p *pageReader) header(h *pageHeader) (int, error) {
	left := p.loc.start + p.loc.length - p.pos
	want := int(min(left, 256))
	for {
		b, err := p.bytes(p.pos, want)
		if err != nil {
			return 0, err
		}
		n, err := decodePageHeader(b, h)
		if err == nil {
			return n, nil
		}
		if int64(want) >= left {
			return 0, err
		}
		want = int(min(left, int64(want)*4))
	}
}

// next decodes the next data page into pg, reading the dictionary page
// first when one comes.
func (p *pageReader) next(pg *page) error {
	for {
		if p.pos >= p.loc.start+p.loc.length {
			return errors.New("column chunk holds fewer values than its row group has rows")
		}
		var h pageHeader
		hl, err := p.header(&h)
		if err != nil {
			return err
		}
		if h.uncompressed > maxPageSize {
			return fmt.Errorf("page of %d bytes uncompressed", h.uncompressed)
		}
		body, err := p.bytes(p.pos+int64(hl), int(h.compressed))
		if err != nil {
			return err
		}
		p.pos += int64(hl) + int64(h.compressed)
		if h.hasCRC && crc32.ChecksumIEEE(body) != uint32(h.crc) {
			return errors.New("page checksum mismatch")
		}
		switch h.typ {
		case pageDictionary:
			if !h.hasData {
				return errors.New("dictionary page without its header")
			}
			if p.dict != nil {
				return errors.New("second dictionary page in a column chunk")
			}
			if err := p.readDictionary(&h, body); err != nil {
				return fmt.Errorf("dictionary page: %w", err)
			}
			continue
		case pageData, pageDataV2:
			if !h.hasData {
				return errors.New("data page without its header")
			}
			if err := p.readData(&h, body, pg); err != nil {
				return err
			}
			p.values += int64(pg.n)
			if p.values > p.loc.numValues {
				return fmt.Errorf("column chunk pages hold more than its %d values", p.loc.numValues)
			}
			return nil
		case pageIndex:
			continue
		}
		return fmt.Errorf("unknown page type %d", h.typ)
	}
}

// decompress returns the decompressed form of src, which must be size
// bytes.
func (p *pageReader) decompress(src []byte, size int) ([]byte, error) {
	if p.codec == nil {
		if len(src) != size {
			return nil, fmt.Errorf("uncompressed page of %d bytes says it holds %d", len(src), size)
		}
		return src, nil
	}
	if p.loc.codec == format.Snappy {
		// Snappy states the decoded length first: check it before the
		// codec allocates that much.
		n, err := snappy.DecodedLen(src)
		if err != nil {
			return nil, fmt.Errorf("snappy: %w", err)
		}
		if n != size {
			return nil, fmt.Errorf("snappy page decodes to %d bytes, its header says %d", n, size)
		}
	}
	out, err := p.codec.Decode(grow(p.dec, size)[:0], src)
	if err != nil {
		return nil, fmt.Errorf("decompressing a %s page: %w", p.codec, err)
	}
	if cap(out) > cap(p.dec) {
		p.dec = out[:0]
	}
	if len(out) != size {
		return nil, fmt.Errorf("%s page decompresses to %d bytes, its header says %d", p.codec, len(out), size)
	}
	return out, nil
}

func (p *pageReader) readDictionary(h *pageHeader, body []byte) error {
	if h.encoding != format.Plain && h.encoding != format.PlainDictionary {
		return fmt.Errorf("%w: dictionary encoding %s", ErrUnsupported, h.encoding)
	}
	data, err := p.decompress(body, int(h.uncompressed))
	if err != nil {
		return err
	}
	v, err := p.decodeValues(&parquet.Plain, data, &p.dbufs, int(h.numValues))
	if err != nil {
		return err
	}
	if v.n < int(h.numValues) {
		return fmt.Errorf("dictionary page holds %d values, its header says %d", v.n, h.numValues)
	}
	p.dict = &dictionary{vals: v, n: int(h.numValues)}
	return nil
}

func (p *pageReader) readData(h *pageHeader, body []byte, pg *page) error {
	n := int(h.numValues)
	var data []byte
	var err error
	pg.def = nil
	if h.typ == pageData {
		if data, err = p.decompress(body, int(h.uncompressed)); err != nil {
			return err
		}
		if p.info.optional {
			switch h.defEncoding {
			case format.RLE:
				if len(data) < 4 {
					return errors.New("definition levels without their length")
				}
				l := int64(le32(data))
				if l > int64(len(data)-4) {
					return errors.New("definition levels past the page")
				}
				if p.def, err = decodeLevels(p.def, data[4:4+l], n); err != nil {
					return err
				}
				data = data[4+l:]
			case format.BitPacked:
				var used int
				if p.def, used, err = decodeBitPackedLevels(p.def, data, n); err != nil {
					return err
				}
				data = data[used:]
			default:
				return fmt.Errorf("%w: definition level encoding %s", ErrUnsupported, h.defEncoding)
			}
			pg.def = p.def[:n]
		}
	} else {
		levels := int64(h.repLength) + int64(h.defLength)
		if levels > int64(len(body)) {
			return errors.New("levels past the page")
		}
		// A flat column has no repetition levels; writers that emit some
		// anyway are skipped over, as their values are all zero.
		if p.info.optional {
			if p.def, err = decodeLevels(p.def, body[h.repLength:levels], n); err != nil {
				return err
			}
			pg.def = p.def[:n]
		}
		data = body[levels:]
		if h.isCompressed {
			size := int64(h.uncompressed) - levels
			if size < 0 {
				return errors.New("page smaller than its levels")
			}
			if data, err = p.decompress(data, int(size)); err != nil {
				return err
			}
		} else if int64(len(data)) != int64(h.uncompressed)-levels {
			return fmt.Errorf("uncompressed page of %d bytes says it holds %d", len(body), h.uncompressed)
		}
	}
	used := n
	if pg.def != nil {
		used = countOnes(pg.def)
	}
	pg.n, pg.used = n, used
	switch h.encoding {
	case format.PlainDictionary, format.RLEDictionary:
		if p.dict == nil {
			return errors.New("dictionary-encoded page without a dictionary page")
		}
		if len(data) == 0 {
			if used > 0 {
				return errors.New("dictionary-encoded page without indexes")
			}
			pg.idx, pg.vals = p.idx[:0], p.dict.vals
			return nil
		}
		if p.idx, err = decodeIndexes(p.idx, data[1:], uint(data[0]), used); err != nil {
			return err
		}
		limit := int32(p.dict.n)
		for _, i := range p.idx[:used] {
			if i < 0 || i >= limit {
				return fmt.Errorf("dictionary index %d out of range [0,%d)", i, limit)
			}
		}
		pg.idx, pg.vals = p.idx[:used], p.dict.vals
		return nil
	}
	pg.idx = nil
	var enc encoding.Encoding
	if h.encoding == format.RLE && p.info.kind == kindBool {
		pg.vals, err = p.rleBooleans(data, used)
	} else {
		enc = parquet.LookupEncoding(h.encoding)
		if _, ok := enc.(encoding.NotSupported); ok || h.encoding == format.BitPacked || h.encoding == format.RLE {
			return fmt.Errorf("%w: value encoding %s", ErrUnsupported, h.encoding)
		}
		pg.vals, err = p.decodeValues(enc, data, &p.bufs, used)
	}
	if err != nil {
		return err
	}
	if pg.vals.n != used && p.info.kind != kindBool {
		return fmt.Errorf("page has %d non-null definition levels but %d values", used, pg.vals.n)
	}
	if p.info.kind == kindBool && pg.vals.n < used {
		return errors.New("boolean page shorter than its value count")
	}
	return nil
}

// countOnes counts the levels that are 1 (present values). Every level of
// a flat optional column is 0 or 1 (decodeLevels and
// decodeBitPackedLevels make nothing else), so the population count of
// eight levels read as one word is their sum: a byte at a time was 3% of
// the star statements' CPU on the flat layout.
func countOnes(def []byte) int {
	n, i := 0, 0
	for ; i+32 <= len(def); i += 32 {
		n += bits.OnesCount64(binary.LittleEndian.Uint64(def[i:])) +
			bits.OnesCount64(binary.LittleEndian.Uint64(def[i+8:])) +
			bits.OnesCount64(binary.LittleEndian.Uint64(def[i+16:])) +
			bits.OnesCount64(binary.LittleEndian.Uint64(def[i+24:]))
	}
	for ; i+8 <= len(def); i += 8 {
		n += bits.OnesCount64(binary.LittleEndian.Uint64(def[i:]))
	}
	for _, l := range def[i:] {
		n += int(l)
	}
	return n
}

// rleBooleans decodes RLE-encoded booleans (a 4-byte length, then the
// hybrid encoding of width 1) into packed bits.
func (p *pageReader) rleBooleans(data []byte, n int) (values, error) {
	if len(data) < 4 {
		return values{}, errors.New("RLE booleans without their length")
	}
	l := int64(le32(data))
	if l > int64(len(data)-4) {
		return values{}, errors.New("RLE booleans past the page")
	}
	levels, err := decodeLevels(p.bufs.data, data[4:4+l], n)
	if err != nil {
		return values{}, err
	}
	p.bufs.data = levels
	p.bits = grow(p.bits, (n+7)/8)
	clear(p.bits)
	for i, v := range levels[:n] {
		p.bits[i>>3] |= v << (i & 7)
	}
	return values{bits: p.bits, n: n}, nil
}

// decodeValues decodes the values of a page (or dictionary) with enc
// into bufs. n is how many values the page should hold; only booleans use
// it (their bits carry no count).
func (p *pageReader) decodeValues(enc encoding.Encoding, src []byte, bufs *valueBufs, n int) (values, error) {
	var out values
	var err error
	switch p.info.phys {
	case format.Int32:
		bufs.i32, err = enc.DecodeInt32(bufs.i32[:0], src)
		out.i32, out.n = bufs.i32, len(bufs.i32)
	case format.Int64:
		bufs.i64, err = enc.DecodeInt64(bufs.i64[:0], src)
		out.i64, out.n = bufs.i64, len(bufs.i64)
	case format.Int96:
		bufs.i96, err = enc.DecodeInt96(bufs.i96[:0], src)
		out.i96, out.n = bufs.i96, len(bufs.i96)
	case format.Float:
		bufs.f32, err = enc.DecodeFloat(bufs.f32[:0], src)
		out.f32, out.n = bufs.f32, len(bufs.f32)
	case format.Double:
		bufs.f64, err = enc.DecodeDouble(bufs.f64[:0], src)
		out.f64, out.n = bufs.f64, len(bufs.f64)
	case format.Boolean:
		bufs.data, err = enc.DecodeBoolean(bufs.data[:0], src)
		out.bits = bufs.data
		out.n = min(n, len(bufs.data)*8)
	case format.ByteArray:
		bufs.data, bufs.offs, err = enc.DecodeByteArray(bufs.data[:0], src, bufs.offs[:0])
		out.data, out.offs = bufs.data, bufs.offs
		if len(out.offs) > 0 {
			out.n = len(out.offs) - 1
			if int(out.offs[out.n]) > len(out.data) || out.offs[0] > out.offs[out.n] {
				return out, errors.New("byte array offsets past the page data")
			}
		}
	case format.FixedLenByteArray:
		w := p.info.typeLength
		if w <= 0 || w > encoding.MaxFixedLenByteArraySize {
			return out, fmt.Errorf("fixed-length values of %d bytes", w)
		}
		bufs.data, err = enc.DecodeFixedLenByteArray(bufs.data[:0], src, w)
		out.data, out.flen, out.n = bufs.data, w, len(bufs.data)/w
	default:
		return out, fmt.Errorf("%w: physical type %s", ErrUnsupported, p.info.phys)
	}
	if err != nil {
		return values{}, err
	}
	return out, nil
}
