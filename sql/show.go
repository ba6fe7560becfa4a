package sql

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/fsql-dev/fsql/connectors/hive"
	"github.com/fsql-dev/fsql/connectors/memtable"
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
	cols := columnInfos(t)
	for i, f := range t.Schema.Fields() {
		c := cols[i]
		typ := c.typ
		if typ == "" {
			typ = strings.ToLower(f.Type.String())
		}
		nullable, key, comment := "YES", c.key, ""
		if c.notNull {
			nullable = "NO"
		}
		if i >= t.NumFileColumns {
			key, comment = "PART", "Hive partition column"
		}
		def := null
		if c.def != nil {
			def = str(defaultText(c.def))
		}
		if !s.Full {
			rows = append(rows, []expr.Expr{str(f.Name), str(typ), str(nullable), str(key), def, str("")})
			continue
		}
		coll := null
		if isText(f.Type) {
			coll = str("utf8mb4_0900_bin") // byte-wise, no padding: fsql's comparison
		}
		rows = append(rows, []expr.Expr{str(f.Name), str(typ), coll, str(nullable), str(key), def, str(""), str("select"), str(comment)})
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
	cols := columnInfos(t)
	for i, f := range t.Schema.Fields() {
		c := cols[i]
		if c.typ == "" {
			return "", errs.New(errs.Unsupported, "SHOW CREATE TABLE %s: column %s has type %s, which has no MySQL spelling", t.Name, f.Name, f.Type)
		}
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(backquote(f.Name) + " " + c.typ)
		if c.notNull {
			sb.WriteString(" NOT NULL")
		}
		switch {
		case c.def != nil && isNumber(c.def.Type):
			sb.WriteString(" DEFAULT " + defaultText(c.def)) // MariaDB leaves numbers unquoted
		case c.def != nil:
			sb.WriteString(" DEFAULT " + quote(defaultText(c.def)))
		case c.declared && !c.notNull:
			sb.WriteString(" DEFAULT NULL") // as MySQL spells a nullable column
		}
	}
	if def, ok := t.Source.(*memtable.Def); ok {
		for _, k := range def.Keys {
			names := make([]string, len(k.Columns))
			for i, c := range k.Columns {
				names[i] = backquote(def.Columns[c].Name)
			}
			if k.Primary {
				sb.WriteString(", PRIMARY KEY (" + strings.Join(names, ",") + ")")
			} else {
				sb.WriteString(", UNIQUE KEY " + backquote(k.Name) + " (" + strings.Join(names, ",") + ")")
			}
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

// columnInfo is what SHOW COLUMNS and SHOW CREATE TABLE say of a column.
type columnInfo struct {
	typ      string // MySQL's spelling; "" when it has none
	notNull  bool
	def      *expr.Literal // the DEFAULT value; nil for none (NULL)
	key      string        // PRI, UNI or MUL, as MySQL's Key column
	declared bool          // typ, notNull and def are a CREATE TABLE's
}

// columnInfos describes t's columns: an in-memory table's as its CREATE
// TABLE declared them (VARCHAR(10), NOT NULL, DEFAULT, keys: the Arrow
// types it holds them in are wider), any other table's from its Arrow
// schema (a column no file may hold NULL in is NOT NULL).
func columnInfos(t *hive.Table) []columnInfo {
	out := make([]columnInfo, t.Schema.NumFields())
	def, _ := t.Source.(*memtable.Def)
	for i, f := range t.Schema.Fields() {
		if def != nil && i < len(def.Columns) && def.Columns[i].Declared != "" {
			c := def.Columns[i]
			info := columnInfo{typ: c.Declared, notNull: c.NotNull, declared: true}
			if l, ok := c.Default.(*expr.Literal); ok && l.Value != nil {
				info.def = l
			}
			out[i] = info
			continue
		}
		typ, _ := mysqlType(f.Type)
		notNull := !f.Nullable
		if def != nil && i < len(def.Columns) {
			notNull = notNull || def.Columns[i].NotNull
		}
		out[i] = columnInfo{typ: typ, notNull: notNull}
	}
	if def == nil {
		return out
	}
	// MySQL's Key: PRI for a primary key's columns, UNI for the column of
	// a one-column unique key, MUL for the first column of a wider one.
	for _, k := range def.Keys {
		for j, c := range k.Columns {
			switch {
			case c >= len(out):
			case k.Primary:
				out[c].key = "PRI"
			case len(k.Columns) == 1 && out[c].key == "":
				out[c].key = "UNI"
			case j == 0 && out[c].key == "":
				out[c].key = "MUL"
			}
		}
	}
	return out
}

// defaultText is a DEFAULT value as MySQL's Default column shows it: the
// value's text, unquoted.
func defaultText(l *expr.Literal) string {
	switch v := l.Value.(type) {
	case string:
		return v
	case bool:
		if v {
			return "1"
		}
		return "0"
	}
	text := l.String()
	for _, p := range []string{"DATE '", "TIMESTAMP '", "TIME '", "CAST('"} {
		if rest, ok := strings.CutPrefix(text, p); ok {
			text, _, _ = strings.Cut(rest, "'")
		}
	}
	return text
}

// isNumber reports whether t is a numeric or boolean type.
func isNumber(t arrow.DataType) bool {
	return arrow.IsInteger(t.ID()) || arrow.IsFloating(t.ID()) || arrow.IsDecimal(t.ID()) || t.ID() == arrow.BOOL
}

// quote is s as a MySQL string literal.
func quote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, "'", "''").Replace(s) + "'"
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
