package tpcds

import "testing"

func TestSchemaPrint(t *testing.T) {
	tabs := buildTables()
	if len(tabs) != 24 {
		t.Fatalf("tables: %d", len(tabs))
	}
	t.Log(tabs["store_sales"].parquetSchema(0))
	t.Log(tabs["promotion"].parquetSchema(-1))
	t.Log(tabs["date_dim"].parquetSchema(-1))
}
