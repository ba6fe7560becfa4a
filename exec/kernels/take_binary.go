package kernels

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/internal/mempool"

	"github.com/fsql-dev/fsql/errs"
)

// takeVarBinary gathers a string or binary column with offsets of type O:
// one pass sums the gathered lengths so the data buffer is allocated once,
// a second writes offsets and copies bytes. A NULL row has length zero.
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
	total := 0
	for _, j := range idx {
		if j >= 0 {
			total += int(offs[j+1] - offs[j])
		}
	}
	var zero O
	if _, ok := any(zero).(int32); ok && total > math.MaxInt32 {
		return nil, errs.New(errs.Resources, "gathering %d rows of a %s column gives %d bytes, more than one array of that type can hold (2 GiB); use smaller batches", n, a.DataType(), total)
	}
	// Every offset and every data byte is written below.
	ob := mempool.Buffer(alloc, (n+1)*sizeOf[O]())
	dst := arrow.GetData[O](ob.Bytes())
	vb := mempool.Buffer(alloc, total)
	out := vb.Bytes()
	pos := O(0)
	dst[0] = 0
	for i, j := range idx {
		if j >= 0 {
			s, e := offs[j], offs[j+1]
			copy(out[pos:], data[s:e])
			pos += e - s
		}
		dst[i+1] = pos
	}
	nb, nulls := takeValidity(alloc, a, idx, neg)
	return newArray(a.DataType(), n, nb, ob, vb, nulls), nil
}

func sizeOf[O int32 | int64]() int {
	var o O
	if _, ok := any(o).(int32); ok {
		return 4
	}
	return 8
}
