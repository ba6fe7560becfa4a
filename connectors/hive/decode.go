package hive

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/fsql-dev/fsql/internal/mempool"
	"github.com/parquet-go/parquet-go/deprecated"
)

// values is a typed view of the non-null values of one page (or of a
// dictionary). Exactly one group of slices is set, by physical type.
type values struct {
	i32  []int32
	i64  []int64
	i96  []deprecated.Int96
	f32  []float32
	f64  []float64
	bits []byte   // BOOLEAN, bit-packed LSB first
	data []byte   // BYTE_ARRAY and FIXED_LEN_BYTE_ARRAY bytes
	offs []uint32 // BYTE_ARRAY: value i is data[offs[i]:offs[i+1]]
	flen int      // FIXED_LEN_BYTE_ARRAY: value i is data[i*flen:(i+1)*flen]
	n    int
}

// columnDecoder turns the pages of one column chunk into Arrow arrays, a
// batch at a time. It keeps the current page across batches.
type columnDecoder struct {
	info  columnInfo
	alloc memory.Allocator
	trunc bool // drop sub-microsecond digits instead of failing (Options.TruncateNanos)

	pages pageReader
	open  bool
	pg    page
	def   []byte // definition levels of the page; nil for required columns
	rows  int    // rows in the page
	pos   int    // next row of the page
	vpos  int    // next non-null value of the page
	vals  values // page values, or dictionary values when idx is set
	idx   []int32

	scratch32 []int32
	scratch64 []int64
	scratchF  []float32
	scratch96 []deprecated.Int96
}

func newColumnDecoder(ci columnInfo, alloc memory.Allocator, truncNanos bool) *columnDecoder {
	return &columnDecoder{info: ci, alloc: alloc, trunc: truncNanos}
}

// reset starts a new column chunk, at loc in ra; prefetched holds the
// chunk's bytes when the reader fetched them already.
func (d *columnDecoder) reset(ra io.ReaderAt, loc chunkLoc, prefetched []byte) error {
	d.rows, d.pos, d.vpos = 0, 0, 0
	d.open = false
	if err := d.pages.reset(ra, loc, &d.info, prefetched); err != nil {
		return err
	}
	d.open = true
	return nil
}

func (d *columnDecoder) close() {
	d.open = false
	d.pages.ra, d.pages.win = nil, nil
}

func (d *columnDecoder) nextPage() error {
	if !d.open {
		return errors.New("no column chunk open")
	}
	if err := d.pages.next(&d.pg); err != nil {
		return err
	}
	d.vals, d.idx, d.def, d.rows = d.pg.vals, d.pg.idx, d.pg.def, d.pg.n
	d.pos, d.vpos = 0, 0
	return nil
}

// outBuf is one Arrow buffer of the batch being built.
type outBuf struct{ b *memory.Buffer }

// newOut returns a zeroed buffer of size bytes. With overwrite, the caller
// writes every one of the bytes (values of NULL rows included), so from
// the scan's own pool recycled memory is not cleared first; any other
// allocator is asked as usual (zeroed, and counted by checked allocators).
// Bitmaps are always cleared: kernels may read them a word at a time.
func newOut(alloc memory.Allocator, size int, overwrite bool) outBuf {
	if p, ok := alloc.(*mempool.Pool); ok && overwrite {
		return outBuf{memory.NewBufferWithAllocator(p.AllocateUninit(size), p)}
	}
	b := memory.NewResizableBuffer(alloc)
	b.Resize(size)
	return outBuf{b}
}

