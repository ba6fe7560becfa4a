package slt

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Kind tells the records of a file apart.
type Kind int

// The record kinds; see the package comment.
const (
	KindTable Kind = iota
	KindQuery
	KindStatementOK
	KindStatementError
)

// File is a parsed .slt file. It keeps its lines so Rewrite can reproduce
// everything but the expected results byte for byte.
type File struct {
	Name    string
	Records []*Record
	lines   []string
}

// Record is one table, query or statement of a file.
type Record struct {
	Kind Kind
	Line int // 1-based line of the record's first line, for messages

	Table *Table // KindTable

	SQL string // query and statement records

	Types   string   // KindQuery: one letter per column
	RowSort bool     // KindQuery: sort rows before comparing
	Expect  []string // KindQuery: expected lines, tab-separated values

	Error string // KindStatementError: expected message substring

	// The lines [expectFrom, expectTo) of the file hold Expect; the
	// header is line headerLine. Both are 0-based.
	headerLine, expectFrom, expectTo int
	hasSeparator                     bool
}

// Table is a table declared by a file.
type Table struct {
	Name        string
	Columns     []Column
	PartitionBy []string
	// Rows hold the values as written; NULL is "NULL", the empty string
	// is "(empty)". Every row has one value per column.
	Rows [][]string
}

// TypeName is a column type of a table declaration.
type TypeName int

// The column types a table may declare.
const (
	Int TypeName = iota
	BigInt
	Decimal
	Varchar
	Date
	Double
	Boolean
)

// Column is one declared column.
type Column struct {
	Name             string
	Type             TypeName
	Precision, Scale int // Decimal only
}

// ParseFile reads and parses the file at path.
func ParseFile(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, bytes.NewReader(b))
}

// Parse parses a file's text; name is used in error messages.
func Parse(name string, r io.Reader) (*File, error) {
	f := &File{Name: name}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		f.lines = append(f.lines, strings.TrimSuffix(sc.Text(), "\r"))
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for i := 0; i < len(f.lines); {
		line := f.lines[i]
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			i++
			continue
		}
		var rec *Record
		var err error
		switch {
		case strings.HasPrefix(trimmed, "table ") || strings.HasPrefix(trimmed, "partitioned table "):
			rec, i, err = f.parseTable(i)
			if err == nil {
				key := strings.ToLower(rec.Table.Name)
				if seen[key] {
					err = fmt.Errorf("table %s declared twice", rec.Table.Name)
				}
				seen[key] = true
			}
		case strings.HasPrefix(trimmed, "query"):
			rec, i, err = f.parseQuery(i)
		case strings.HasPrefix(trimmed, "statement"):
			rec, i, err = f.parseStatement(i)
		default:
			err = fmt.Errorf("want table, partitioned table, query or statement, got %q", trimmed)
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, lineOf(rec, i), err)
		}
		f.Records = append(f.Records, rec)
	}
	return f, nil
}

func lineOf(rec *Record, i int) int {
	if rec != nil {
		return rec.Line
	}
	return i + 1
}

// block returns the lines from i up to a blank line or "----" (the
// index of which it also returns), skipping comment lines.
func (f *File) block(i int) (lines []string, end int) {
	for ; i < len(f.lines); i++ {
		t := strings.TrimSpace(f.lines[i])
		if t == "" || t == "----" {
			break
		}
		if strings.HasPrefix(t, "#") {
			continue
		}
		lines = append(lines, f.lines[i])
	}
	return lines, i
}

