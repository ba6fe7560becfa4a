// Package hive reads Hive-partitioned Parquet tables.
//
// A data directory holds one folder per table. A table folder holds Parquet
// files, either directly or under nested key=value/ folders whose keys become
// partition columns (the folder name __HIVE_DEFAULT_PARTITION__ is NULL).
// Open lists the tables without touching any file; Catalog.Table reads the
// footers of one table on first use, checks that every file agrees on the
// schema, and keeps the row-group statistics that pruning needs.
//
// A partition column's type comes from all of its folder values (NULLs
// aside): INT when every value is an integer that fits in 32 bits, BIGINT
// when they are integers but some do not fit, DATE when every value is
// YYYY-MM-DD, VARCHAR otherwise. File columns map from Parquet as INT32 →
// INT, INT64 → BIGINT, INT32/DATE → DATE, DECIMAL (on INT32, INT64 or byte
// arrays) → Decimal128, BYTE_ARRAY → VARCHAR, FLOAT and DOUBLE → DOUBLE,
// BOOLEAN → BOOLEAN; anything else is ErrUnsupported.
//
// FileReader decodes Parquet pages straight into Arrow buffers, a page at a
// time through parquet-go's typed page data and definition levels, never a
// row or an interface value at a time. Partition columns come out as
// constant arrays. Unless given an allocator that counts or limits, it
// takes batch buffers from a shared recycling pool (internal/mempool): a
// scan releases and rebuilds batches of the same shape over and over, and
// fresh memory from the Go allocator (zeroed, faulted in, then collected)
// cost three times the decoding itself.
//
// The package does not import exec (exec imports it), so its errors wrap
// ErrUnsupported or ErrCorrupt, and every message names the file involved.
package hive
