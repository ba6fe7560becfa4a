package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/fsql-dev/fsql"
	"github.com/fsql-dev/fsql/internal/format"
)

// printer runs statements and prints their results.
type printer struct {
	eng    *fsql.Engine
	out    io.Writer
	format format.Name
	n      int // results printed so far, to separate them
}

// script runs every statement of a script in turn, stopping at the first
// error.
func (p *printer) script(ctx context.Context, script string) error {
	stmts, err := fsql.SplitStatements(script)
	if err != nil {
		return err
	}
	return p.statements(ctx, stmts)
}

// statements runs statements in turn, stopping at the first error.
func (p *printer) statements(ctx context.Context, stmts []string) error {
	for _, s := range stmts {
		if strings.TrimSpace(s) == "" {
			continue
		}
		if err := p.statement(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// statement runs one statement and prints its result.
func (p *printer) statement(ctx context.Context, stmt string) error {
	rows, err := p.eng.Query(ctx, stmt)
	if err != nil {
		return err
	}
	defer rows.Close()
	if p.n > 0 && p.format == format.Table {
		fmt.Fprintln(p.out)
	}
	p.n++
	if isPlan(rows.Schema()) {
		return printPlan(rows, p.out)
	}
	w, err := format.New(p.format, p.out, rows.Schema())
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