// read decodes the next n rows of the chunk into an Arrow array.
func (d *columnDecoder) read(n int) (arr arrow.Array, err error) {
	var validity, data, offsets *memory.Buffer
	defer func() {
		// parquet-go trusts page contents in places: a damaged page must
		// fail this file, not the process, and must not leak the batch.
		if p := recover(); p != nil {
			arr, err = nil, fmt.Errorf("decoding failed: %v", p)
		}
		if err != nil {
			for _, b := range []*memory.Buffer{validity, data, offsets} {
				if b != nil {
					b.Release()
				}
			}
		}
	}()
	var vbits []byte
	if d.info.optional {
		validity = newOut(d.alloc, int(bitutil.BytesForBits(int64(n))), false).b
		vbits = validity.Bytes()
	}
	var width int
	switch d.info.kind {
	case kindInt32:
		width = 4
	case kindInt64, kindDouble, kindFloat, kindInt32To64, kindInt96, kindFloat16:
		width = 8
	case kindDecInt32, kindDecInt64, kindDecBytes:
		width = 16
	}
	var strData []byte
	var strLen int
	var strOffs []int32
	switch {
	case width > 0:
		data = newOut(d.alloc, n*width, true).b
	case d.info.kind == kindBool:
		data = newOut(d.alloc, int(bitutil.BytesForBits(int64(n))), false).b
	default: // string
		offsets = newOut(d.alloc, (n+1)*4, true).b
		strOffs = arrow.Int32Traits.CastFromBytes(offsets.Bytes())
		strOffs[0] = 0
		data = memory.NewResizableBuffer(d.alloc)
		if v := d.vals; d.info.kind == kindString && d.pos < d.rows && v.n > 0 && d.idx == nil {
			// Size for the current page's average string, plus slack.
			data.ResizeNoShrink(int(v.offs[v.n]-v.offs[0])/v.n*n*9/8 + 64)
			strData = data.Bytes()
		}
	}
	fail := func(err error) (arrow.Array, error) { return nil, err }
	nulls := 0
	for out := 0; out < n; {
		if d.pos == d.rows {
			if err := d.nextPage(); err != nil {
				return fail(err)
			}
			continue
		}
		k := min(n-out, d.rows-d.pos)
		var def []byte
		if d.def != nil {
			def = d.def[d.pos : d.pos+k]
		}
		// Validity first, for the whole run: eight definition levels per
		// bitmap byte rather than a bit at a time in every value loop.
		if vbits != nil {
			if def != nil {
				packValidity(vbits, out, def)
			} else {
				bitutil.SetBitsTo(vbits, int64(out), int64(k), true)
			}
		}
		var used int
		switch d.info.kind {
		case kindInt32:
			dst := arrow.Int32Traits.CastFromBytes(data.Bytes())[out : out+k]
			used = gather(dst, d.vals.i32, d.idx, d.vpos, def)
		case kindInt64:
			dst := arrow.Int64Traits.CastFromBytes(data.Bytes())[out : out+k]
			used = gather(dst, d.vals.i64, d.idx, d.vpos, def)
			if d.info.mul > 0 || d.info.div > 0 {
				if err := d.scale(dst); err != nil {
					return fail(err)
				}
			}
		case kindInt32To64:
			d.scratch32 = grow(d.scratch32, k)
			used = gather(d.scratch32, d.vals.i32, d.idx, d.vpos, def)
			dst := arrow.Int64Traits.CastFromBytes(data.Bytes())[out : out+k]
			if d.info.unsigned {
				for i, v := range d.scratch32[:k] {
					dst[i] = int64(uint32(v))
				}
			} else {
				for i, v := range d.scratch32[:k] {
					dst[i] = int64(v) * d.info.mul
				}
			}
		case kindInt96:
			d.scratch96 = grow(d.scratch96, k)
			used = gather(d.scratch96, d.vals.i96, d.idx, d.vpos, def)
			dst := arrow.Int64Traits.CastFromBytes(data.Bytes())[out : out+k]
			for i, v := range d.scratch96[:k] {
				us, err := int96Micros(v, d.trunc)
				if err != nil {
					return fail(err)
				}
				dst[i] = us
			}
		case kindFloat16:
			dst := arrow.Float64Traits.CastFromBytes(data.Bytes())[out : out+k]
			used = d.gatherFloat16(dst, def)
		case kindFixed, kindUUID:
			used, strData, strLen = d.gatherFixed(data, strData, strLen, strOffs[out:out+k+1], k, def)
			if strLen > math.MaxInt32 {
				return fail(errors.New("string data of one batch exceeds 2 GiB"))
			}
		case kindDouble:
			dst := arrow.Float64Traits.CastFromBytes(data.Bytes())[out : out+k]
			used = gather(dst, d.vals.f64, d.idx, d.vpos, def)
		case kindFloat:
			d.scratchF = grow(d.scratchF, k)
			used = gather(d.scratchF, d.vals.f32, d.idx, d.vpos, def)
			dst := arrow.Float64Traits.CastFromBytes(data.Bytes())[out : out+k]
			for i, v := range d.scratchF[:k] {
				dst[i] = float64(v)
			}
		case kindDecInt32:
			dst := arrow.Uint64Traits.CastFromBytes(data.Bytes())[2*out : 2*(out+k)]
			used = gatherDecimals(dst, d.vals.i32, d.idx, d.vpos, def)
		case kindDecInt64:
			dst := arrow.Uint64Traits.CastFromBytes(data.Bytes())[2*out : 2*(out+k)]
			used = gatherDecimals(dst, d.vals.i64, d.idx, d.vpos, def)
		case kindDecBytes:
			dst := arrow.Decimal128Traits.CastFromBytes(data.Bytes())[out : out+k]
			used = d.gatherDecBytes(dst, def)
		case kindBool:
			used = d.gatherBool(data.Bytes(), k, def, out)
		case kindString:
			used, strData, strLen = d.gatherStrings(data, strData, strLen, strOffs[out:out+k+1], k, def)
			if strLen > math.MaxInt32 {
				return fail(errors.New("string data of one batch exceeds 2 GiB"))
			}
		}
		if def != nil {
			nulls += k - used
		}
		d.pos += k
		d.vpos += used
		out += k
	}
	isString := d.info.kind == kindString || d.info.kind == kindFixed || d.info.kind == kindUUID
	if isString {
		data.ResizeNoShrink(strLen)
	}
	if nulls == 0 && validity != nil {
		validity.Release()
		validity = nil
	}
	var bufs []*memory.Buffer
	if isString {
		bufs = []*memory.Buffer{validity, offsets, data}
	} else {
		bufs = []*memory.Buffer{validity, data}
	}
	ad := array.NewData(d.info.arrow, n, bufs, nil, nulls, 0)
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
	arr = array.MakeFromData(ad)
	ad.Release()
	return arr, nil
}

