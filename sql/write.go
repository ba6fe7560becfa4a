package sql

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/fsql-dev/fsql/connectors/hive"
	"github.com/fsql-dev/fsql/connectors/memtable"
	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/planner"
)

// WriteTarget is what a write statement (CREATE TABLE ... AS SELECT,
// INSERT, REPLACE) writes: the statement's Plan yields the table's
// columns in Columns order (file columns, then partition columns), each
// of its column's type, and the engine runs it into the table's files.
type WriteTarget struct {
	// Table is the table's name as written.
	Table string
	// Dir is the table's folder.
	Dir string
	// Create makes a new table; IfNotExists makes an existing one a
	// no-op rather than an error.
	Create, IfNotExists bool
	// Overwrite (REPLACE INTO) replaces the table's rows: all of them in
	// an unpartitioned table, those of the partitions written in a
	// partitioned one.
	Overwrite bool
	// Columns are the table's columns: file columns, then Partitions.
	Columns []arrow.Field
	// Partitions names the partition columns, outermost folder first.
	Partitions []string
	// Compression is the Parquet codec a COMPRESSION table option chose
	// ("" for the default).
	Compression string
	// Static are the static partitions (PARTITION (`k=v`)) as folder
	// segments k=v.
	Static []string
	// Memory says the table is held in memory (package memtable): the
	// engine appends the rows, or replaces the table's with them.
	Memory bool
	// Export, for SELECT ... INTO OUTFILE, is the file or folder the rows
	// go to (Table is then the path as written, Dir the path resolved).
	Export *hive.ExportSpec
}

// Meta is the table's marker as fsql writes it.
func (w *WriteTarget) Meta() hive.TableMeta {
	m := hive.TableMeta{Format: "parquet", CreatedBy: "fsql", Partitions: append([]string(nil), w.Partitions...)}
	for _, c := range w.Columns {
		m.Columns = append(m.Columns, hive.MetaColumn{Name: c.Name, Type: hive.TypeNameOf(c.Type)})
	}
	return m
}