func (f *File) parseTable(i int) (*Record, int, error) {
	rec := &Record{Kind: KindTable, Line: i + 1}
	header := strings.TrimSpace(f.lines[i])
	t := &Table{}
	rec.Table = t
	if rest, ok := strings.CutPrefix(header, "partitioned table "); ok {
		cols, by, ok := strings.Cut(rest, ") by (")
		if !ok || !strings.HasSuffix(by, ")") {
			return rec, i, fmt.Errorf("want partitioned table NAME (COLUMNS) by (COLUMNS), got %q", header)
		}
		header = "table " + cols + ")"
		for _, c := range strings.Split(strings.TrimSuffix(by, ")"), ",") {
			t.PartitionBy = append(t.PartitionBy, strings.TrimSpace(c))
		}
	}
	rest := strings.TrimPrefix(header, "table ")
	open := strings.Index(rest, "(")
	if open < 0 || !strings.HasSuffix(rest, ")") {
		return rec, i, fmt.Errorf("want table NAME (COLUMN TYPE, ...), got %q", header)
	}
	t.Name = strings.TrimSpace(rest[:open])
	if t.Name == "" || strings.ContainsAny(t.Name, " \t/\\") {
		return rec, i, fmt.Errorf("bad table name %q", t.Name)
	}
	for _, def := range splitTopLevel(rest[open+1 : len(rest)-1]) {
		c, err := parseColumn(def)
		if err != nil {
			return rec, i, err
		}
		for _, prev := range t.Columns {
			if strings.EqualFold(prev.Name, c.Name) {
				return rec, i, fmt.Errorf("column %s declared twice", c.Name)
			}
		}
		t.Columns = append(t.Columns, c)
	}
	for _, p := range t.PartitionBy {
		if t.column(p) < 0 {
			return rec, i, fmt.Errorf("partition column %s is not a column of %s", p, t.Name)
		}
	}
	if len(t.PartitionBy) == len(t.Columns) {
		return rec, i, fmt.Errorf("table %s needs at least one column outside its partition columns", t.Name)
	}
	lines, end := f.block(i + 1)
	for k, l := range lines {
		vals := strings.Split(l, "\t")
		if len(vals) != len(t.Columns) {
			return rec, i, fmt.Errorf("row %d of table %s has %d tab-separated values, want %d", k+1, t.Name, len(vals), len(t.Columns))
		}
		for c, v := range vals {
			if err := checkValue(t.Columns[c], v); err != nil {
				return rec, i, fmt.Errorf("row %d of table %s, column %s: %w", k+1, t.Name, t.Columns[c].Name, err)
			}
		}
		t.Rows = append(t.Rows, vals)
	}
	return rec, end + 1, nil
}

func (t *Table) column(name string) int {
	for i, c := range t.Columns {
		if strings.EqualFold(c.Name, name) {
			return i
		}
	}
	return -1
}

