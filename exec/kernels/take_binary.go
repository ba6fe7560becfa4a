package kernels

import (
	"encoding/binary"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/internal/mempool"

	"github.com/fsql-dev/fsql/errs"
)

// takeVarBinary gathers a string or binary column with offsets of type O:
// one pass sums the gathered lengths so the data buffer is allocated once,
// a second writes offsets and copies bytes, by runs of consecutive rows
// when the first pass saw that at least a quarter of the rows continue the
// row before them. A NULL row has length zero.
func takeVarBinary[O int32 | int64](alloc memory.Allocator, a arrow.Array, idx []int32, neg bool) (arrow.Array, error) {
	d := a.Data()
	n := len(idx)
	var offs []O
	var data []byte
	if a.Len() > 0 {
		offs = arrow.GetData[O](d.Buffers()[1].Bytes())[d.Offset() : d.Offset()+d.Len()+1]
		if d.Buffers()[2] != nil {
			data = d.Buffers()[2].Bytes()
		}
	}
	total, follows := 0, 0
	prev := int32(-2)
	for _, j := range idx {
		if j >= 0 {
			total += int(offs[j+1] - offs[j])
			if j == prev+1 {
				follows++
			}
		}
		prev = j
	}
	var zero O
	if _, ok := any(zero).(int32); ok && total > math.MaxInt32 {
		return nil, errs.New(errs.Resources, "gathering %d rows of a %s column gives %d bytes, more than one array of that type can hold (2 GiB); use smaller batches", n, a.DataType(), total)
	}
	// Every offset and every data byte is written below.
	ob := mempool.Buffer(alloc, (n+1)*sizeOf[O]())
	dst := arrow.GetData[O](ob.Bytes())
	vb := mempool.Buffer(alloc, total+copySlack)
	out := vb.Bytes()
	dst[0] = 0
	if follows*4 < n {
		copyRows(dst, out, offs, data, idx)
	} else {
		copyRuns(dst, out, offs, data, idx)
	}
	nb, nulls := takeValidity(alloc, a, idx, neg)
	return newArray(a.DataType(), n, nb, ob, vb, nulls), nil
}

// copySlack is the spare room at the end of a gathered data buffer, so
// copyRows may store whole words past the last row's bytes.
const copySlack = 16

// copyRows copies rows idx of (offs, data) one at a time into out and
// writes their end offsets to dst[1:]: the loop for scattered rows (a build
// side gathered in probe order), which seldom form runs.
func copyRows[O int32 | int64](dst []O, out []byte, offs []O, data []byte, idx []int32) {
	pos := O(0)
	for i, j := range idx {
		if j >= 0 {
			s, e := offs[j], offs[j+1]
			if e-s <= 16 && int(s)+16 <= len(data) {
				// A short string moves as two words: cheaper than the call
				// to memmove. The bytes past its end are overwritten by the
				// rows after it or lie in the buffer's slack (copySlack,
				// so out always has the room).
				w0 := binary.LittleEndian.Uint64(data[s:])
				w1 := binary.LittleEndian.Uint64(data[s+8:])
				binary.LittleEndian.PutUint64(out[pos:], w0)
				binary.LittleEndian.PutUint64(out[pos+8:], w1)
			} else {
				copy(out[pos:], data[s:e])
			}
			pos += e - s
		}
		dst[i+1] = pos
	}
}

// copyRuns is copyRows for rows that mostly come in runs of consecutive
// source rows (a probe side most of whose rows matched, a filter that keeps
// most rows): a run is one copy of its bytes and a shift of its offsets,
// not one small memmove per row, whose call costs more than a short
// string's bytes.
func copyRuns[O int32 | int64](dst []O, out []byte, offs []O, data []byte, idx []int32) {
	pos := O(0)
	n := len(idx)
	for i := 0; i < n; i++ {
		j := idx[i]
		if j < 0 {
			dst[i+1] = pos
			continue
		}
		k := i + 1
		for k < n && idx[k] == idx[k-1]+1 {
			k++
		}
		last := int(j) + k - i
		s, e := offs[j], offs[last]
		copy(out[pos:], data[s:e])
		shift := pos - s
		for r, o := range offs[j+1 : last+1] {
			dst[i+1+r] = o + shift
		}
		pos += e - s
		i = k - 1
	}
}

func sizeOf[O int32 | int64]() int {
	var o O
	if _, ok := any(o).(int32); ok {
		return 4
	}
	return 8
}