// bindCreateTable binds CREATE TABLE name [PARTITION BY KEY (cols)]
// [COMPRESSION = 'codec'] AS SELECT ...
func (b *Binder) bindCreateTable(n *ast.CreateTableStmt) (*Statement, error) {
	name := n.Table.Name.O
	if n.Select == nil {
		return b.bindCreateMemoryTable(n)
	}
	if len(n.Cols) > 0 {
		return nil, errs.New(errs.Unsupported, "column definitions in CREATE TABLE %s ... AS SELECT: the table takes the query's columns and types; rename and CAST them in the SELECT list", name)
	}
	if len(n.Constraints) > 0 {
		return nil, errs.New(errs.Unsupported, "keys and indexes in CREATE TABLE %s (fsql's tables are files without indexes)", name)
	}
	if err := checkNewTableName(name); err != nil {
		return nil, err
	}
	dir := filepath.Join(b.catalog.Dir, name)
	w := &WriteTarget{Table: name, Dir: dir, Create: true, IfNotExists: n.IfNotExists}
	if b.catalog.Has(name) && !n.IfNotExists {
		return nil, errs.New(errs.ErTableExistsError, "table '%s' already exists", name)
	}
	for _, o := range n.Options {
		if o.Tp != ast.TableOptionCompression {
			return nil, errs.New(errs.Unsupported, "table option %s in CREATE TABLE %s (fsql takes COMPRESSION = 'zstd|snappy|gzip|lz4|brotli|none')", tableOptionName(o), name)
		}
		w.Compression = o.StrValue
		if _, err := (hive.WriteOptions{Compression: o.StrValue}).Normalized(); err != nil {
			return nil, err
		}
	}
	q, err := b.bindQuery(n.Select, nil)
	if err != nil {
		return nil, err
	}
	if err := checkDecorrelated(q.plan); err != nil {
		return nil, err
	}
	if q.plan, err = intBooleans(q.plan); err != nil {
		return nil, err
	}
	schema := q.plan.Schema()
	seen := map[string]bool{}
	for i, c := range schema {
		cn := q.names[i]
		if seen[strings.ToLower(cn)] {
			return nil, errs.New(errs.Semantic, "duplicate column name '%s' in CREATE TABLE %s AS SELECT; give the columns distinct aliases", cn, name)
		}
		seen[strings.ToLower(cn)] = true
		if err := hive.WritableType(c.Type); err != nil {
			return nil, errs.Wrap(errs.Unsupported, "column %s of CREATE TABLE %s: %w", cn, name, err)
		}
	}
	var partIdx []int
	if p := n.Partition; p != nil {
		if len(p.ColumnNames) == 0 {
			return nil, errs.New(errs.Unsupported, "PARTITION BY KEY () in CREATE TABLE %s: name the partition columns", name)
		}
		for _, cn := range p.ColumnNames {
			i := indexOfName(q.names, cn.Name.O)
			if i < 0 {
				return nil, errs.New(errs.UnknownName, "partition column '%s' is not a column of the query of CREATE TABLE %s (columns: %s)", cn.Name.O, name, strings.Join(q.names, ", "))
			}
			for _, j := range partIdx {
				if j == i {
					return nil, errs.New(errs.Semantic, "partition column '%s' named twice in CREATE TABLE %s", cn.Name.O, name)
				}
			}
			if !hive.PartitionTypeOK(storageType(schema[i].Type)) {
				return nil, errs.New(errs.Unsupported, "partition column %s of CREATE TABLE %s is %s; a partition folder holds an INT, BIGINT, DATE or string: CAST it", cn.Name.O, name, expr.TypeName(schema[i].Type))
			}
			partIdx = append(partIdx, i)
		}
		if len(partIdx) == len(schema) {
			return nil, errs.New(errs.Semantic, "CREATE TABLE %s partitions by every column; a table needs at least one column in its files", name)
		}
	}
	// The files hold the other columns in query order; partition columns
	// come last, as Hive lays them out.
	isPart := map[int]bool{}
	for _, i := range partIdx {
		isPart[i] = true
	}
	var order []int
	for i := range schema {
		if !isPart[i] {
			order = append(order, i)
		}
	}
	order = append(order, partIdx...)
	exprs := make([]expr.Expr, len(order))
	names := make([]string, len(order))
	for k, i := range order {
		exprs[k] = expr.NewColumn(i, schema[i].Type, q.names[i])
		names[k] = q.names[i]
		w.Columns = append(w.Columns, arrow.Field{Name: q.names[i], Type: storageType(schema[i].Type), Nullable: true})
	}
	for _, i := range partIdx {
		w.Partitions = append(w.Partitions, q.names[i])
	}
	return &Statement{Plan: &planner.Project{Child: q.plan, Exprs: exprs, Names: names}, Names: names, Write: w}, nil
}

