package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/fsql-dev/fsql"
	"github.com/fsql-dev/fsql/internal/format"
)

// printer runs statements in one session (SET lasts until the prompt or
// script ends) and prints their results; eng answers the meta-commands.
type printer struct {
	eng    *fsql.Engine
	sess   *fsql.Session
	out    io.Writer
	stderr io.Writer
	show
	n int // results printed so far, to separate them
}

// show is how results are shown; the prompt's meta-commands change it.
type show struct {
	format format.Name
	// maxRows bounds the table format (0: every row); maxWidth is the
	// width its lines must fit (0: any), autoWidth says to ask the
	// terminal before every result, since it may have been resized.
	maxRows   int
	maxWidth  int
	autoWidth bool
	crlf      bool // CSV lines end with \r\n
	// timer prints the elapsed time after every result; progress draws
	// a bar on stderr while a query runs; outTerminal says stdout is a
	// terminal too, so the bar goes before the result is printed.
	timer       bool
	progress    bool
	outTerminal bool
}

// options is the format options for the next result.
func (p *printer) options() format.Options {
	width := p.maxWidth
	if p.autoWidth {
		width = terminalWidth(p.out)
	}
	return format.Options{MaxRows: p.maxRows, MaxWidth: width, CRLF: p.crlf}
}

// script runs every statement of a script typed at the prompt in turn,
// stopping at the first error.
func (p *printer) script(ctx context.Context, script string) error {
	stmts, err := splitScript(script)
	if err != nil {
		return err
	}
	return p.statements(ctx, stmts, "")
}

// statements runs statements in turn, stopping at the first error. An
// error names the statement that failed when there are several: by
// source file and line for -f (source is the file's name), by number
// and line otherwise.
func (p *printer) statements(ctx context.Context, stmts []statement, source string) error {
	for _, s := range stmts {
		err := p.statement(ctx, s.text)
		switch {
		case err == nil:
			continue
		case source != "" && s.line > 0:
			return fmt.Errorf("%s:%d: statement %d: %w", source, s.line, s.n, err)
		case source != "":
			return fmt.Errorf("%s: statement %d: %w", source, s.n, err)
		case len(stmts) > 1 && s.line > 0:
			return fmt.Errorf("statement %d (line %d): %w", s.n, s.line, err)
		case len(stmts) > 1:
			return fmt.Errorf("statement %d: %w", s.n, err)
		}
		return err
	}
	return nil
}

// statement runs one statement and prints its result.
func (p *printer) statement(ctx context.Context, stmt string) error {
	start := time.Now()
	rows, err := p.sess.Query(ctx, stmt)
	if err != nil {
		return err
	}
	defer rows.Close()
	if rows.Schema().NumFields() == 0 { // SET: nothing to print
		for rows.Next() {
		}
		return rows.Err()
	}
	out := &firstWrite{w: p.out}
	if p.n > 0 && p.format == format.Table {
		out.prefix = "\n"
	}
	p.n++
	if p.progress {
		bar := startQueryProgress(p.stderr, rows, start)
		defer bar.Stop()
		if p.outTerminal {
			out.before = bar.Stop
		}
	}
	if isPlan(rows.Schema()) {
		err = printPlan(rows, out)
	} else {
		err = p.result(rows, out)
	}
	if err != nil {
		return err
	}
	if p.timer {
		fmt.Fprintf(out, "Time: %s\n", elapsed(time.Since(start)))
	}
	return nil
}

// result prints a query's rows in the chosen format.
func (p *printer) result(rows *fsql.Rows, out io.Writer) error {
	w, err := format.New(p.format, out, rows.Schema(), p.options())
	if err != nil {
		return err
	}
	for rows.Next() {
		if err := w.Write(rows.RecordBatch()); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		// Flush what was printed so far, but report the error, not a
		// row count that pretends the result is complete.
		if p.format != format.Table {
			w.Close()
		}
		return err
	}
	return w.Close()
}

// elapsed spells a statement's time as psql does, in milliseconds below
// a second.
func elapsed(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.3f s", d.Seconds())
}

// firstWrite runs before (the progress bar's removal) and writes prefix
// (the blank line between results) just before the first byte of a
// result goes out: a table result prints only once complete, so the bar
// stays up until then.
type firstWrite struct {
	w       io.Writer
	prefix  string
	before  func()
	written bool
}

func (f *firstWrite) Write(b []byte) (int, error) {
	if !f.written {
		f.written = true
		if f.before != nil {
			f.before()
		}
		if _, err := io.WriteString(f.w, f.prefix); err != nil {
			return 0, err
		}
	}
	return f.w.Write(b)
}

// isPlan recognises EXPLAIN output: one text column named plan.
func isPlan(s *arrow.Schema) bool {
	return s.NumFields() == 1 && s.Field(0).Name == "plan" &&
		(s.Field(0).Type.ID() == arrow.STRING || s.Field(0).Type.ID() == arrow.LARGE_STRING)
}

// printPlan prints a plan's lines as they are, without table borders, so
// the tree stays readable and can be pasted.
func printPlan(rows *fsql.Rows, out io.Writer) error {
	w := bufio.NewWriter(out)
	for rows.Next() {
		col := rows.RecordBatch().Column(0)
		for i := 0; i < col.Len(); i++ {
			if col.IsNull(i) {
				continue
			}
			var s string
			switch c := col.(type) {
			case *array.String:
				s = c.Value(i)
			case *array.LargeString:
				s = c.Value(i)
			}
			w.WriteString(s)
			if !strings.HasSuffix(s, "\n") {
				w.WriteByte('\n')
			}
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return rows.Err()
}
