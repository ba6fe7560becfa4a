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
//     NULL printed as NULL, then "(N rows)". Widths are display widths
//     (East Asian wide characters take two columns). Line breaks, tabs,
//     other control characters and bytes that are not UTF-8 are shown as
//     escapes (\n, \t, \x1b, \xe9), so a value stays on its line and
//     cannot act on the terminal. Options.MaxRows bounds it: the first and
//     last rows, a row of ellipses between, then "N rows (M shown)"; only
//     the rows it prints are held and rendered, so memory stays bounded
//     however long the result (without a bound every row is held until
//     Close, since widths depend on every row). Options.MaxWidth cuts text
//     columns with an ellipsis so lines fit a terminal.
//   - csv: a header line, then one line per row (RFC 4180 quoting; lines
//     end with \n, or \r\n with Options.CRLF). NULL is
//     an empty field and the empty string a quoted empty field (""), so the
//     two stay distinct; fields holding a comma, a quote or a line break
//     are quoted, quotes doubled. Bytes are written as they are. A
//     one-column row holding NULL is an empty line, which some readers
//     (pandas by default, Go's encoding/csv) skip.
//   - json: one JSON object per row per line (JSON Lines). Keys are the
//     column names made unique (UniqueNames: a repeated name gets _2, _3,
//     ...), since parsers keep one of two equal keys. Integers and
//     booleans are bare (integers are exact in the text, but JavaScript's
//     JSON.parse rounds those beyond ±2^53); decimals are strings with their scale's digits
//     ("1.50"), because most parsers read a JSON number as a binary double
//     and would round them; floats are numbers, and NaN, Infinity and
//     -Infinity, which JSON numbers cannot spell, are the strings "NaN",
//     "Infinity" and "-Infinity". Dates and text are strings, NULL is
//     null. Text that is not valid UTF-8 cannot be a JSON string: writing
//     it is an error naming the column and row.
//
// csv and json stream: each batch is written as it arrives.
package format
