package sql

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

func TestMySQLType(t *testing.T) {
	for _, c := range []struct {
		t    arrow.DataType
		want string // "" for no spelling
	}{
		{arrow.PrimitiveTypes.Int8, "tinyint"},
		{arrow.PrimitiveTypes.Int16, "smallint"},
		{arrow.PrimitiveTypes.Int32, "int"},
		{arrow.PrimitiveTypes.Int64, "bigint"},
		{arrow.PrimitiveTypes.Uint64, "bigint unsigned"},
		{arrow.PrimitiveTypes.Float32, "float"},
		{arrow.PrimitiveTypes.Float64, "double"},
		{&arrow.Decimal128Type{Precision: 7, Scale: 2}, "decimal(7,2)"},
		{&arrow.Decimal128Type{Precision: 38}, "decimal(38,0)"},
		{arrow.BinaryTypes.String, "longtext"},
		{arrow.BinaryTypes.Binary, "longblob"},
		{arrow.FixedWidthTypes.Date32, "date"},
		{arrow.FixedWidthTypes.Boolean, "boolean"},
		{&arrow.TimestampType{Unit: arrow.Microsecond}, "datetime(6)"},
		{&arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, "timestamp(6)"},
		{&arrow.TimestampType{Unit: arrow.Second}, "datetime"},
		{&arrow.TimestampType{Unit: arrow.Nanosecond}, ""},
		{arrow.FixedWidthTypes.Time64us, "time(6)"},
		{arrow.FixedWidthTypes.Time32ms, "time(3)"},
		{arrow.ListOf(arrow.PrimitiveTypes.Int32), ""},
	} {
		got, ok := mysqlType(c.t)
		if !ok {
			got = ""
		}
		if got != c.want {
			t.Errorf("mysqlType(%s) = %q, want %q", c.t, got, c.want)
		}
	}
}

func TestStatementKind(t *testing.T) {
	for _, q := range []struct{ sql, want string }{
		{"create table t (a int)", "CREATE TABLE statements"},
		{"insert into t values (1)", "INSERT statements"},
		{"drop table t", "DROP TABLE statements"},
	} {
		stmts, err := Parse(q.sql)
		if err != nil {
			t.Fatal(err)
		}
		if got := statementKind(stmts[0]); got != q.want {
			t.Errorf("%s: %q, want %q", q.sql, got, q.want)
		}
	}
}

func TestDashedSetKeyHint(t *testing.T) {
	for _, c := range []struct{ sql, want string }{
		{"set execution.memory.query-budget = '1gb'", "execution.memory.query-budget"},
		{"select 1; SET session pipeline.max-parallelism := 4", "pipeline.max-parallelism"},
		{"set @@session.csv.field-delimiter = ';'", "csv.field-delimiter"},
		{"select a-b from t where", ""},
		{"set a = b-c x", ""},
		{"set csv.header = on, csv.field-delimiter = tab", "csv.field-delimiter"},
		{"set a = 1; select x-y, z-w = 1 from t", ""},
	} {
		if got := dashedSetKey(c.sql); got != c.want {
			t.Errorf("%s: %q, want %q", c.sql, got, c.want)
		}
	}
}