// bindInsert binds INSERT INTO t [PARTITION (`k=v`, ...)] [(cols)]
// SELECT ... | VALUES (...), ..., and REPLACE INTO.
func (b *Binder) bindInsert(n *ast.InsertStmt) (*Statement, error) {
	what := "INSERT"
	if n.IsReplace {
		what = "REPLACE"
	}
	tn, err := insertTable(n)
	if err != nil {
		return nil, err
	}
	name := tn.Name.O
	if hive.IsPathName(name) {
		return nil, errs.New(errs.Unsupported, "%s INTO a path (%s): fsql writes tables of the data directory", what, name)
	}
	t, err := b.catalog.Table(name)
	if err != nil {
		return nil, err
	}
	memory := t.Format == hive.Memory
	if memory && len(n.PartitionNames) > 0 {
		return nil, errs.New(errs.Unsupported, "%s INTO %s PARTITION (...): %s is a table held in memory, without partitions", what, name, name)
	}
	if !t.Managed && !memory {
		return nil, errs.New(errs.Unsupported, "%s INTO %s: fsql writes only tables it created (their folder holds %s/), since only those publish a statement's files at once; create one with CREATE TABLE new AS SELECT * FROM %s", what, name, hive.MarkerDir, name)
	}
	w := &WriteTarget{Table: t.Name, Dir: t.Dir, Overwrite: n.IsReplace, Partitions: append([]string(nil), t.PartitionColumns...), Memory: memory}
	def, _ := t.Source.(*memtable.Def)
	// Static partitions: PARTITION (`k=v`) fixes partition column k.
	static := map[int]expr.Expr{}
	for _, pn := range n.PartitionNames {
		for _, part := range strings.Split(pn.O, "/") {
			k, v, ok := strings.Cut(part, "=")
			ci := -1
			for j, pc := range t.PartitionColumns {
				if ok && strings.EqualFold(pc, k) {
					ci = t.NumFileColumns + j
				}
			}
			switch {
			case !ok:
				return nil, errs.New(errs.Semantic, "%s INTO %s PARTITION (%s): name each static partition as `column=value`", what, name, pn.O)
			case ci < 0:
				return nil, errs.New(errs.UnknownName, "%s INTO %s PARTITION (%s): %s is not a partition column of %s (partition columns: %s)", what, name, pn.O, k, name, strings.Join(t.PartitionColumns, ", "))
			case static[ci] != nil:
				return nil, errs.New(errs.Semantic, "%s INTO %s: partition column %s is given twice", what, name, k)
			}
			typ := t.Schema.Field(ci).Type
			val, err := hive.ParsePartitionValue(v, typ)
			if err != nil {
				return nil, errs.Wrap(errs.Type, "%s INTO %s PARTITION (%s): %w", what, name, pn.O, err)
			}
			folder, err := hive.FolderValue(val)
			if err != nil {
				return nil, errs.Wrap(errs.Semantic, "%s INTO %s PARTITION (%s): %w", what, name, pn.O, err)
			}
			static[ci] = expr.NewLiteral(val, typ)
			w.Static = append(w.Static, hive.EscapePartitionValue(t.Schema.Field(ci).Name)+"="+folder)
		}
	}
	// src[k] is the table column the statement's k-th value goes to.
	var src []int
	if len(n.Columns) == 0 {
		for i := 0; i < t.Schema.NumFields(); i++ {
			if static[i] == nil {
				src = append(src, i)
			}
		}
	} else {
		seen := map[int]bool{}
		for _, c := range n.Columns {
			ci := -1
			for j, f := range t.Schema.Fields() {
				if strings.EqualFold(f.Name, c.Name.O) {
					ci = j
				}
			}
			switch {
			case ci < 0:
				return nil, errs.New(errs.ErBadFieldError, "unknown column '%s' in table %s (columns: %s)", c.Name.O, name, fieldNames(t.Schema))
			case seen[ci]:
				return nil, errs.New(errs.Semantic, "column '%s' listed twice in %s INTO %s", c.Name.O, what, name)
			case static[ci] != nil:
				return nil, errs.New(errs.Semantic, "column '%s' of %s INTO %s has a static value in PARTITION (...)", c.Name.O, what, name)
			}
			seen[ci] = true
			src = append(src, ci)
		}
	}
	var plan planner.Plan
	var types []arrow.DataType
	switch {
	case n.Select != nil:
		q, err := b.bindQuery(n.Select, nil)
		if err != nil {
			return nil, err
		}
		if err := checkDecorrelated(q.plan); err != nil {
			return nil, err
		}
		if len(q.plan.Schema()) != len(src) {
			return nil, errs.New(errs.ErWrongValueCountOnRow, "%s INTO %s: the query yields %d columns, the statement writes %d (%s)", what, name, len(q.plan.Schema()), len(src), srcNames(t.Schema, src))
		}
		plan = q.plan
		for _, c := range q.plan.Schema() {
			types = append(types, c.Type)
		}
	default:
		v, err := b.bindInsertValues(n.Lists, t.Schema, src, what, name)
		if err != nil {
			return nil, err
		}
		plan = v
		for _, k := range src {
			types = append(types, t.Schema.Field(k).Type)
		}
	}
	from := map[int]int{}
	for k, ci := range src {
		from[ci] = k
	}
	exprs := make([]expr.Expr, t.Schema.NumFields())
	names := make([]string, len(exprs))
	for i, f := range t.Schema.Fields() {
		names[i] = f.Name
		w.Columns = append(w.Columns, arrow.Field{Name: f.Name, Type: f.Type, Nullable: true})
		if static[i] != nil {
			exprs[i] = static[i]
			continue
		}
		var e expr.Expr = expr.Null(arrow.Null)
		if def != nil && def.Columns[i].Default != nil {
			e = def.Columns[i].Default
		}
		if k, ok := from[i]; ok {
			e = expr.NewColumn(k, types[k], f.Name)
		}
		c, err := expr.NewCast(e, f.Type)
		if err != nil {
			return nil, errs.Wrap(errs.Type, "%s INTO %s: column %s is %s, the statement gives %s: %w", what, name, f.Name, expr.TypeName(f.Type), expr.TypeName(e.DataType()), err)
		}
		exprs[i] = c
	}
	return &Statement{Plan: &planner.Project{Child: plan, Exprs: exprs, Names: names}, Names: names, Write: w}, nil
}

