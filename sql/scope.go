package sql

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/fsql-dev/fsql/connectors/hive"
	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/internal/suggest"
	"github.com/fsql-dev/fsql/planner"
)

// scope is the set of columns a name can resolve to: the output columns of
// the plan built so far, positionally. outer is the enclosing query's scope
// (for correlated subqueries).
type scope struct {
	cols  planner.Schema
	outer *scope
	// outerRefs collects references this scope's query made to outer,
	// so subquery binding can tell correlated from uncorrelated.
	outerRefs []outerRef
}

type outerRef struct {
	index int // column index in outer.cols
	col   *expr.Column
}

func newScope(s planner.Schema, outer *scope) *scope { return &scope{cols: s, outer: outer} }

// resolve finds the column table.name. It returns the column's index in
// this scope, or -1 with found outer set when it lives in an outer scope.
func (s *scope) resolve(table, name string) (int, error) {
	idx := -1
	for i, c := range s.cols {
		if !strings.EqualFold(c.Name, name) {
			continue
		}
		if table != "" && !strings.EqualFold(c.Table, table) {
			continue
		}
		if idx >= 0 {
			return -1, errs.New(errs.ErNonUniqError, "column '%s' is ambiguous; qualify it with a table name", qualified(table, name))
		}
		idx = i
	}
	if idx >= 0 {
		return idx, nil
	}
	return -1, nil
}

func qualified(table, name string) string {
	if table == "" {
		return name
	}
	return table + "." + name
}

func (s *scope) column(i int) *expr.Column {
	c := s.cols[i]
	return expr.NewColumn(i, c.Type, qualified(c.Table, c.Name))
}

// pos is the position of a byte offset into the statement's source
// (lines and columns count from 1, columns in characters), or nil when
// the binder has no source.
func (b *Binder) pos(offset int) *errs.Position { return positionIn(b.env.Source, offset) }

// positionIn is the position of a byte offset into src, or nil when
// there is no source or the offset is outside it.
func positionIn(src string, offset int) *errs.Position {
	if src == "" || offset < 0 || offset > len(src) {
		return nil
	}
	line := 1 + strings.Count(src[:offset], "\n")
	start := strings.LastIndexByte(src[:offset], '\n') + 1
	col := 1 + utf8.RuneCountInString(src[start:offset])
	return &errs.Position{Line: line, Column: col, Offset: offset}
}

// at is "at line L column C" for a byte offset into the statement's
// source, or "" when the binder has no source.
func (b *Binder) at(offset int) string {
	if p := b.pos(offset); p != nil {
		return "at " + p.String()
	}
	return ""
}

// atPos returns e at the position of offset, when the binder knows it.
func (b *Binder) atPos(e *errs.Error, offset int) *errs.Error {
	if p := b.pos(offset); p != nil {
		return e.At(*p)
	}
	return e
}

// errAt is errs.New(c, format, args...) about the expression n: at its
// position, which the message then ends with, when the parser recorded
// one. The parser records the start of expressions (not of clauses, frame
// offsets or ORDER BY positions, which read 0: no statement starts with
// an expression, so 0 is "not recorded").
func (b *Binder) errAt(n ast.Node, c errs.Class, format string, args ...any) *errs.Error {
	return placed(b.env.Source, exprOffset(n), errs.New(c, format, args...))
}

// errAtWords is errs.New(c, format, args...) about a clause, at the
// first place the statement has words (see keywordOffset), which the
// message then ends with: the parser records no positions for clauses.
func (b *Binder) errAtWords(words string, c errs.Class, format string, args ...any) *errs.Error {
	return placed(b.env.Source, keywordOffset(b.env.Source, strings.Fields(words)...), errs.New(c, format, args...))
}

// within gives an unsupported construct found inside expression n (a
// subquery: decorrelation works on plans, which keep no positions) n's
// position, the nearest one the parser recorded; err is returned as is
// when it has a position or is of another kind.
func (b *Binder) within(n ast.Node, err error) error {
	if err == nil || errs.KindOf(err) != errs.Unsupported || errs.PositionOf(err) != nil {
		return err
	}
	e, ok := err.(*errs.Error)
	if !ok {
		e = errs.Wrap(errs.Unsupported, "%w", err)
	}
	return placed(b.env.Source, exprOffset(n), e)
}

// exprOffset is where the parser recorded expression n starts, or -1 (for
// a node that is no expression, or one without a recorded start).
func exprOffset(n ast.Node) int {
	if x, ok := n.(ast.ExprNode); ok && x.OriginTextPosition() > 0 {
		return x.OriginTextPosition()
	}
	return -1
}

