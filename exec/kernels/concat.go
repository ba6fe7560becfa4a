package kernels

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/internal/mempool"
)

// Concat appends arrays of one type into one new array allocated from
// alloc. Fixed-width, boolean and string or binary columns (and extension
// types over them) are copied part by part into buffers the pool need not
// clear first (mempool.Buffer), since every byte is written; arrow's
// Concatenate cleared them, which with the copy was 7% of q78's CPU
// samples (its hash joins and sorts gather their inputs this way). Other
// layouts go through array.Concatenate.
func Concat(alloc memory.Allocator, parts []arrow.Array) (arrow.Array, error) {
	if len(parts) == 0 {
		return nil, errs.New(errs.Internal, "concatenating no arrays")
	}
	dt := parts[0].DataType()
	if ext, ok := dt.(arrow.ExtensionType); ok {
		st := make([]arrow.Array, len(parts))
		for i, p := range parts {
			e, ok := p.(array.ExtensionArray)
			if !ok || !arrow.TypeEqual(p.DataType(), dt) {
				return nil, errs.New(errs.Internal, "concatenating a %s array to %s arrays", p.DataType(), dt)
			}
			st[i] = e.Storage()
		}
		s, err := Concat(alloc, st)
		if err != nil {
			return nil, err
		}
		defer s.Release()
		return array.NewExtensionArrayWithStorage(ext, s), nil
	}
	n, nulls := 0, 0
	for _, p := range parts {
		if !arrow.TypeEqual(p.DataType(), dt) {
			return nil, errs.New(errs.Internal, "concatenating a %s array to %s arrays", p.DataType(), dt)
		}
		n += p.Len()
		nulls += p.NullN()
	}
	switch dt.ID() {
	case arrow.BOOL:
		vb := mempool.Buffer(alloc, int(bitutil.BytesForBits(int64(n))))
		dst := vb.Bytes()
		clear(dst)
		pos := 0
		for _, p := range parts {
			if p.Len() > 0 {
				bitutil.CopyBitmap(p.Data().Buffers()[1].Bytes(), p.Data().Offset(), p.Len(), dst, pos)
			}
			pos += p.Len()
		}
		return newArray(dt, n, concatValidity(alloc, parts, n, nulls), vb, nil, nulls), nil
	case arrow.STRING, arrow.BINARY:
		return concatVarBinary(alloc, dt, parts, n, nulls)
	case arrow.DICTIONARY, arrow.NULL, arrow.EXTENSION:
	default:
		if fw, ok := dt.(arrow.FixedWidthDataType); ok && fw.Bytes() > 0 && fw.BitWidth()%8 == 0 {
			w := fw.Bytes()
			vb := mempool.Buffer(alloc, n*w)
			dst := vb.Bytes()
			pos := 0
			for _, p := range parts {
				d := p.Data()
				if p.Len() > 0 {
					copy(dst[pos*w:], d.Buffers()[1].Bytes()[d.Offset()*w:(d.Offset()+d.Len())*w])
				}
				pos += p.Len()
			}
			return newArray(dt, n, concatValidity(alloc, parts, n, nulls), vb, nil, nulls), nil
		}
	}
	out, err := array.Concatenate(parts, alloc)
	if err != nil {
		return nil, errs.Wrap(errs.Internal, "concatenating %s arrays: %w", dt, err)
	}
	return out, nil
}

// concatValidity is the validity bitmap of the concatenated parts, nil
// when none holds a NULL.
func concatValidity(alloc memory.Allocator, parts []arrow.Array, n, nulls int) *memory.Buffer {
	if nulls == 0 {
		return nil
	}
	nb := mempool.Buffer(alloc, int(bitutil.BytesForBits(int64(n))))
	dst := nb.Bytes()
	clear(dst)
	pos := 0
	for _, p := range parts {
		if bits, off := validityOf(p); bits != nil {
			bitutil.CopyBitmap(bits, off, p.Len(), dst, pos)
		} else if p.Len() > 0 {
			bitutil.SetBitsTo(dst, int64(pos), int64(p.Len()), true)
		}
		pos += p.Len()
	}
	return nb
}

// concatVarBinary concatenates string or binary parts: offsets rebased
// part by part, bytes copied once.
func concatVarBinary(alloc memory.Allocator, dt arrow.DataType, parts []arrow.Array, n, nulls int) (arrow.Array, error) {
	total := 0
	for _, p := range parts {
		if p.Len() > 0 {
			d := p.Data()
			offs := arrow.Int32Traits.CastFromBytes(d.Buffers()[1].Bytes())[d.Offset() : d.Offset()+d.Len()+1]
			total += int(offs[len(offs)-1] - offs[0])
		}
	}
	if total > math.MaxInt32 {
		return nil, errs.New(errs.Resources, "concatenating %d rows of a %s column gives %d bytes, more than one array of that type can hold (2 GiB)", n, dt, total)
	}
	ob := mempool.Buffer(alloc, 4*(n+1))
	vb := mempool.Buffer(alloc, total)
	dstOffs := arrow.Int32Traits.CastFromBytes(ob.Bytes())
	data := vb.Bytes()
	pos, at := 0, int32(0)
	dstOffs[0] = 0
	for _, p := range parts {
		if p.Len() == 0 {
			continue
		}
		d := p.Data()
		offs := arrow.Int32Traits.CastFromBytes(d.Buffers()[1].Bytes())[d.Offset() : d.Offset()+d.Len()+1]
		base := offs[0]
		for i, o := range offs[1:] {
			dstOffs[pos+i+1] = at + o - base
		}
		if end := offs[len(offs)-1]; end > base {
			copy(data[at:], d.Buffers()[2].Bytes()[base:end])
			at += end - base
		}
		pos += p.Len()
	}
	return newArray(dt, n, concatValidity(alloc, parts, n, nulls), ob, vb, nulls), nil
}
