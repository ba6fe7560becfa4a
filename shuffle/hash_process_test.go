package shuffle

import (
	"fmt"
	"hash/fnv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/internal/proctest"
	"github.com/fsql-dev/fsql/shuffle/keygroup"
)

// TestKeyGroupsAgreeAcrossProcesses: a hash exchange's producers route
// each row to a key group and its consumers read key-group ranges, so a
// producer in another process must compute the same key group for the
// same key: the hash (exec.HashColumns) and the key-group assignment are
// fixed functions of the key, of every type a key can have.
func TestKeyGroupsAgreeAcrossProcesses(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	const n = 64
	i32 := array.NewInt32Builder(mem)
	i64 := array.NewInt64Builder(mem)
	str := array.NewStringBuilder(mem)
	dec := array.NewDecimal128Builder(mem, &arrow.Decimal128Type{Precision: 12, Scale: 2})
	f64 := array.NewFloat64Builder(mem)
	day := array.NewDate32Builder(mem)
	for i := range n {
		if i%9 == 0 {
			for _, b := range []array.Builder{i32, i64, str, dec, f64, day} {
				b.AppendNull()
			}
			continue
		}
		i32.Append(int32(i*31 - 500))
		i64.Append(int64(i) * 1e12)
		str.Append(fmt.Sprintf("AAAAAAAA%04dAAA", i))
		dec.Append(decimal128.FromI64(int64(i)*1234 - 9999))
		f64.Append(float64(i) / 3)
		day.Append(arrow.Date32(2451545 + i))
	}
	coll, err := expr.LookupCollation("utf8mb4_general_ci")
	if err != nil {
		t.Fatal(err)
	}
	var cols []arrow.Array
	for _, b := range []array.Builder{i32, i64, str, dec, f64, day} {
		cols = append(cols, b.NewArray())
		b.Release()
	}
	cols[2].Retain() // Collated takes over a reference
	cols = append(cols, expr.Collated(coll.Type(), cols[2]))
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	d := fnv.New64a()
	h := make([]uint32, n)
	keys := [][]arrow.Array{{cols[0]}, {cols[1]}, {cols[2]}, {cols[3]}, {cols[4]}, {cols[5]}, {cols[6]}, {cols[1], cols[2]}, {cols[5], cols[3], cols[0]}}
	for _, k := range keys {
		exec.HashColumns(k, h)
		for _, x := range h {
			kg := keygroup.ForHash(x, 128)
			fmt.Fprintf(d, "%x:%d:%d,", x, kg, keygroup.OperatorIndex(kg, 3, 128))
		}
	}
	proctest.Agree(t, fmt.Sprintf("%x", d.Sum64()))
}
