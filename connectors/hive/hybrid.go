package hive

import (
	"encoding/binary"
	"fmt"

	"github.com/parquet-go/bitpack"
)

// Parquet's RLE / bit-packing hybrid encoding carries definition levels,
// dictionary indexes and RLE booleans: a sequence of runs, each either one
// value repeated (header count<<1) or groups of eight bit-packed values
// (header groups<<1 | 1). The decoders here produce exactly the number of
// values the page header promises, never more, so a run claiming two
// billion values costs nothing but an error; bit unpacking itself is
// parquet-go's bitpack, in assembly on amd64 and arm64.

// decodeLevels decodes n definition levels of bit width 1 into dst.
func decodeLevels(dst []byte, src []byte, n int) ([]byte, error) {
	dst = grow(dst, n)
	out := 0
	for i := 0; out < n; {
		if i >= len(src) {
			return dst, fmt.Errorf("definition levels end after %d of %d values", out, n)
		}
		h, k := binary.Uvarint(src[i:])
		if k <= 0 {
			return dst, fmt.Errorf("bad run header in definition levels")
		}
		i += k
		if h&1 == 0 { // a run
			count := h >> 1
			if i >= len(src) {
				return dst, fmt.Errorf("definition level run without its value")
			}
			v := src[i] & 1
			if src[i] > 1 {
				return dst, fmt.Errorf("definition level %d in a flat column", src[i])
			}
			i++
			m := int(min(count, uint64(n-out)))
			fillLevels(dst[out:out+m], v)
			out += m
			continue
		}
		groups := h >> 1
		if groups > uint64(len(src)-i) {
			return dst, fmt.Errorf("bit-packed definition levels past the page")
		}
		// One byte holds eight levels, least significant bit first.
		for g := 0; g < int(groups) && out < n; g++ {
			b := src[i+g]
			if n-out >= 8 {
				binary.LittleEndian.PutUint64(dst[out:], spreadBits[b])
				out += 8
				continue
			}
			for j := 0; out < n; j++ {
				dst[out] = b >> j & 1
				out++
			}
		}
		i += int(groups)
	}
	return dst, nil
}

// decodeBitPackedLevels decodes the deprecated BIT_PACKED level encoding
// (width 1): bits packed from the most significant bit of each byte.
func decodeBitPackedLevels(dst []byte, src []byte, n int) ([]byte, int, error) {
	need := (n + 7) / 8
	if need > len(src) {
		return dst, 0, fmt.Errorf("bit-packed definition levels past the page")
	}
	dst = grow(dst, n)
	for i := range n {
		dst[i] = src[i>>3] >> (7 - i&7) & 1
	}
	return dst, need, nil
}

// spreadBits[b] is the eight bits of b as eight bytes (0 or 1), least
// significant bit first, as a little-endian word.
var spreadBits = func() (t [256]uint64) {
	for b := range t {
		for j := range 8 {
			t[b] |= uint64(b>>j&1) << (8 * j)
		}
	}
	return
}()

// fillLevels sets every level of s to v (0 or 1) eight bytes a store:
// runs are often short (a run of present rows between two NULLs), so no
// memmove call, and a byte-at-a-time loop was 1.5% of the star
// statements' CPU on the flat layout.
func fillLevels(s []byte, v byte) {
	w := uint64(v) * 0x0101010101010101
	i := 0
	for ; i+8 <= len(s); i += 8 {
		binary.LittleEndian.PutUint64(s[i:], w)
	}
	for ; i < len(s); i++ {
		s[i] = v
	}
}

func fill[T any](s []T, v T) {
	for i := range s {
		s[i] = v
	}
}

// decodeIndexes decodes n dictionary indexes of the given bit width.
func decodeIndexes(dst []int32, src []byte, bitWidth uint, n int) ([]int32, error) {
	if bitWidth > 32 {
		return dst, fmt.Errorf("dictionary indexes of %d bits", bitWidth)
	}
	dst = grow(dst, n)
	out := 0
	width := int(bitWidth+7) / 8 // bytes of a run's value
	var pad [8*32/8 + bitpack.PaddingInt32]byte
	for i := 0; out < n; {
		if i >= len(src) {
			return dst, fmt.Errorf("dictionary indexes end after %d of %d values", out, n)
		}
		h, k := binary.Uvarint(src[i:])
		if k <= 0 {
			return dst, fmt.Errorf("bad run header in dictionary indexes")
		}
		i += k
		if h&1 == 0 {
			count := h >> 1
			if width > len(src)-i {
				return dst, fmt.Errorf("dictionary index run without its value")
			}
			var v uint32
			for j := range width {
				v |= uint32(src[i+j]) << (8 * j)
			}
			i += width
			m := int(min(count, uint64(n-out)))
			fill(dst[out:out+m], int32(v))
			out += m
			continue
		}
		groups := h >> 1
		size := uint64(bitWidth) // bytes per group of eight
		if groups > uint64(len(src)-i)/max(size, 1) {
			return dst, fmt.Errorf("bit-packed dictionary indexes past the page")
		}
		m := int(min(groups*8, uint64(n-out)))
		if bitWidth == 0 {
			fill(dst[out:out+m], 0)
		} else {
			run := src[i : i+int(groups*size)]
			// bitpack reads up to PaddingInt32 bytes past what it
			// unpacks: unpack the bulk in place while that much input
			// follows, and the last groups from a padded copy.
			bulk := 0
			if safe := len(src) - i - bitpack.PaddingInt32; safe > 0 {
				bulk = min(m/8, safe/int(size)) * 8
			}
			if bulk > 0 {
				bitpack.Unpack(dst[out:out+bulk], src[i:], bitWidth)
			}
			for done := bulk; done < m; done += 8 {
				g := done / 8
				copy(pad[:], run[g*int(size):(g+1)*int(size)])
				var eight [8]int32
				bitpack.Unpack(eight[:], pad[:], bitWidth)
				copy(dst[out+done:out+m], eight[:])
			}
		}
		out += m
		i += int(groups * size)
	}
	return dst, nil
}
