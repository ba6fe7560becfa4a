package fsql_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/fsql-dev/fsql"
	"github.com/fsql-dev/fsql/internal/format"
)

// TestDatetimeColumns runs DATETIME, TIMESTAMP, TIME and BIGINT UNSIGNED
// columns read from Parquet (and DATETIME from CSV) through the operators
// that key, compare, sort and aggregate them, end to end.
func TestDatetimeColumns(t *testing.T) {
	dir := t.TempDir()
	us := func(s string) int64 {
		v, err := time.Parse("2006-01-02 15:04:05.999999", s)
		if err != nil {
			t.Fatal(err)
		}
		return v.UnixMicro()
	}
	g := parquet.Group{
		"id": parquet.Int(32),
		"dt": parquet.Optional(parquet.TimestampAdjusted(parquet.Microsecond, false)), // DATETIME
		"ts": parquet.Optional(parquet.Timestamp(parquet.Millisecond)),                // TIMESTAMP
		"tm": parquet.Optional(parquet.Time(parquet.Microsecond)),                     // TIME
		"u":  parquet.Optional(parquet.Uint(64)),                                      // BIGINT UNSIGNED
	}
	// Columns in name order: dt, id, tm, ts, u.
	writeGroup(t, filepath.Join(dir, "ev", "a.parquet"), g,
		[]any{us("2020-01-02 03:04:05"), int32(1), int64(3600e6), us("2020-01-02 03:04:05") / 1000, int64(-1)},
		[]any{us("2020-01-02 03:04:05.25"), int32(2), int64(5e6), us("2020-01-02 03:04:06") / 1000, int64(7)},
		[]any{nil, int32(3), nil, nil, nil},
		[]any{us("2019-12-31 23:59:59"), int32(4), int64(86399e6), us("2019-12-31 23:59:59") / 1000, int64(2)})
	writeText(t, filepath.Join(dir, "csvev", "a.csv"), "id,at\n1,2020-01-02 03:04:05\n2,2020-01-02 03:04:05.25\n3,\n")
	eng, err := fsql.Open(dir, fsql.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ q, want string }{
		{"select id, dt, ts, tm, u from ev order by id",
			"1 2020-01-02 03:04:05 2020-01-02 03:04:05 01:00:00 18446744073709551615|2 2020-01-02 03:04:05.250000 2020-01-02 03:04:06 00:00:05 7|3 NULL NULL NULL NULL|4 2019-12-31 23:59:59 2019-12-31 23:59:59 23:59:59 2"},
		{"select id from ev where dt = ts order by id", "1|4"},
		{"select id from ev where dt > '2020-01-01' and ts < timestamp '2020-01-02 03:04:06' order by id", "1"},
		{"select id from ev where tm between '00:00:01' and '02:00:00' order by id", "1|2"},
		{"select a.id, b.id from ev a join ev b on a.dt = b.ts order by 1", "1 1|4 4"},
		{"select cast(dt as date) d, count(*), max(ts), min(tm), sum(u) from ev group by cast(dt as date) order by d",
			"NULL 1 NULL NULL NULL|2019-12-31 1 2019-12-31 23:59:59 23:59:59 2|2020-01-02 2 2020-01-02 03:04:06 00:00:05 18446744073709551622"},
		{"select id, ts - interval 1 second, extract(second from dt), date_format(ts, '%H:%i:%s') from ev where id < 3 order by id",
			"1 2020-01-02 03:04:04 5 03:04:05|2 2020-01-02 03:04:05 5 03:04:06"},
		{"select id, count(*) over (order by ts range between interval 1 second preceding and current row) from ev order by id", "1 1|2 2|3 1|4 1"},
		{"select distinct dt from ev where id in (1, 2, 4) order by dt desc", "2020-01-02 03:04:05.250000|2020-01-02 03:04:05|2019-12-31 23:59:59"},
		{"select bit_or(u), bit_and(u) from ev", "18446744073709551615 2"},
		{"select id, u > 5, u + 1 from ev where u is not null order by u", "4 0 3|2 1 8|1 1 18446744073709551616"},
		{"select id, at, at = ev.dt from csvev join ev using (id) order by id", "1 2020-01-02 03:04:05 1|2 2020-01-02 03:04:05.250000 1|3 NULL NULL"},
	} {
		if got := strings.Join(rowsText(t, eng, c.q), "|"); got != c.want {
			t.Errorf("%s\n got: %s\nwant: %s", c.q, got, c.want)
		}
	}
}

// rowsText runs q and renders each row as the table format does, values
// joined by spaces.
func rowsText(t *testing.T, eng *fsql.Engine, q string) []string {
	t.Helper()
	rows, err := eng.Query(context.Background(), q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		for _, r := range format.Rows(rows.RecordBatch()) {
			out = append(out, strings.Join(r, " "))
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return out
}
