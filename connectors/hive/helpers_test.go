package hive

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
)

// writeParquet writes rows to path with the given schema. Row values are in
// the schema's column order (parquet.Group sorts fields by name); nil is NULL.
// Go values map to Parquet values: int32, int64, float32, float64, bool,
// string (BYTE_ARRAY), []byte (FIXED_LEN_BYTE_ARRAY).
func writeParquet(tb testing.TB, path string, group parquet.Group, rows [][]any, opts ...parquet.WriterOption) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	schema := parquet.NewSchema("t", group)
	w := parquet.NewWriter(f, append([]parquet.WriterOption{schema}, opts...)...)
	b := parquet.NewRowBuilder(group)
	batch := make([]parquet.Row, 0, 1024)
	flush := func() {
		if _, err := w.WriteRows(batch); err != nil {
			tb.Fatal(err)
		}
		batch = batch[:0]
	}
	for _, r := range rows {
		b.Reset()
		for c, v := range r {
			if v == nil {
				continue
			}
			b.Add(c, toValue(tb, v))
		}
		batch = append(batch, b.Row())
		if len(batch) == cap(batch) {
			flush()
		}
	}
	flush()
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
}

func toValue(tb testing.TB, v any) parquet.Value {
	switch v := v.(type) {
	case int32:
		return parquet.Int32Value(v)
	case int64:
		return parquet.Int64Value(v)
	case float32:
		return parquet.FloatValue(v)
	case float64:
		return parquet.DoubleValue(v)
	case bool:
		return parquet.BooleanValue(v)
	case string:
		return parquet.ByteArrayValue([]byte(v))
	case []byte:
		return parquet.FixedLenByteArrayValue(v)
	}
	tb.Fatalf("no parquet value for %T", v)
	return parquet.Value{}
}

func name(i int) string { return fmt.Sprintf("name-%03d", i%37) }

func mustDate(s string) time.Time {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return t
}
