package fsql_test

import (
	"context"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// A boolean result is MySQL's INT 0/1 in the library's Rows, and in the
// table a comparison is written to (MySQL's int(1)).
func TestBoolResultsAreInts(t *testing.T) {
	eng, _ := writeEngine(t, 4)
	rows, err := eng.Query(context.Background(), "select id, id > 2 as big, if(id = 4, null, id = 1) as one from src")
	if err != nil {
		t.Fatal(err)
	}
	var types []arrow.DataType
	for _, f := range rows.Schema().Fields() {
		types = append(types, f.Type)
	}
	for rows.Next() {
		b := rows.RecordBatch()
		for i, c := range b.Columns() {
			if !arrow.TypeEqual(c.DataType(), types[i]) {
				t.Errorf("column %d: batch type %s, schema type %s", i, c.DataType(), types[i])
			}
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if want := []arrow.DataType{arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int32}; !slices.EqualFunc(types, want, func(a, b arrow.DataType) bool { return arrow.TypeEqual(a, b) }) {
		t.Errorf("result types %v, want %v", types, want)
	}
	if got, want := sorted(t, eng, "select id, id > 2, if(id = 4, null, id = 1) from src"), []string{"1\t0\t1", "2\t0\t0", "3\t1\t0", "4\t1\tNULL"}; !slices.Equal(got, want) {
		t.Errorf("rows %q, want %q", got, want)
	}

	mustExec(t, eng, "create table flags as select id, id > 2 as big from src")
	if got, want := sorted(t, eng, "describe flags"), []string{"big\tint\tYES\t(empty)\tNULL\t(empty)", "id\tint\tYES\t(empty)\tNULL\t(empty)"}; !slices.Equal(got, want) {
		t.Errorf("describe flags: %q, want %q", got, want)
	}
	if got, want := sorted(t, eng, "select id, big, big + 1 from flags where big"), []string{"3\t1\t2", "4\t1\t2"}; !slices.Equal(got, want) {
		t.Errorf("rows %q, want %q", got, want)
	}
}
