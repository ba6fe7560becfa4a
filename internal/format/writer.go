package format

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// Name is an output format: table, csv or json.
type Name string

// The formats; see the package comment for what each prints.
const (
	Table Name = "table"
	CSV   Name = "csv"
	JSON  Name = "json"
)

// ErrUnknownFormat is returned by Parse for a name it does not know.
var ErrUnknownFormat = errors.New("unknown output format")

// Parse checks a format name given on the command line.
func Parse(s string) (Name, error) {
	switch n := Name(strings.ToLower(strings.TrimSpace(s))); n {
	case Table, CSV, JSON:
		return n, nil
	}
	return "", fmt.Errorf("%w %q (want table, csv or json)", ErrUnknownFormat, s)
}

// Writer prints the batches of one result. Write may be called any number
// of times (also zero); Close prints what is still held (the whole table
// for the table format, and its row count) and flushes. Neither retains
// the batch it is given.
type Writer interface {
	Write(b arrow.RecordBatch) error
	Close() error
}

// Options adjust a format; the zero value prints every row, as wide as
// the values are, with CSV lines ending in \n.
type Options struct {
	// MaxRows bounds the table format: past MaxRows rows it prints the
	// first MaxRows/2 and the last MaxRows/2 (the odd one goes first),
	// a row of ellipses between them, and "N rows (M shown)". Zero prints
	// every row. The other formats print every row.
	MaxRows int
	// MaxWidth is the display width the table format's lines should fit,
	// a terminal's: text columns are cut with an ellipsis until they do.
	// Zero cuts nothing.
	MaxWidth int
	// CRLF ends CSV lines with \r\n, as RFC 4180 writes them, instead of \n.
	CRLF bool
}

// New returns a writer of the format name for results of the given
// schema, printing to w.
func New(name Name, w io.Writer, schema *arrow.Schema, opts Options) (Writer, error) {
	bw := bufio.NewWriterSize(w, 64<<10)
	switch name {
	case Table:
		return newTableWriter(bw, schema, opts), nil
	case CSV:
		return newCSVWriter(bw, schema, opts.CRLF), nil
	case JSON:
		return newJSONWriter(bw, schema), nil
	}
	return nil, fmt.Errorf("%w %q (want table, csv or json)", ErrUnknownFormat, string(name))
}
