// Package memtable keeps the tables an engine holds in memory for its
// lifetime: those made by CREATE TABLE t (col type, ...) without AS
// SELECT, and Arrow data a library user registers (Engine.RegisterTable).
// They are for tests, small lookups and scripts such as SQLite's
// sqllogictest corpus.
//
// A table is a list of immutable chunks (hive.MemoryChunk: an Arrow
// record batch in memory owned by the store, never released, so the Go
// collector frees it once no version of the table holds it). A write
// makes the next version: appending (INSERT) or replacing (REPLACE) the
// list under the store's lock, in one step, after the statement's rows
// were all computed and checked; a failed or cancelled statement changes
// nothing. Readers take the current version of every table when their
// query takes its catalog view (Store implements hive.MemorySource), so a
// query reads one version whatever is written meanwhile, and the rows it
// reads are never changed or freed under it.
//
// Columns made by CREATE TABLE carry MySQL's checks, applied to every row
// written: NOT NULL, the range of TINYINT, SMALLINT, MEDIUMINT and INT
// UNSIGNED, the length of VARCHAR(n) and CHAR(n) (and CHAR's dropped
// trailing spaces), FLOAT's single precision, and the fractional digits
// of DATETIME(n), TIMESTAMP(n) and TIME(n); values that do not fit fail
// the statement as MySQL's strict mode does. PRIMARY KEY and UNIQUE keys
// are checked on every write too (keys.go).
package memtable
