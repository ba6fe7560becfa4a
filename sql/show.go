package sql

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/fsql-dev/fsql/connectors/hive"
	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/planner"
)

// bindShow binds a SHOW statement (and DESCRIBE t, which the parser reads
// as SHOW COLUMNS) to a constant relation of text columns, filtered by its
// LIKE pattern or WHERE condition. Each form is one case of showRows; the
// filter applies to all of them.
func (b *Binder) bindShow(s *ast.ShowStmt) (*Statement, error) {
	st, err := b.showRows(s)
	if err != nil {
		return nil, err
	}
	return b.filterShow(s, st)
}

// showRows returns the rows of one SHOW form, unfiltered.
func (b *Binder) showRows(s *ast.ShowStmt) (*Statement, error) {
	switch s.Tp {
	case ast.ShowTables:
		return b.showTables(s)
	case ast.ShowColumns:
		return b.showColumns(s)
	case ast.ShowCreateTable:
		return b.showCreateTable(s)
	case ast.ShowVariables:
		rows := make([][]string, len(b.env.Variables))
		for i, v := range b.env.Variables {
			rows[i] = []string{v.Name, v.Value}
		}
		return textRelation([]string{"Variable_name", "Value"}, rows), nil
	case ast.ShowBuiltins:
		// The function registry.
		rows := Builtins()
		out := make([][]string, len(rows))
		for i, r := range rows {
			out[i] = []string{r[0], r[1]}
		}
		return textRelation([]string{"name", "kind"}, out), nil
	}
	return nil, errs.New(errs.Unsupported, "%s (fsql has SHOW TABLES, SHOW COLUMNS / DESCRIBE, SHOW CREATE TABLE, SHOW VARIABLES and SHOW BUILTINS)", snippet(s))
}

// showTables lists the data folder's tables: Tables (MySQL's
// Tables_in_<db>; fsql's one database has no name), and with FULL
// Table_type.
func (b *Binder) showTables(s *ast.ShowStmt) (*Statement, error) {
	if b.catalog == nil {
		return nil, errs.New(errs.ErNoSuchTable, "SHOW TABLES: no data directory is open")
	}
	names := []string{"Tables"}
	if s.Full {
		names = append(names, "Table_type")
	}
	var rows [][]string
	for _, t := range b.catalog.TableNames() {
		r := []string{t}
		if s.Full {
			r = append(r, "BASE TABLE")
		}
		rows = append(rows, r)
	}
	return textRelation(names, rows), nil
}

// showColumns describes a table's columns with MySQL's column names. Key
// is PART for a Hive partition column (MySQL's keys are PRI, UNI, MUL;
// fsql's tables have none of those). FULL adds Collation, Privileges and
// Comment. EXTENDED would add hidden columns; fsql's tables have none.
func (b *Binder) showColumns(s *ast.ShowStmt) (*Statement, error) {
	t, err := b.table(s.Table.Name.O)
	if err != nil {
		return nil, err
	}
	names := []string{"Field", "Type", "Null", "Key", "Default", "Extra"}
	if s.Full {
		names = []string{"Field", "Type", "Collation", "Null", "Key", "Default", "Extra", "Privileges", "Comment"}
	}
	str := func(v string) expr.Expr { return expr.NewLiteral(v, arrow.BinaryTypes.String) }
	var null expr.Expr = expr.Null(arrow.BinaryTypes.String)
	var rows [][]expr.Expr
	for i, f := range t.Schema.Fields() {
		typ, ok := mysqlType(f.Type)
		if !ok {
			typ = strings.ToLower(f.Type.String())
		}
		nullable, key, comment := "YES", "", ""
		if !f.Nullable {
			nullable = "NO"
		}
		if i >= t.NumFileColumns {
			key, comment = "PART", "Hive partition column"
		}
		if !s.Full {
			rows = append(rows, []expr.Expr{str(f.Name), str(typ), str(nullable), str(key), null, str("")})
			continue
		}
		coll := null
		if isText(f.Type) {
			coll = str("utf8mb4_0900_bin") // byte-wise, no padding: fsql's comparison
		}
		rows = append(rows, []expr.Expr{str(f.Name), str(typ), coll, str(nullable), str(key), null, str(""), str("select"), str(comment)})
	}
	st := relation(names, rows)
	if s.Column != nil {
		// DESCRIBE t col: MySQL reads col as a LIKE pattern of Field.
		cond, err := b.likeFirst(st, &ast.PatternLikeOrIlikeExpr{
			Pattern: ast.NewValueExpr(s.Column.Name.O, "", ""), IsLike: true, Escape: '\\'})
		if err != nil {
			return nil, err
		}
		st.Plan = &planner.Filter{Child: st.Plan, Cond: cond}
	}
	return st, nil
}

// showCreateTable prints a CREATE TABLE statement for the table, on one
// line, that MySQL's and TiDB's parsers accept: every column with its
// MySQL type, then PARTITION BY KEY (...) naming the Hive partition
// columns in folder-nesting order.
func (b *Binder) showCreateTable(s *ast.ShowStmt) (*Statement, error) {
	t, err := b.table(s.Table.Name.O)
	if err != nil {
		return nil, err
	}
	text, err := createTable(t)
	if err != nil {
		return nil, err
	}
	return textRelation([]string{"Table", "Create Table"}, [][]string{{t.Name, text}}), nil
}

