// Package sltrun runs sqllogictest scripts (SQLite's format, parsed by
// internal/sltcorpus) against a fresh fsql engine whose tables are held
// in memory: the scripts' CREATE TABLE, INSERT and CREATE INDEX run as
// fsql statements. `fsql slt FILE...` and the root package's
// TestSQLiteCorpus both run scripts through RunFile, so what CI checks is
// what the command reports.
//
// Records guarded by `skipif mysql`, or by `onlyif` naming another
// engine, are skipped (fsql speaks MySQL's dialect); `onlyif mysql` ones
// run. A query's result is rendered and sorted as the corpus defines
// (sltcorpus.Rows, Values) and compared with the expected values, or
// with their hash when the script gives "N values hashing to H". A
// statement passes when it succeeds (`statement ok`) or fails
// (`statement error`) as the record says.
package sltrun
