// Package format prints query results, Arrow record batches, as text.
//
// Three formats share one rendering of values, so a number looks the same
// in a terminal, a CSV file and a test expectation:
//
//   - integers in decimal; floats in the shortest form that reads back to
//     the same value (exponent notation only below 1e-4 or from 1e15 up);
//   - decimals with exactly their scale's digits after the point (1.50);
//   - dates as YYYY-MM-DD; booleans as true/false.
//
// The formats:
//
//   - table: a header, a rule, aligned columns (numbers right, text left),
//     NULL printed as NULL, then "(N rows)". It holds the rows until Close
//     because column widths depend on every row.
//   - csv: a header line, then one line per row (RFC 4180). NULL is an
//     empty field and the empty string is a quoted empty field (""), so the
//     two stay distinct.
//   - json: one JSON object per row per line (JSON Lines), keyed by column
//     name. Integers, floats and decimals are JSON numbers (decimals at
//     their scale), NULL is null, dates are strings, booleans are booleans.
//     NaN and infinities, which JSON cannot hold, are null.
//
// csv and json stream: each batch is written as it arrives.
package format