// bindInsertValues binds VALUES rows, each value cast to the type of the
// table column it goes to.
func (b *Binder) bindInsertValues(lists [][]ast.ExprNode, s *arrow.Schema, src []int, what, name string) (planner.Plan, error) {
	sc := newScope(planner.Schema{}, nil)
	cols := make(planner.Schema, len(src))
	for k, ci := range src {
		cols[k] = planner.Column{Name: s.Field(ci).Name, Type: s.Field(ci).Type}
	}
	rows := make([][]expr.Expr, len(lists))
	for r, list := range lists {
		if len(list) != len(src) {
			return nil, errs.New(errs.ErWrongValueCountOnRow, "%s INTO %s: row %d has %d values, the statement writes %d columns (%s)", what, name, r+1, len(list), len(src), srcNames(s, src))
		}
		rows[r] = make([]expr.Expr, len(src))
		for k, e := range list {
			v, err := b.bindScalar(e, sc)
			if err != nil {
				return nil, err
			}
			c, err := expr.NewCast(v, cols[k].Type)
			if err != nil {
				return nil, errs.Wrap(errs.Type, "%s INTO %s: row %d: column %s is %s, the value is %s: %w", what, name, r+1, cols[k].Name, expr.TypeName(cols[k].Type), expr.TypeName(v.DataType()), err)
			}
			rows[r][k] = c
		}
		if err := b.checkCtx(); err != nil {
			return nil, err
		}
	}
	return &planner.Values{Rows: rows, Cols: cols}, nil
}

func srcNames(s *arrow.Schema, src []int) string {
	names := make([]string, len(src))
	for k, ci := range src {
		names[k] = s.Field(ci).Name
	}
	return strings.Join(names, ", ")
}

// DropTarget is what DROP TABLE removes: tables fsql created.
type DropTarget struct {
	// Names and Dirs are the tables' names as written and their folders.
	Names, Dirs []string
	// Memory names the in-memory tables to drop.
	Memory []string
}

// bindDropTable binds DROP TABLE [IF EXISTS] t, ...
func (b *Binder) bindDropTable(n *ast.DropTableStmt) (*Statement, error) {
	d := &DropTarget{}
	for _, tn := range n.Tables {
		if b.catalog.IsMemory(tn.Name.O) {
			if _, ok := b.catalog.Folder(tn.Name.O); ok {
				return nil, errs.New(errs.ErNonUniqTable, "DROP TABLE %s: the name is both a table held in memory and a folder of the data directory; rename the folder first", tn.Name.O)
			}
			d.Memory = append(d.Memory, tn.Name.O)
			continue
		}
		dir, ok := b.catalog.Folder(tn.Name.O)
		if !ok {
			if n.IfExists {
				continue
			}
			return nil, errs.New(errs.ErBadTableError, "unknown table '%s'", tn.Name.O)
		}
		d.Names, d.Dirs = append(d.Names, tn.Name.O), append(d.Dirs, dir)
	}
	return &Statement{Drop: d}, nil
}

