package sltcorpus

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/fsql-dev/fsql/internal/slt"
)

// ErrNotData marks a statement that Database does not interpret (anything
// but CREATE TABLE, INSERT ... VALUES and CREATE INDEX); a runner hands it
// to the engine instead.
var ErrNotData = errors.New("not a data statement")

// Database holds the tables a script's statements have built so far.
type Database struct {
	tables []*slt.Table
	byName map[string]*slt.Table
	// Version counts changes, so a runner knows when to write the
	// tables out again.
	Version int
}

// NewDatabase returns an empty database.
func NewDatabase() *Database { return &Database{byName: map[string]*slt.Table{}} }

// Tables returns the tables in creation order.
func (d *Database) Tables() []*slt.Table { return d.tables }

// Apply runs one data statement: CREATE TABLE (column types INTEGER,
// VARCHAR/TEXT, REAL/DOUBLE/FLOAT), INSERT INTO t [(cols)] VALUES (...)
// of literals, or CREATE INDEX (which changes no answer and is ignored).
// Any other statement returns ErrNotData.
func (d *Database) Apply(sql string) error {
	p := parser.New()
	p.SetSQLMode(mysql.ModePipesAsConcat | mysql.ModeIgnoreSpace)
	stmts, _, err := p.Parse(sql, "", "")
	if err != nil {
		if looksLikeData(sql) {
			return fmt.Errorf("parsing %q: %w", sql, err)
		}
		return ErrNotData
	}
	for _, st := range stmts {
		switch x := st.(type) {
		case *ast.CreateTableStmt:
			if err := d.create(x); err != nil {
				return err
			}
		case *ast.InsertStmt:
			if err := d.insert(x); err != nil {
				return err
			}
		case *ast.CreateIndexStmt:
		default:
			return ErrNotData
		}
	}
	d.Version++
	return nil
}

func looksLikeData(sql string) bool {
	u := strings.ToUpper(strings.TrimSpace(sql))
	return strings.HasPrefix(u, "CREATE TABLE") || strings.HasPrefix(u, "INSERT")
}

func (d *Database) create(x *ast.CreateTableStmt) error {
	name := strings.ToLower(x.Table.Name.O)
	if d.byName[name] != nil {
		return fmt.Errorf("table %s exists", name)
	}
	t := &slt.Table{Name: name}
	for _, c := range x.Cols {
		col := slt.Column{Name: c.Name.Name.O}
		switch c.Tp.GetType() {
		case mysql.TypeLong, mysql.TypeLonglong, mysql.TypeTiny, mysql.TypeShort, mysql.TypeInt24:
			// SQLite's INTEGER is 64 bits.
			col.Type = slt.BigInt
		case mysql.TypeVarchar, mysql.TypeString, mysql.TypeBlob, mysql.TypeVarString:
			col.Type = slt.Varchar
		case mysql.TypeDouble, mysql.TypeFloat:
			col.Type = slt.Double
		default:
			return fmt.Errorf("table %s column %s: type %s is not supported", name, col.Name, c.Tp)
		}
		t.Columns = append(t.Columns, col)
	}
	d.tables = append(d.tables, t)
	d.byName[name] = t
	return nil
}

func (d *Database) insert(x *ast.InsertStmt) error {
	if x.Select != nil || x.Setlist {
		return fmt.Errorf("%w: INSERT ... SELECT or SET", ErrNotData)
	}
	ts, ok := x.Table.TableRefs.Left.(*ast.TableSource)
	if !ok {
		return fmt.Errorf("INSERT target %T", x.Table.TableRefs.Left)
	}
	tn, ok := ts.Source.(*ast.TableName)
	if !ok {
		return fmt.Errorf("INSERT target %T", ts.Source)
	}
	t := d.byName[strings.ToLower(tn.Name.O)]
	if t == nil {
		return fmt.Errorf("INSERT into unknown table %s", tn.Name.O)
	}
	pos := make([]int, 0, len(t.Columns))
	if len(x.Columns) == 0 {
		for i := range t.Columns {
			pos = append(pos, i)
		}
	}
	for _, c := range x.Columns {
		k := -1
		for i, tc := range t.Columns {
			if strings.EqualFold(tc.Name, c.Name.O) {
				k = i
			}
		}
		if k < 0 {
			return fmt.Errorf("INSERT into %s: unknown column %s", t.Name, c.Name.O)
		}
		pos = append(pos, k)
	}
	for _, list := range x.Lists {
		if len(list) != len(pos) {
			return fmt.Errorf("INSERT into %s: %d values for %d columns", t.Name, len(list), len(pos))
		}
		row := make([]string, len(t.Columns))
		for i := range row {
			row[i] = "NULL"
		}
		for i, e := range list {
			v, err := literalText(e, t.Columns[pos[i]].Type)
			if err != nil {
				return fmt.Errorf("INSERT into %s column %s: %w", t.Name, t.Columns[pos[i]].Name, err)
			}
			row[pos[i]] = v
		}
		t.Rows = append(t.Rows, row)
	}
	return nil
}

// literalText renders a literal as internal/slt writes it for a column of
// type typ: NULL as "NULL", the empty string as "(empty)".
func literalText(e ast.ExprNode, typ slt.TypeName) (string, error) {
	neg := false
	for {
		u, ok := e.(*ast.UnaryOperationExpr)
		if !ok {
			break
		}
		switch u.Op {
		case opcode.Minus:
			neg = !neg
		case opcode.Plus:
		default:
			return "", fmt.Errorf("value %T is not a literal", e)
		}
		e = u.V
	}
	v, ok := e.(*driver.ValueExpr)
	if !ok {
		return "", fmt.Errorf("value %T is not a literal", e)
	}
	var s string
	switch x := v.GetValue().(type) {
	case nil:
		return "NULL", nil
	case int64:
		s = strconv.FormatInt(x, 10)
	case uint64:
		s = strconv.FormatUint(x, 10)
	case float64:
		s = strconv.FormatFloat(x, 'g', -1, 64)
	case string:
		s = x
	case []byte:
		s = string(x)
	case *driver.MyDecimal:
		s = x.String()
	default:
		return "", fmt.Errorf("literal %v (%T)", x, x)
	}
	switch typ {
	case slt.BigInt:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return "", fmt.Errorf("%q is not a number", s)
		}
		if neg {
			f = -f
		}
		return strconv.FormatInt(int64(f), 10), nil
	case slt.Double:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return "", fmt.Errorf("%q is not a number", s)
		}
		if neg {
			f = -f
		}
		return strconv.FormatFloat(f, 'g', -1, 64), nil
	}
	if neg {
		s = "-" + s
	}
	if s == "" {
		return "(empty)", nil
	}
	return s, nil
}
