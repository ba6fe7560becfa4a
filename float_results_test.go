package fsql_test

import (
	"context"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/fsql-dev/fsql"
)

// TestRowsPositiveZeros: a DOUBLE -0 reaches a program through Rows as 0,
// as a MySQL client receives it; NULLs and other values stay.
func TestRowsPositiveZeros(t *testing.T) {
	eng, err := fsql.Open(t.TempDir(), fsql.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	rows, err := eng.Query(context.Background(), "select 0e0 * -1 as z, cast(null as double) as n, -1.5e0 as v")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	if !rows.Next() {
		t.Fatal(rows.Err())
	}
	b := rows.RecordBatch()
	z, n, v := b.Column(0).(*array.Float64), b.Column(1).(*array.Float64), b.Column(2).(*array.Float64)
	if got := z.Value(0); got != 0 || math.Signbit(got) {
		t.Errorf("0e0 * -1 = %v (sign bit %v), want +0", got, math.Signbit(got))
	}
	if !n.IsNull(0) || v.Value(0) != -1.5 {
		t.Errorf("NULL and -1.5 changed: %v %v", n, v)
	}
}
