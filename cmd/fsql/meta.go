package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/internal/format"
)

// metaCommands are the prompt's commands as .help lists them.
var metaCommands = []struct{ usage, help string }{
	{`.help, \?`, "this text"},
	{`.tables, \d`, "list the tables"},
	{`.describe TABLE, \d TABLE`, "the columns of TABLE, their types, which are partition keys"},
	{".mode table|csv|json", "the output format"},
	{".maxrows N", "table output shows the first and last N/2 rows and the count (0: all)"},
	{".timer on|off", "print the time each statement took"},
	{`.quit, \q`, "leave (so does Ctrl-D)"},
}

// metaNames are the commands' names, for completion.
var metaNames = []string{".describe", ".help", ".maxrows", ".mode", ".quit", ".tables", ".timer", `\?`, `\d`, `\q`}

// metaHelp prints the commands and the keys.
func metaHelp(w io.Writer) {
	fmt.Fprint(w, "Statements end with ';' and may span lines. Commands:\n\n")
	for _, c := range metaCommands {
		fmt.Fprintf(w, "  %-26s %s\n", c.usage, c.help)
	}
	fmt.Fprint(w, `
SQL describes the data and the settings too: SHOW TABLES, DESCRIBE t,
SHOW CREATE TABLE t, SHOW VARIABLES [LIKE '...'], and SET key = value or
SET key = DEFAULT for the rest of the session (fsql help lists the keys).

Keys: Up and Down walk the history, Tab completes keywords, tables and
columns, Ctrl-C clears the line or cancels the running statement,
Ctrl-D quits.
`)
}

// meta runs one meta-command line and reports whether the session ends.
func (s *session) meta(line string) (quit bool, err error) {
	fields := strings.Fields(strings.TrimSuffix(strings.TrimSpace(line), ";"))
	cmd, args := strings.ToLower(fields[0]), fields[1:]
	p := s.p
	switch cmd {
	case ".quit", ".exit", `\q`, "quit", "exit":
		return true, nil
	case ".help", `\?`, `\h`, ".h":
		metaHelp(p.out)
		return false, nil
	case ".tables", `\dt`:
		return false, s.listTables()
	case `\d`:
		if len(args) == 0 {
			return false, s.listTables()
		}
		return false, s.describe(args)
	case ".describe":
		return false, s.describe(args)
	case ".mode":
		if len(args) != 1 {
			return false, fmt.Errorf("usage: .mode table|csv|json (now %s)", p.format)
		}
		f, err := format.Parse(args[0])
		if err != nil {
			return false, err
		}
		p.format = f
		return false, nil
	case ".maxrows":
		n, err := -1, error(nil)
		if len(args) == 1 {
			n, err = strconv.Atoi(args[0])
		}
		if len(args) != 1 || err != nil || n < 0 {
			return false, fmt.Errorf("usage: .maxrows N, with N 0 (every row) or more (now %d)", p.maxRows)
		}
		p.maxRows = n
		return false, nil
	case ".timer":
		if len(args) != 1 || (args[0] != "on" && args[0] != "off") {
			return false, fmt.Errorf("usage: .timer on|off (now %s)", onOff(p.timer))
		}
		p.timer = args[0] == "on"
		return false, nil
	}
	return false, fmt.Errorf("unknown command %s (.help lists the commands)", fields[0])
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// listTables prints the data folder's tables in the output format.
func (s *session) listTables() error {
	names, err := s.p.eng.Tables()
	if err != nil {
		return err
	}
	schema := arrow.NewSchema([]arrow.Field{{Name: "table", Type: arrow.BinaryTypes.String}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	b.Field(0).(*array.StringBuilder).AppendValues(names, nil)
	return s.printBatch(b.NewRecordBatch())
}

// describe prints the columns of a table: name, SQL type, and whether
// the value comes from the partition folders.
func (s *session) describe(args []string) error {
	if len(args) != 1 {
		return fmt.Errorf(`usage: \d TABLE or .describe TABLE`)
	}
	cols, err := s.p.eng.Columns(context.Background(), args[0])
	if err != nil {
		return err
	}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "column", Type: arrow.BinaryTypes.String},
		{Name: "type", Type: arrow.BinaryTypes.String},
		{Name: "partition", Type: arrow.FixedWidthTypes.Boolean},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for _, c := range cols {
		b.Field(0).(*array.StringBuilder).Append(c.Name)
		b.Field(1).(*array.StringBuilder).Append(c.TypeName)
		b.Field(2).(*array.BooleanBuilder).Append(c.Partition)
	}
	return s.printBatch(b.NewRecordBatch())
}

// printBatch prints a meta-command's answer as a result.
func (s *session) printBatch(batch arrow.RecordBatch) error {
	defer batch.Release()
	p := s.p
	if p.n > 0 && p.format == format.Table {
		fmt.Fprintln(p.out)
	}
	p.n++
	w, err := format.New(p.format, p.out, batch.Schema(), p.options())
	if err != nil {
		return err
	}
	if err := w.Write(batch); err != nil {
		return err
	}
	return w.Close()
}