// placed returns e at byte offset off of src, its message ending with
// the position, when off is in src and e has no position yet.
func placed(src string, off int, e *errs.Error) *errs.Error {
	p := positionIn(src, off)
	if p == nil || e.Pos != nil {
		return e
	}
	e = e.At(*p)
	e.Msg += " at " + p.String()
	return e
}

// unknownColumn is the error for a column name no scope has: where it
// is, and the names in scope it may have meant. A qualifier that names no
// table in scope is reported as an unknown table instead.
func (b *Binder) unknownColumn(n *ast.ColumnName, c *exprCtx, offset int) error {
	where := b.at(offset)
	if where != "" {
		where = " " + where
	}
	table := n.Table.O
	var names, tables []string
	hasTable := false
	for s := c.sc; s != nil; s = s.outer {
		for _, col := range s.cols {
			if strings.HasPrefix(col.Name, "__") { // the binder's own columns
				continue
			}
			if col.Table != "" {
				tables = append(tables, col.Table)
			}
			switch {
			case table == "":
				names = append(names, col.Name)
			case strings.EqualFold(col.Table, table):
				hasTable = true
				names = append(names, col.Name)
			}
		}
	}
	if table != "" && !hasTable {
		return b.atPos(errs.New(errs.ErBadFieldError, "unknown table '%s' in '%s'%s%s%s", table, columnText(n), where,
			suggest.Phrase(suggest.Closest(table, tables), quoted), inScope("tables", tables)), offset)
	}
	if table == "" {
		var aliases []string
		for a, e := range c.aliases {
			if e != nil {
				aliases = append(aliases, a)
			}
		}
		sort.Strings(aliases) // map order would make the message vary
		names = append(names, aliases...)
	}
	hint := suggest.Closest(n.Name.O, names)
	for i, h := range hint {
		hint[i] = qualified(table, h)
	}
	msg := suggest.Phrase(hint, quoted)
	if msg == "" {
		msg = inScope("columns", names)
	}
	return unknownColumnError{b.atPos(errs.New(errs.ErBadFieldError, "unknown column '%s'%s%s", columnText(n), where, msg), offset)}
}

// unknownColumnError marks an unknown column (MySQL's
// ER_BAD_FIELD_ERROR), so a caller that tried one scope can report the
// name against a wider one.
type unknownColumnError struct{ err *errs.Error }

func (e unknownColumnError) Error() string { return e.err.Error() }
func (e unknownColumnError) Unwrap() error { return e.err }

// inScope lists a few names when nothing is close: " (columns here: a,
// b)", or "" when there are none or too many to help.
func inScope(what string, names []string) string {
	var uniq []string
	seen := map[string]bool{}
	for _, n := range names {
		if k := strings.ToLower(n); !seen[k] {
			seen[k] = true
			uniq = append(uniq, n)
		}
	}
	if len(uniq) == 0 || len(uniq) > 12 {
		return ""
	}
	return fmt.Sprintf(" (%s here: %s)", what, strings.Join(uniq, ", "))
}

func quoted(s string) string { return "'" + s + "'" }

// table looks a table up in the catalog, or makes a path table of a name
// that looks like a path; an unknown table fails with the closest table
// and CTE names.
func (b *Binder) table(name string) (*hive.Table, error) {
	if b.catalog == nil {
		return nil, errs.New(errs.ErNoSuchTable, "table '%s' not found: no data directory is open", name)
	}
	// A backquoted name that looks like a path (a '/', a .parquet or
	// .csv ending, a glob character) names files, not a table.
	if hive.IsPathName(name) {
		t, err := b.catalog.PathTable(name)
		if err != nil {
			return nil, errs.Wrap(errs.IO, "%w", err)
		}
		return t, nil
	}
	t, err := b.catalog.Table(name)
	if err == nil {
		return t, nil
	}
	if !errors.Is(err, hive.ErrNoTable) {
		return nil, errs.Wrap(errs.IO, "%w", err)
	}
	known := b.catalog.TableNames()
	for _, m := range b.ctes {
		for _, c := range m {
			known = append(known, c.Name.O)
		}
	}
	// The message is the binder's (hive's names the folder and every
	// table); hive's error stays the cause, for errors.Is.
	off := tableOffset(b.env.Source, name)
	where := b.at(off)
	if where != "" {
		where = " " + where
	}
	hint := suggest.Phrase(suggest.Closest(name, known), quoted)
	if hint == "" {
		if hint = inScope("tables", known); hint == "" {
			hint = " (SHOW TABLES lists them)"
		}
	}
	e := b.atPos(errs.New(errs.ErNoSuchTable, "unknown table '%s'%s in data directory %s%s", name, where, b.catalog.Dir, hint), off)
	e.Err = err
	return nil, e
}