// splitTopLevel splits on commas outside parentheses: decimal(7,2).
func splitTopLevel(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

func parseColumn(def string) (Column, error) {
	fields := strings.Fields(def)
	if len(fields) != 2 {
		return Column{}, fmt.Errorf("want NAME TYPE, got %q", strings.TrimSpace(def))
	}
	c := Column{Name: fields[0]}
	typ := strings.ToLower(fields[1])
	switch typ {
	case "int", "integer":
		c.Type = Int
	case "bigint":
		c.Type = BigInt
	case "varchar", "text", "string":
		c.Type = Varchar
	case "date":
		c.Type = Date
	case "double":
		c.Type = Double
	case "boolean", "bool":
		c.Type = Boolean
	default:
		args, ok := strings.CutPrefix(typ, "decimal(")
		if !ok || !strings.HasSuffix(args, ")") {
			return c, fmt.Errorf("column %s: unknown type %s (want int, bigint, decimal(p,s), varchar, date, double or boolean)", c.Name, fields[1])
		}
		ps, ss, _ := strings.Cut(strings.TrimSuffix(args, ")"), ",")
		p, err1 := strconv.Atoi(strings.TrimSpace(ps))
		s, err2 := strconv.Atoi(strings.TrimSpace(ss))
		if err1 != nil || err2 != nil || p < 1 || p > 18 || s < 0 || s > p {
			return c, fmt.Errorf("column %s: bad decimal type %s (want decimal(p,s) with 1 <= p <= 18, 0 <= s <= p)", c.Name, fields[1])
		}
		c.Type, c.Precision, c.Scale = Decimal, p, s
	}
	return c, nil
}

func (f *File) parseQuery(i int) (*Record, int, error) {
	rec := &Record{Kind: KindQuery, Line: i + 1, headerLine: i}
	fields := strings.Fields(f.lines[i])
	if fields[0] != "query" || len(fields) < 2 || len(fields) > 3 {
		return rec, i, fmt.Errorf("want query TYPES [rowsort|nosort], got %q", strings.TrimSpace(f.lines[i]))
	}
	rec.Types = fields[1]
	if err := checkTypes(rec.Types); err != nil {
		return rec, i, err
	}
	if len(fields) == 3 {
		switch fields[2] {
		case "rowsort":
			rec.RowSort = true
		case "nosort":
		default:
			return rec, i, fmt.Errorf("unknown sort mode %q (want rowsort or nosort)", fields[2])
		}
	}
	sql, end := f.block(i + 1)
	if len(sql) == 0 {
		return rec, i, fmt.Errorf("query has no SQL")
	}
	rec.SQL = strings.Join(sql, "\n")
	if end >= len(f.lines) || strings.TrimSpace(f.lines[end]) != "----" {
		return rec, i, fmt.Errorf("query needs a ---- line before its expected rows")
	}
	rec.hasSeparator = true
	rec.expectFrom = end + 1
	j := rec.expectFrom
	for ; j < len(f.lines) && strings.TrimSpace(f.lines[j]) != ""; j++ {
		rec.Expect = append(rec.Expect, f.lines[j])
	}
	rec.expectTo = j
	return rec, j, nil
}

func checkTypes(types string) error {
	for _, r := range types {
		if !strings.ContainsRune("IRTDB", r) {
			return fmt.Errorf("unknown column type letter %q in %q (want I, R, T, D or B)", r, types)
		}
	}
	return nil
}

func (f *File) parseStatement(i int) (*Record, int, error) {
	rec := &Record{Kind: KindStatementOK, Line: i + 1}
	header := strings.TrimSpace(f.lines[i])
	switch {
	case header == "statement ok":
	case header == "statement error" || strings.HasPrefix(header, "statement error "):
		rec.Kind = KindStatementError
		rec.Error = strings.TrimSpace(strings.TrimPrefix(header, "statement error"))
	default:
		return rec, i, fmt.Errorf("want statement ok or statement error [TEXT], got %q", header)
	}
	sql, end := f.block(i + 1)
	if len(sql) == 0 {
		return rec, i, fmt.Errorf("statement has no SQL")
	}
	if end < len(f.lines) && strings.TrimSpace(f.lines[end]) == "----" {
		return rec, i, fmt.Errorf("a statement has no expected rows; use query for that")
	}
	rec.SQL = strings.Join(sql, "\n")
	return rec, end, nil
}

// Tables returns the tables the file declares, in file order.
func (f *File) Tables() []*Table {
	var out []*Table
	for _, r := range f.Records {
		if r.Kind == KindTable {
			out = append(out, r.Table)
		}
	}
	return out
}

// Result is what a query really returned, for Rewrite.
type Result struct {
	Types string   // one letter per column
	Lines []string // rendered rows
}

// Rewrite renders the file again with the expected rows (and type
// letters) of the given query records replaced by what they returned;
// every other line stays as it was.
func (f *File) Rewrite(results map[*Record]Result) []byte {
	var b bytes.Buffer
	next := 0
	emit := func(to int) {
		for ; next < to; next++ {
			b.WriteString(f.lines[next])
			b.WriteByte('\n')
		}
	}
	for _, r := range f.Records {
		res, ok := results[r]
		if !ok || r.Kind != KindQuery {
			continue
		}
		emit(r.headerLine)
		fields := strings.Fields(f.lines[r.headerLine])
		fields[1] = res.Types
		b.WriteString(strings.Join(fields, " "))
		b.WriteByte('\n')
		next = r.headerLine + 1
		emit(r.expectFrom)
		for _, l := range res.Lines {
			b.WriteString(l)
			b.WriteByte('\n')
		}
		next = r.expectTo
	}
	emit(len(f.lines))
	return b.Bytes()
}
