package pruning

import (
	"fmt"
	"hash/fnv"
	"io"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/internal/proctest"
)

// TestHashesAgreeAcrossProcesses: a dynamic filter's bloom filter is
// built from the keys collector tasks send and tested by scan tasks,
// which may run in another process, so a fresh process must compute the
// same hashes and set the same bloom bits for the same keys.
func TestHashesAgreeAcrossProcesses(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	d := fnv.New64a()
	for _, s := range []string{"", "a", "Books", "AAAAAAAABAAA", "naïve", "a longer key of more than sixteen bytes"} {
		fmt.Fprintf(d, "%x,", hashString(s))
	}
	for _, v := range []int64{0, 1, -1, 2451545, 1 << 40} {
		fmt.Fprintf(d, "%x,", hashInt(v))
	}
	// Filters degraded to blooms through the collectors' own path (more
	// keys than maxValues). 30 keys stay within the first layer, so the
	// bits do not depend on the order the exact set is moved in.
	sb := array.NewStringBuilder(mem)
	ib := array.NewInt64Builder(mem)
	for i := range 30 {
		sb.Append(fmt.Sprintf("AAAAAAAA%04dAAA", i*37))
		ib.Append(int64(i) * 7919)
	}
	strs, ints := sb.NewArray(), ib.NewArray()
	sb.Release()
	ib.Release()
	defer strs.Release()
	defer ints.Release()
	for _, keys := range []arrow.Array{strs, ints} {
		k := &keyBuilder{maxValues: 4}
		if err := k.add(keys); err != nil {
			t.Fatal(err)
		}
		digestBloom(t, d, k)
	}
	proctest.Agree(t, fmt.Sprintf("%x", d.Sum64()))
}

func digestBloom(t *testing.T, d io.Writer, k *keyBuilder) {
	t.Helper()
	if k.bloom == nil || len(k.bloom.layers) != 1 {
		t.Fatalf("want a one-layer bloom filter, got %+v", k.bloom)
	}
	for _, blk := range k.bloom.layers[0].blocks {
		fmt.Fprintf(d, "%x.", blk)
	}
}
