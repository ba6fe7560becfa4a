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

// New returns a writer of the format name for results of the given
// schema, printing to w.
func New(name Name, w io.Writer, schema *arrow.Schema) (Writer, error) {
	bw := bufio.NewWriterSize(w, 64<<10)
	switch name {
	case Table:
		return newTableWriter(bw, schema), nil
	case CSV:
		return newCSVWriter(bw, schema), nil
	case JSON:
		return newJSONWriter(bw, schema), nil
	}
	return nil, fmt.Errorf("%w %q (want table, csv or json)", ErrUnknownFormat, string(name))
}
