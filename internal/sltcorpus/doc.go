// Package sltcorpus reads SQLite's sqllogictest scripts (the public-domain
// corpus of select1.test and its siblings) and checks an engine's answers
// against them: it parses the records, renders result values the way the
// corpus's own runner does, and compares them, hashed or not. The
// scripts' CREATE TABLE and INSERT statements run as statements of the
// engine (internal/sltrun runs them against in-memory tables).
//
// Rendering follows the corpus: each value is printed by its column's type
// letter whatever type the engine returned, I as an integer (text such as
// "122.4000" is read like C's atoi, so decimals truncate toward zero), R
// with %.3f, T as text; NULL is "NULL" and the empty string "(empty)".
// A query whose expected result is "N values hashing to H" compares the
// MD5 of its values, each followed by a newline, after rowsort (rows
// sorted) or valuesort (values sorted).
//
// The package knows nothing of fsql: a runner feeds it the engine's result
// batches, so the same code can back a test and a command.
package sltcorpus
