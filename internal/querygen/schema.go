package querygen

import "fmt"

// Type is the coarse type of a column or expression: coarse enough that
// MySQL and DuckDB agree on every operation the generator applies to it.
type Type uint8

// Types.
const (
	Int     Type = iota // any integer width
	Decimal             // exact decimal
	String
	Date
	Bool  // predicates; never a column
	Float // inexact results (division, AVG, STDDEV_SAMP): output only
)

func (t Type) String() string {
	return [...]string{"int", "decimal", "string", "date", "bool", "float"}[t]
}

// Column is one column of a table.
type Column struct {
	Name string
	Type Type
	// Values are values the column holds, as raw text (42, 1.50, Books,
	// 2000-01-31): the generator's constants, so filters select something.
	Values []string
}

// Table is one table of the schema.
type Table struct {
	Name    string
	Columns []Column
	// Key names columns that identify a row; ROW_NUMBER orders on them so
	// its numbering is unambiguous. Empty: no ROW_NUMBER over this table.
	Key []string
	// Rows is the approximate row count: only tables of at most
	// Options.CrossRows rows are cross joined.
	Rows int64
}

// Column returns the named column, or nil.
func (t *Table) Column(name string) *Column {
	for i := range t.Columns {
		if t.Columns[i].Name == name {
			return &t.Columns[i]
		}
	}
	return nil
}

// Link is a many-to-one join path: each row of From matches at most one
// row of To on From.FromCol = To.ToCol (a foreign key). Following links
// keeps a join's result no bigger than its first table.
type Link struct {
	From, FromCol, To, ToCol string
}

// Schema is what the generator writes queries over.
type Schema struct {
	Tables []*Table
	Links  []Link
}

// Table returns the named table, or nil.
func (s *Schema) Table(name string) *Table {
	for _, t := range s.Tables {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// Check reports links and keys that name no column, so a schema typo
// fails loudly instead of silently generating fewer joins.
func (s *Schema) Check() error {
	for _, l := range s.Links {
		from, to := s.Table(l.From), s.Table(l.To)
		if from == nil || to == nil || from.Column(l.FromCol) == nil || to.Column(l.ToCol) == nil {
			return fmt.Errorf("querygen: link %s.%s -> %s.%s names a missing table or column", l.From, l.FromCol, l.To, l.ToCol)
		}
		if from.Column(l.FromCol).Type != to.Column(l.ToCol).Type {
			return fmt.Errorf("querygen: link %s.%s -> %s.%s joins different types", l.From, l.FromCol, l.To, l.ToCol)
		}
	}
	for _, t := range s.Tables {
		for _, k := range t.Key {
			if t.Column(k) == nil {
				return fmt.Errorf("querygen: key column %s.%s does not exist", t.Name, k)
			}
		}
		for _, c := range t.Columns {
			if c.Type == Bool || c.Type == Float {
				return fmt.Errorf("querygen: column %s.%s: %s columns are not supported", t.Name, c.Name, c.Type)
			}
		}
	}
	return nil
}