func createTable(t *hive.Table) (string, error) {
	var sb strings.Builder
	sb.WriteString("CREATE TABLE " + backquote(t.Name) + " (")
	for i, f := range t.Schema.Fields() {
		typ, ok := mysqlType(f.Type)
		if !ok {
			return "", errs.New(errs.Unsupported, "SHOW CREATE TABLE %s: column %s has type %s, which has no MySQL spelling", t.Name, f.Name, f.Type)
		}
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(backquote(f.Name) + " " + typ)
		if !f.Nullable {
			sb.WriteString(" NOT NULL")
		}
	}
	sb.WriteString(")")
	if len(t.PartitionColumns) > 0 {
		keys := make([]string, len(t.PartitionColumns))
		for i, k := range t.PartitionColumns {
			keys[i] = backquote(k)
		}
		sb.WriteString(" PARTITION BY KEY (" + strings.Join(keys, ", ") + ")")
	}
	return sb.String(), nil
}

// mysqlType spells an Arrow type as MySQL's column type. Strings are
// longtext: Parquet strings have no declared length, and varchar needs
// one. Booleans are boolean (MySQL's tinyint(1)): fsql keeps them apart
// from numbers.
func mysqlType(t arrow.DataType) (string, bool) {
	switch t.ID() {
	case arrow.INT8:
		return "tinyint", true
	case arrow.INT16:
		return "smallint", true
	case arrow.INT32:
		return "int", true
	case arrow.INT64:
		return "bigint", true
	case arrow.UINT8:
		return "tinyint unsigned", true
	case arrow.UINT16:
		return "smallint unsigned", true
	case arrow.UINT32:
		return "int unsigned", true
	case arrow.UINT64:
		return "bigint unsigned", true
	case arrow.FLOAT32:
		return "float", true
	case arrow.FLOAT64:
		return "double", true
	case arrow.DECIMAL128, arrow.DECIMAL256:
		d := t.(arrow.DecimalType)
		return fmt.Sprintf("decimal(%d,%d)", d.GetPrecision(), d.GetScale()), true
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		return "longtext", true
	case arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW:
		return "longblob", true
	case arrow.DATE32, arrow.DATE64:
		return "date", true
	case arrow.BOOL:
		return "boolean", true
	case arrow.TIMESTAMP:
		ts := t.(*arrow.TimestampType)
		p, ok := fsp(ts.Unit)
		if ts.TimeZone != "" {
			return "timestamp" + p, ok
		}
		return "datetime" + p, ok
	case arrow.TIME32, arrow.TIME64:
		p, ok := fsp(t.(arrow.TemporalWithUnit).TimeUnit())
		return "time" + p, ok
	}
	return "", false
}

// fsp is MySQL's fractional-seconds precision of a time unit; MySQL
// stops at microseconds.
func fsp(u arrow.TimeUnit) (string, bool) {
	switch u {
	case arrow.Second:
		return "", true
	case arrow.Millisecond:
		return "(3)", true
	case arrow.Microsecond:
		return "(6)", true
	}
	return "", false
}

func isText(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		return true
	}
	return false
}

func backquote(name string) string { return "`" + strings.ReplaceAll(name, "`", "``") + "`" }

// filterShow applies SHOW ... LIKE 'pattern' (to the first column, with
// MySQL's % and _, ignoring case as fsql's names do) and SHOW ... WHERE
// (over the result's columns by name).
func (b *Binder) filterShow(s *ast.ShowStmt, st *Statement) (*Statement, error) {
	var conds []expr.Expr
	if s.Pattern != nil {
		c, err := b.likeFirst(st, s.Pattern)
		if err != nil {
			return nil, err
		}
		conds = append(conds, c)
	}
	if s.Where != nil {
		c, err := b.bindBool(s.Where, &exprCtx{sc: newScope(st.Plan.Schema(), nil)}, "SHOW ... WHERE")
		if err != nil {
			return nil, err
		}
		conds = append(conds, c)
	}
	for _, c := range conds {
		st.Plan = &planner.Filter{Child: st.Plan, Cond: c}
	}
	return st, nil
}

// likeFirst is lower(first column) LIKE lower(pattern).
func (b *Binder) likeFirst(st *Statement, p *ast.PatternLikeOrIlikeExpr) (expr.Expr, error) {
	if !p.IsLike {
		return nil, errs.New(errs.Unsupported, "ILIKE")
	}
	if p.Escape != '\\' && p.Escape != 0 {
		return nil, errs.New(errs.Unsupported, "LIKE ... ESCAPE '%c'", p.Escape)
	}
	sc := newScope(st.Plan.Schema(), nil)
	v, err := b.call("lower", sc.column(0))
	if err != nil {
		return nil, err
	}
	pat, err := b.bindScalar(&ast.FuncCallExpr{FnName: ast.NewCIStr("lower"), Args: []ast.ExprNode{p.Pattern}}, sc)
	if err != nil {
		return nil, err
	}
	like, err := b.call("like", v, pat)
	if err != nil || !p.Not {
		return like, err
	}
	return b.call("not", like)
}

// textRelation is a statement yielding rows of VARCHAR columns.
func textRelation(names []string, rows [][]string) *Statement {
	vals := make([][]expr.Expr, len(rows))
	for i, r := range rows {
		vals[i] = make([]expr.Expr, len(r))
		for j, v := range r {
			vals[i][j] = expr.NewLiteral(v, arrow.BinaryTypes.String)
		}
	}
	return relation(names, vals)
}

// relation is a statement yielding constant rows of VARCHAR columns
// (cells may be NULL).
func relation(names []string, rows [][]expr.Expr) *Statement {
	cols := make(planner.Schema, len(names))
	for i, n := range names {
		cols[i] = planner.Column{Name: n, Type: arrow.BinaryTypes.String}
	}
	return &Statement{Plan: &planner.Values{Rows: rows, Cols: cols}, Names: names}
}
