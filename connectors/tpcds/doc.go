// Package tpcds generates TPC-DS data sets as Parquet files.
//
// The generator is not the official dsdgen: it reproduces the TPC-DS schema
// (all 24 tables, spec column names and types) and calibrates the values to
// statistics measured on dsdgen's scale-1 output (row counts, NULL fractions,
// the value lists and frequencies of low-cardinality columns, numeric ranges,
// the November/December sales peak, line items per ticket). Foreign keys
// always hit dimension rows, returns refer to real sales lines, and the
// pricing columns keep TPC-DS's arithmetic relations, so the 99 TPC-DS queries
// find rows.
//
// Output is deterministic: every table chunk (a fact partition, a dimension)
// is generated from its own random stream seeded by (seed, table, chunk), so
// the bytes do not depend on the number of workers. A fact chunk is one
// partition value (a sale or return date, an inventory week, or the NULL
// date), whatever the layout: the partitioned layout writes each chunk to
// its own Hive folder, the flat layout concatenates the same chunks in
// partition order (NULL last) into a few files, so both layouts hold the
// same rows and answer every query identically. Sales lines (and the
// returns that copy them) come from per-ticket streams on top of that.
// GeneratorVersion numbers the output: a change that writes other rows
// for the same options raises it, and the folders data sets are cached
// in between runs carry it in their names (CacheFolder).
//
// Scaling: fact tables grow linearly with the scale factor; date_dim,
// time_dim, income_band, household_demographics and customer_demographics are
// fixed; customer, customer_address and item grow sub-linearly; the small
// dimensions (store, warehouse, call_center, ...) keep their scale-1 sizes
// below scale 1 and grow slowly above it. customer_demographics is the full
// 1,920,800-row cross product of its attributes at every scale.
package tpcds