// insertTable is the one table an INSERT names.
func insertTable(n *ast.InsertStmt) (*ast.TableName, error) {
	if n.Table != nil && n.Table.TableRefs != nil && n.Table.TableRefs.Right == nil {
		if ts, ok := n.Table.TableRefs.Left.(*ast.TableSource); ok {
			if tn, ok := ts.Source.(*ast.TableName); ok {
				if len(tn.PartitionNames) > 0 {
					n.PartitionNames = append(n.PartitionNames, tn.PartitionNames...)
				}
				return tn, nil
			}
		}
	}
	return nil, errs.New(errs.Unsupported, "INSERT into something other than one table")
}

// checkNewTableName refuses names a listing would skip or that would
// leave the data directory.
func checkNewTableName(name string) error {
	switch {
	case name == "" || strings.ContainsAny(name, "/\\\x00") || name == "." || name == "..":
		return errs.New(errs.Semantic, "'%s' cannot name a table folder", name)
	case strings.HasPrefix(name, "_") || strings.HasPrefix(name, "."):
		return errs.New(errs.Semantic, "table name '%s' starts with '%s', which readers of Hive folders skip; choose another name", name, name[:1])
	case hive.IsPathName(name):
		return errs.New(errs.Semantic, "table name '%s' looks like a path (fsql reads such names as files); choose a plain name", name)
	}
	return nil
}

// storageType is t without a collation: files hold plain strings.
// intBooleans casts p's BOOLEAN columns to INT, for CREATE TABLE ... AS
// SELECT. MySQL has no boolean type: the column of a comparison is an
// INT(1) and a BOOLEAN column a TINYINT(1), so the table holds what a
// query of it shows (1 and 0) and what a later INSERT may put there
// (5 stays 5, where a Parquet BOOLEAN would make it 1). p itself when
// it has no BOOLEAN column.
func intBooleans(p planner.Plan) (planner.Plan, error) {
	s := p.Schema()
	if !slices.ContainsFunc(s, func(c planner.Column) bool { return c.Type.ID() == arrow.BOOL }) {
		return p, nil
	}
	proj := &planner.Project{Child: p}
	for i, c := range s {
		e := expr.Expr(expr.NewColumn(i, c.Type, c.Name))
		if c.Type.ID() == arrow.BOOL {
			var err error
			if e, err = expr.NewCast(e, arrow.PrimitiveTypes.Int32); err != nil {
				return nil, err
			}
		}
		proj.Exprs = append(proj.Exprs, e)
		proj.Names = append(proj.Names, c.Name)
		proj.Tables = append(proj.Tables, c.Table)
	}
	return proj, nil
}

func storageType(t arrow.DataType) arrow.DataType {
	if et, ok := t.(arrow.ExtensionType); ok {
		return et.StorageType()
	}
	return t
}

func indexOfName(names []string, name string) int {
	for i, n := range names {
		if strings.EqualFold(n, name) {
			return i
		}
	}
	return -1
}

func fieldNames(s *arrow.Schema) string {
	names := make([]string, s.NumFields())
	for i, f := range s.Fields() {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}

func tableOptionName(o *ast.TableOption) string {
	switch o.Tp {
	case ast.TableOptionEngine:
		return "ENGINE"
	case ast.TableOptionCharset:
		return "CHARSET"
	case ast.TableOptionCollate:
		return "COLLATE"
	case ast.TableOptionComment:
		return "COMMENT"
	}
	return fmt.Sprintf("#%d", o.Tp)
}