// one is the definition level of a present value in a flat optional column.
var one = []byte{1}

// packValidity sets the validity bits of rows out.. whose definition level
// is 1. vbits is zeroed. A flat optional column's levels are 0 or 1 (they
// are decoded with a bit width of 1), so eight of them, read as one
// little-endian word, pack into a bitmap byte with one multiplication.
func packValidity(vbits []byte, out int, def []byte) {
	i := 0
	for ; i < len(def) && (out+i)&7 != 0; i++ {
		if def[i] == 1 {
			bitutil.SetBit(vbits, out+i)
		}
	}
	dst := vbits[(out+i)>>3:]
	j := 0
	for ; i+8 <= len(def); i, j = i+8, j+1 {
		x := binary.LittleEndian.Uint64(def[i:i+8]) & 0x0101010101010101
		dst[j] = byte((x * 0x0102040810204080) >> 56)
	}
	for ; i < len(def); i++ {
		if def[i] == 1 {
			bitutil.SetBit(vbits, out+i)
		}
	}
}

// gatherDecimals writes integers as Decimal128 values (low word, then the
// sign-extended high word) into dst, two words per row; otherwise as gather.
func gatherDecimals[T int32 | int64](dst []uint64, src []T, idx []int32, vpos int, def []byte) int {
	k := len(dst) / 2
	dst = dst[:2*k]
	used := 0
	switch {
	case def == nil && idx == nil:
		for i, v := range src[vpos : vpos+k] {
			x := int64(v)
			dst[2*i] = uint64(x)
			dst[2*i+1] = uint64(x >> 63)
		}
		return k
	case def == nil:
		for i, j := range idx[vpos : vpos+k] {
			x := int64(src[j])
			dst[2*i] = uint64(x)
			dst[2*i+1] = uint64(x >> 63)
		}
		return k
	case idx == nil:
		src = src[vpos:]
		for i, l := range def[:k] {
			var x int64
			if l == 1 {
				x = int64(src[used])
				used++
			}
			dst[2*i] = uint64(x)
			dst[2*i+1] = uint64(x >> 63)
		}
		return used
	}
	idx = idx[vpos:]
	for i, l := range def[:k] {
		var x int64
		if l == 1 {
			x = int64(src[idx[used]])
			used++
		}
		dst[2*i] = uint64(x)
		dst[2*i+1] = uint64(x >> 63)
	}
	return used
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// gather fills dst with len(dst) rows starting at value vpos of src (looked
// up through idx when the page is dictionary-encoded). With definition
// levels, rows whose level is not 1 are NULL and get the zero value. It
// returns how many values it consumed. Validity is packValidity's job.
func gather[T any](dst, src []T, idx []int32, vpos int, def []byte) int {
	k := len(dst)
	if def == nil {
		if idx == nil {
			copy(dst, src[vpos:vpos+k])
		} else {
			for i, j := range idx[vpos : vpos+k] {
				dst[i] = src[j]
			}
		}
		return k
	}
	var zero T
	used := 0
	if idx == nil {
		src = src[vpos:]
		for i, l := range def {
			if l == 1 {
				dst[i] = src[used]
				used++
			} else {
				dst[i] = zero
			}
		}
		return used
	}
	idx = idx[vpos:]
	for i, l := range def {
		if l == 1 {
			dst[i] = src[idx[used]]
			used++
		} else {
			dst[i] = zero
		}
	}
	return used
}

func (d *columnDecoder) value(i int) int {
	if d.idx != nil {
		return int(d.idx[i])
	}
	return i
}

func (d *columnDecoder) gatherBool(dst []byte, k int, def []byte, out int) int {
	used := 0
	for i := 0; i < k; i++ {
		if def != nil && def[i] != 1 {
			continue
		}
		j := d.value(d.vpos + used)
		used++
		if d.vals.bits[j>>3]>>(j&7)&1 != 0 {
			bitutil.SetBit(dst, out+i)
		}
	}
	return used
}

func (d *columnDecoder) gatherDecBytes(dst []decimal128.Num, def []byte) int {
	used := 0
	for i := range dst {
		if def != nil && def[i] != 1 {
			dst[i] = decimal128.Num{}
			continue
		}
		j := d.value(d.vpos + used)
		used++
		var b []byte
		if d.vals.flen > 0 {
			b = d.vals.data[j*d.vals.flen : (j+1)*d.vals.flen]
		} else {
			b = d.vals.data[d.vals.offs[j]:d.vals.offs[j+1]]
		}
		if len(b) > 16 {
			b = b[len(b)-16:]
		}
		dst[i] = decimalFromBigEndian(b)
	}
	return used
}

// gatherStrings appends k rows of strings. offs is the batch's offsets from
// this run's first row; offs[0] is already set. It sizes the data buffer
// once per run, so the per-row loop is a plain copy.
func (d *columnDecoder) gatherStrings(buf *memory.Buffer, data []byte, length int, offs []int32, k int, def []byte) (int, []byte, int) {
	src := d.vals
	// Count the values the run consumes and the bytes they need.
	used := k
	if def != nil {
		used = bytes.Count(def, one)
	}
	need := 0
	if d.idx == nil {
		need = int(src.offs[d.vpos+used] - src.offs[d.vpos])
	} else {
		for _, j := range d.idx[d.vpos : d.vpos+used] {
			need += int(src.offs[j+1] - src.offs[j])
		}
	}
	if length+need > len(data) {
		buf.ResizeNoShrink(max(2*len(data), length+need, 4096))
		data = buf.Bytes()
	}
	if def == nil && d.idx == nil {
		lo, hi := src.offs[d.vpos], src.offs[d.vpos+k]
		copy(data[length:], src.data[lo:hi])
		base := int32(length) - int32(lo)
		for i, o := range src.offs[d.vpos+1 : d.vpos+k+1] {
			offs[i+1] = base + int32(o)
		}
		return k, data, length + int(hi-lo)
	}
	if d.idx == nil {
		// The run's non-null values are contiguous in the page: one copy,
		// then offsets that only advance on non-null rows.
		lo := src.offs[d.vpos]
		copy(data[length:], src.data[lo:src.offs[d.vpos+used]])
		base := int32(length) - int32(lo)
		next := src.offs[d.vpos+1:]
		v := 0
		for i, l := range def {
			if l == 1 {
				v++
			}
			if v > 0 {
				offs[i+1] = base + int32(next[v-1])
			} else {
				offs[i+1] = int32(length)
			}
		}
		return used, data, length + need
	}
	v := d.vpos
	for i := 0; i < k; i++ {
		if def == nil || def[i] == 1 {
			j := v
			if d.idx != nil {
				j = int(d.idx[v])
			}
			v++
			length += copy(data[length:], src.data[src.offs[j]:src.offs[j+1]])
		}
		offs[i+1] = int32(length)
	}
	return used, data, length
}

// scale turns a run of INT64 values into microseconds: milliseconds are
// multiplied (an overflow is an error), nanoseconds divided, exactly unless
// the table truncates. NULL rows hold 0 and pass.
func (d *columnDecoder) scale(dst []int64) error {
	if m := d.info.mul; m > 0 {
		for i, v := range dst {
			if v > math.MaxInt64/m || v < math.MinInt64/m {
				return fmt.Errorf("%w: %d %s is out of range", ErrCorrupt, v, unitName(d.info))
			}
			dst[i] = v * m
		}
		return nil
	}
	q := d.info.div
	for i, v := range dst {
		if r := v % q; r != 0 {
			if !d.trunc {
				return subMicros(d.info, v)
			}
			if r < 0 {
				v -= q // floor: -1 ns is the microsecond before the epoch
			}
		}
		dst[i] = v / q
	}
	return nil
}

func unitName(ci columnInfo) string {
	switch {
	case ci.mul > 0:
		return "milliseconds"
	case ci.div > 0:
		return "nanoseconds"
	}
	return "microseconds"
}

// subMicros is the error for a nanosecond value that microseconds cannot
// hold.
func subMicros(ci columnInfo, ns int64) error {
	shown := time.Unix(0, ns).UTC().Format("2006-01-02 15:04:05.000000000")
	if ci.arrow.ID() == arrow.TIME64 {
		shown = time.Duration(ns).String() + " after midnight"
	}
	return fmt.Errorf("%w: value %s (%d ns) has a sub-microsecond part: fsql's %s holds microseconds, like MySQL's; set parquet.nanos-truncate=true to drop the extra digits",
		ErrUnsupported, shown, ns, SQLTypeName(ci.arrow))
}

// julianEpoch is the Julian day number of 1970-01-01, the day INT96
// timestamps count from.
const julianEpoch = 2440588

// int96Micros converts an INT96 timestamp (nanoseconds within the day,
// then the Julian day, little-endian) to microseconds since the epoch.
func int96Micros(v deprecated.Int96, trunc bool) (int64, error) {
	nanos := int64(v[1])<<32 | int64(v[0])
	day := int64(int32(v[2])) - julianEpoch
	if nanos < 0 || nanos >= 86400e9 {
		return 0, fmt.Errorf("%w: INT96 timestamp with %d nanoseconds in its day", ErrCorrupt, nanos)
	}
	if nanos%1000 != 0 && !trunc {
		return 0, subMicros(columnInfo{arrow: TimestampType}, day*86400e9+nanos)
	}
	return day*86400e6 + nanos/1000, nil
}

// gatherFloat16 decodes half-precision floats.
func (d *columnDecoder) gatherFloat16(dst []float64, def []byte) int {
	used := 0
	for i := range dst {
		if def != nil && def[i] != 1 {
			dst[i] = 0
			continue
		}
		j := d.value(d.vpos + used)
		used++
		dst[i] = halfToFloat(binary.LittleEndian.Uint16(d.vals.data[j*2:]))
	}
	return used
}

// halfToFloat converts an IEEE 754 binary16 value.
func halfToFloat(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp := int(h>>10) & 0x1f
	frac := float64(h & 0x3ff)
	switch exp {
	case 0:
		return sign * math.Ldexp(frac, -24)
	case 0x1f:
		if frac != 0 {
			return math.NaN()
		}
		return math.Inf(int(sign))
	}
	return sign * math.Ldexp(1+frac/1024, exp-15)
}

// gatherFixed appends k rows of fixed-length values as strings: the raw
// bytes, or a UUID's canonical text.
func (d *columnDecoder) gatherFixed(buf *memory.Buffer, data []byte, length int, offs []int32, k int, def []byte) (int, []byte, int) {
	w := d.vals.flen
	if d.info.kind == kindUUID {
		w = 36
	}
	if need := length + k*w; need > len(data) {
		buf.ResizeNoShrink(max(2*len(data), need, 4096))
		data = buf.Bytes()
	}
	used := 0
	for i := 0; i < k; i++ {
		if def == nil || def[i] == 1 {
			j := d.value(d.vpos + used)
			used++
			v := d.vals.data[j*d.vals.flen : (j+1)*d.vals.flen]
			if d.info.kind == kindUUID {
				appendUUID(data[length:length], v)
				length += 36
			} else {
				length += copy(data[length:], v)
			}
		}
		offs[i+1] = int32(length)
	}
	return used, data, length
}

// appendUUID appends the 8-4-4-4-12 lowercase hex form of a 16-byte UUID.
func appendUUID(dst, b []byte) []byte {
	const hexDigits = "0123456789abcdef"
	for i, c := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			dst = append(dst, '-')
		}
		dst = append(dst, hexDigits[c>>4], hexDigits[c&0xf])
	}
	return dst
}
