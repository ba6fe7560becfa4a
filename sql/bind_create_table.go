package sql

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/types"

	"github.com/fsql-dev/fsql/connectors/hive"
	"github.com/fsql-dev/fsql/connectors/memtable"
	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/planner"
)

// MemoryCreate is CREATE TABLE t (col type, ...) without AS SELECT: a
// table held in memory for the engine's lifetime (package memtable).
type MemoryCreate struct {
	Def         *memtable.Def
	IfNotExists bool
}

// bindCreateMemoryTable binds CREATE TABLE [IF NOT EXISTS] t (col type
// [NOT NULL | NULL] [DEFAULT literal] [COMMENT '...'], ... [, INDEX|KEY
// (cols)]). The columns' MySQL types map to the engine's (INT and the
// narrower integers to INT with their ranges checked on write, FLOAT to
// DOUBLE rounded to single precision, CHAR/VARCHAR(n) to strings of at
// most n characters, DATETIME(n) to microseconds rounded to n digits).
func (b *Binder) bindCreateMemoryTable(n *ast.CreateTableStmt) (*Statement, error) {
	name := n.Table.Name.O
	if len(n.Cols) == 0 {
		return nil, errs.New(errs.Unsupported, "CREATE TABLE %s without columns or AS SELECT: list the columns, CREATE TABLE %s (a INT, ...), or write CREATE TABLE %s AS SELECT ...", name, name, name)
	}
	if err := checkNewTableName(name); err != nil {
		return nil, err
	}
	if n.Partition != nil {
		return nil, errs.New(errs.Unsupported, "PARTITION BY in CREATE TABLE %s (...): a table held in memory has no partition folders; partition tables written to the data directory, CREATE TABLE %s PARTITION BY KEY (...) AS SELECT ...", name, name)
	}
	if b.catalog != nil && b.catalog.Has(name) && !n.IfNotExists {
		return nil, errs.New(errs.ErTableExistsError, "table '%s' already exists", name)
	}
	for _, o := range n.Options {
		switch o.Tp {
		case ast.TableOptionEngine, ast.TableOptionComment:
			// Where MySQL would store the rows and a remark: neither
			// changes an answer.
		case ast.TableOptionCharset, ast.TableOptionCollate:
			if !utf8Charset(strings.ToLower(o.StrValue)) && !strings.HasPrefix(strings.ToLower(o.StrValue), "utf8") {
				return nil, errs.New(errs.Unsupported, "table option %s = %s in CREATE TABLE %s (fsql's strings are UTF-8, compared byte-wise)", tableOptionName(o), o.StrValue, name)
			}
		default:
			return nil, errs.New(errs.Unsupported, "table option %s in CREATE TABLE %s (a table held in memory takes ENGINE, COMMENT and a UTF-8 CHARSET only)", tableOptionName(o), name)
		}
	}
	def := &memtable.Def{Name: name}
	seen := map[string]bool{}
	for i, cd := range n.Cols {
		col, key, err := b.columnDef(name, cd)
		if err != nil {
			return nil, err
		}
		if k := strings.ToLower(col.Name); seen[k] {
			return nil, errs.New(errs.Semantic, "duplicate column name '%s' in CREATE TABLE %s", col.Name, name)
		} else {
			seen[k] = true
		}
		if key != nil {
			key.Columns = []int{i}
			def.Keys = append(def.Keys, *key)
		}
		def.Columns = append(def.Columns, col)
	}
	for _, c := range n.Constraints {
		switch c.Tp {
		case ast.ConstraintIndex, ast.ConstraintKey:
			// An index only speeds up lookups; it cannot change an
			// answer, so it is accepted and not built.
			if _, err := keyColumns(name, def, c.Keys); err != nil {
				return nil, err
			}
		case ast.ConstraintPrimaryKey, ast.ConstraintUniq, ast.ConstraintUniqKey, ast.ConstraintUniqIndex:
			cols, err := keyColumns(name, def, c.Keys)
			if err != nil {
				return nil, err
			}
			k := memtable.Key{Name: c.Name, Columns: cols, Primary: c.Tp == ast.ConstraintPrimaryKey}
			if k.Primary {
				k.Name = "PRIMARY"
				for _, ci := range cols {
					def.Columns[ci].NotNull = true
				}
			} else if k.Name == "" {
				k.Name = def.Columns[cols[0]].Name
			}
			def.Keys = append(def.Keys, k)
		default:
			return nil, errs.New(errs.Unsupported, "a %s constraint in CREATE TABLE %s", constraintName(c.Tp), name)
		}
	}
	return &Statement{CreateMemory: &MemoryCreate{Def: def, IfNotExists: n.IfNotExists}}, nil
}

// keyColumns resolves the columns of a key or index of table def.
func keyColumns(table string, def *memtable.Def, keys []*ast.IndexPartSpecification) ([]int, error) {
	var out []int
	for _, k := range keys {
		if k.Expr != nil || k.Column == nil {
			return nil, errs.New(errs.Unsupported, "a key on an expression in table %s", table)
		}
		found := -1
		for i, c := range def.Columns {
			if strings.EqualFold(c.Name, k.Column.Name.O) {
				found = i
			}
		}
		if found < 0 {
			return nil, errs.New(errs.ErBadFieldError, "key column '%s' doesn't exist in table %s", k.Column.Name.O, table)
		}
		if k.Length > 0 {
			return nil, errs.New(errs.Unsupported, "a key on a prefix of column %s(%d) in table %s", k.Column.Name.O, k.Length, table)
		}
		out = append(out, found)
	}
	return out, nil
}

// columnDef binds one column definition, and the key it declares
// (PRIMARY KEY, UNIQUE; its Columns left for the caller).
func (b *Binder) columnDef(table string, cd *ast.ColumnDef) (memtable.Column, *memtable.Key, error) {
	col, err := columnType(table, cd.Name.Name.O, cd.Tp)
	if err != nil {
		return col, nil, err
	}
	var key *memtable.Key
	for _, o := range cd.Options {
		switch o.Tp {
		case ast.ColumnOptionNotNull:
			col.NotNull = true
		case ast.ColumnOptionNull:
			col.NotNull = false
		case ast.ColumnOptionComment:
		case ast.ColumnOptionDefaultValue:
			d, err := b.columnDefault(table, &col, o.Expr)
			if err != nil {
				return col, nil, err
			}
			col.Default = d
		case ast.ColumnOptionPrimaryKey:
			col.NotNull = true
			key = &memtable.Key{Name: "PRIMARY", Primary: true}
		case ast.ColumnOptionUniqKey:
			key = &memtable.Key{Name: col.Name}
		case ast.ColumnOptionCollate:
			if !strings.HasPrefix(strings.ToLower(o.StrValue), "utf8") && o.StrValue != "binary" {
				return col, nil, errs.New(errs.Unsupported, "COLLATE %s on column %s of CREATE TABLE %s (a column compares byte-wise; COLLATE in a query compares otherwise)", o.StrValue, col.Name, table)
			}
			if o.StrValue != "binary" && o.StrValue != "utf8mb4_bin" && o.StrValue != "utf8_bin" {
				return col, nil, errs.New(errs.Unsupported, "COLLATE %s on column %s of CREATE TABLE %s: a column compares byte-wise (utf8mb4_bin); write COLLATE in the queries that compare otherwise", o.StrValue, col.Name, table)
			}
		default:
			return col, nil, errs.New(errs.Unsupported, "column option %s on column %s of CREATE TABLE %s", columnOptionName(o.Tp), col.Name, table)
		}
	}
	if col.NotNull && col.Default != nil {
		if l, ok := col.Default.(*expr.Literal); ok && l.Value == nil {
			return col, nil, errs.New(errs.Semantic, "invalid default value for '%s' in CREATE TABLE %s: the column is NOT NULL", col.Name, table)
		}
	}
	if key != nil && key.Primary && col.Default != nil {
		if l, ok := col.Default.(*expr.Literal); ok && l.Value == nil {
			return col, nil, errs.New(errs.Semantic, "invalid default value for '%s' in CREATE TABLE %s: the column is a primary key", col.Name, table)
		}
	}
	return col, key, nil
}

// columnDefault binds DEFAULT e: a constant of the column's type.
func (b *Binder) columnDefault(table string, col *memtable.Column, e ast.ExprNode) (expr.Expr, error) {
	v, err := b.bindScalar(e, newScope(planner.Schema{}, nil))
	if err != nil {
		return nil, err
	}
	c, err := expr.NewCast(v, col.Type)
	if err != nil {
		return nil, errs.Wrap(errs.Type, "invalid default value for '%s' in CREATE TABLE %s: %w", col.Name, table, err)
	}
	f, err := expr.ConstantFold(c, memory.DefaultAllocator)
	if err != nil {
		return nil, errs.Wrap(errs.Type, "invalid default value for '%s' in CREATE TABLE %s: %w", col.Name, table, err)
	}
	if _, ok := f.(*expr.Literal); !ok {
		return nil, errs.New(errs.Unsupported, "default value %s for '%s' in CREATE TABLE %s: fsql takes a constant", f, col.Name, table)
	}
	return f, nil
}

// declaredType spells a column's type as MariaDB's DESCRIBE does:
// int(11), tinyint(3) unsigned, varchar(10), decimal(5,2).
func declaredType(tp *types.FieldType) string {
	if mysql.HasUnsignedFlag(tp.GetFlag()) && tp.GetFlen() == types.UnspecifiedLength {
		// An unsigned integer's default display width is one less (no sign).
		widths := map[byte]int{mysql.TypeTiny: 3, mysql.TypeShort: 5, mysql.TypeInt24: 8, mysql.TypeLong: 10, mysql.TypeLonglong: 20}
		if w, ok := widths[tp.GetType()]; ok {
			tp = tp.Clone()
			tp.SetFlen(w)
		}
	}
	return strings.ToLower(tp.InfoSchemaStr())
}

// columnType maps a column's MySQL type to what an in-memory table holds,
// with the checks that keep MySQL's meaning.
func columnType(table, name string, tp *types.FieldType) (memtable.Column, error) {
	col := memtable.Column{Name: name, Declared: declaredType(tp), FracDigits: 6}
	unsigned := mysql.HasUnsignedFlag(tp.GetFlag())
	bound := func(lo, hi int64) { col.Bounded, col.Min, col.Max = true, lo, hi }
	switch tp.GetType() {
	case mysql.TypeTiny:
		col.Type = arrow.PrimitiveTypes.Int32
		if unsigned {
			bound(0, 255)
		} else {
			bound(-128, 127)
		}
	case mysql.TypeShort:
		col.Type = arrow.PrimitiveTypes.Int32
		if unsigned {
			bound(0, 65535)
		} else {
			bound(-32768, 32767)
		}
	case mysql.TypeInt24:
		col.Type = arrow.PrimitiveTypes.Int32
		if unsigned {
			bound(0, 16777215)
		} else {
			bound(-8388608, 8388607)
		}
	case mysql.TypeLong:
		col.Type = arrow.PrimitiveTypes.Int32
		if unsigned {
			col.Type = arrow.PrimitiveTypes.Int64
			bound(0, 4294967295)
		}
	case mysql.TypeLonglong:
		col.Type = arrow.PrimitiveTypes.Int64
		if unsigned {
			col.Type = arrow.PrimitiveTypes.Uint64
		}
	case mysql.TypeDouble:
		col.Type = arrow.PrimitiveTypes.Float64
	case mysql.TypeFloat:
		col.Type, col.Float32 = arrow.PrimitiveTypes.Float64, true
		if tp.GetFlen() > 24 { // FLOAT(p) with p > 24 is DOUBLE
			col.Float32 = false
		}
	case mysql.TypeNewDecimal:
		p, s := tp.GetFlen(), tp.GetDecimal()
		if p <= 0 {
			p = 10
		}
		if s < 0 {
			s = 0
		}
		if p > 38 || s > p {
			return col, errs.New(errs.Unsupported, "column %s of CREATE TABLE %s is DECIMAL(%d,%d): fsql's decimals have a precision of at most 38 and a scale of at most the precision", name, table, p, s)
		}
		col.Type = &arrow.Decimal128Type{Precision: int32(p), Scale: int32(s)}
	case mysql.TypeDate:
		col.Type = arrow.FixedWidthTypes.Date32
	case mysql.TypeDatetime, mysql.TypeTimestamp, mysql.TypeDuration:
		col.Type = expr.DatetimeType
		if tp.GetType() == mysql.TypeTimestamp {
			col.Type = expr.TimestampType
		} else if tp.GetType() == mysql.TypeDuration {
			col.Type = expr.TimeType
		}
		col.FracDigits = max(tp.GetDecimal(), 0)
		if col.FracDigits > 6 {
			return col, errs.New(errs.Semantic, "column %s of CREATE TABLE %s: fractional seconds precision %d is above 6", name, table, col.FracDigits)
		}
	case mysql.TypeVarchar, mysql.TypeVarString, mysql.TypeString, mysql.TypeBlob, mysql.TypeTinyBlob, mysql.TypeMediumBlob, mysql.TypeLongBlob:
		binary := tp.GetCharset() == "binary"
		switch {
		case binary && tp.GetType() == mysql.TypeString:
			return col, errs.New(errs.Unsupported, "column %s of CREATE TABLE %s is BINARY(n), which MySQL pads with zero bytes; use VARBINARY(n)", name, table)
		case binary:
			col.Type = arrow.BinaryTypes.Binary
		case !utf8Charset(tp.GetCharset()):
			return col, errs.New(errs.Unsupported, "column %s of CREATE TABLE %s has character set %s (fsql's strings are UTF-8)", name, table, tp.GetCharset())
		default:
			col.Type = arrow.BinaryTypes.String
			if tp.GetType() == mysql.TypeString {
				col.Char = true
				col.MaxChars = max(tp.GetFlen(), 1) // CHAR is CHAR(1)
			} else if tp.GetType() != mysql.TypeBlob && tp.GetType() != mysql.TypeTinyBlob && tp.GetType() != mysql.TypeMediumBlob && tp.GetType() != mysql.TypeLongBlob {
				col.MaxChars = max(tp.GetFlen(), 0)
			} else if tp.GetType() == mysql.TypeTinyBlob {
				col.MaxChars = 255
			}
		}
	default:
		return col, errs.New(errs.Unsupported, "column %s of CREATE TABLE %s has type %s, which fsql's tables do not hold (they hold the integers, FLOAT, DOUBLE, DECIMAL, CHAR, VARCHAR, TEXT, VARBINARY, BLOB, DATE, DATETIME, TIMESTAMP and TIME)", name, table, strings.ToUpper(tp.CompactStr()))
	}
	if err := hive.MemoryType(col.Type); err != nil {
		return col, errs.Wrap(errs.Internal, "column %s of CREATE TABLE %s: %w", name, table, err)
	}
	return col, nil
}

// bindCreateIndex binds CREATE INDEX on an in-memory table: accepted and
// not built, since an index only speeds up lookups and cannot change an
// answer (scripts such as SQLite's sqllogictest corpus create them).
// UNIQUE would refuse rows, which fsql does not enforce, so it fails; so
// does an index on a table of the data directory, which fsql does not
// keep (its files carry min/max statistics per row group instead).
func (b *Binder) bindCreateIndex(n *ast.CreateIndexStmt) (*Statement, error) {
	name := n.Table.Name.O
	t, err := b.table(name)
	if err != nil {
		return nil, err
	}
	if t.Format != hive.Memory {
		return nil, errs.New(errs.Unsupported, "CREATE INDEX %s ON %s: fsql keeps no indexes on the tables of its data directory (their Parquet files carry min/max statistics per row group instead)", n.IndexName, name)
	}
	if n.KeyType != ast.IndexKeyTypeNone && n.KeyType != ast.IndexKeyTypeUnique {
		return nil, errs.New(errs.Unsupported, "CREATE %s INDEX %s ON %s", strings.ToUpper(indexKeyName(n.KeyType)), n.IndexName, name)
	}
	var cols []int
	for _, k := range n.IndexPartSpecifications {
		if k.Expr != nil || k.Column == nil {
			return nil, errs.New(errs.Unsupported, "an index on an expression in CREATE INDEX %s ON %s", n.IndexName, name)
		}
		i := indexOfName(fieldNamesOf(t.Schema), k.Column.Name.O)
		if i < 0 {
			return nil, errs.New(errs.ErBadFieldError, "unknown column '%s' in CREATE INDEX %s ON %s (columns: %s)", k.Column.Name.O, n.IndexName, name, fieldNames(t.Schema))
		}
		cols = append(cols, i)
	}
	if n.KeyType == ast.IndexKeyTypeUnique {
		// A unique index refuses rows: it is a key the table enforces.
		return &Statement{AddKey: &AddKey{Table: t.Name, Key: memtable.Key{Name: n.IndexName, Columns: cols}}}, nil
	}
	return &Statement{NoOp: true}, nil
}

// AddKey is CREATE UNIQUE INDEX on an in-memory table: a key its rows
// must satisfy from now on.
type AddKey struct {
	Table string
	Key   memtable.Key
}

func fieldNamesOf(s *arrow.Schema) []string {
	out := make([]string, s.NumFields())
	for i, f := range s.Fields() {
		out[i] = f.Name
	}
	return out
}

func indexKeyName(t ast.IndexKeyType) string {
	switch t {
	case ast.IndexKeyTypeUnique:
		return "unique"
	case ast.IndexKeyTypeSpatial:
		return "spatial"
	case ast.IndexKeyTypeFulltext:
		return "fulltext"
	}
	return fmt.Sprintf("#%d", t)
}

func constraintName(t ast.ConstraintType) string {
	switch t {
	case ast.ConstraintForeignKey:
		return "FOREIGN KEY"
	case ast.ConstraintFulltext:
		return "FULLTEXT"
	case ast.ConstraintCheck:
		return "CHECK"
	case ast.ConstraintVector:
		return "VECTOR"
	}
	return fmt.Sprintf("#%d", t)
}

func columnOptionName(t ast.ColumnOptionType) string {
	switch t {
	case ast.ColumnOptionAutoIncrement:
		return "AUTO_INCREMENT"
	case ast.ColumnOptionOnUpdate:
		return "ON UPDATE"
	case ast.ColumnOptionFulltext:
		return "FULLTEXT"
	case ast.ColumnOptionGenerated:
		return "a generated column (AS ...)"
	case ast.ColumnOptionReference:
		return "REFERENCES"
	case ast.ColumnOptionCheck:
		return "CHECK"
	case ast.ColumnOptionColumnFormat:
		return "COLUMN_FORMAT"
	case ast.ColumnOptionStorage:
		return "STORAGE"
	case ast.ColumnOptionAutoRandom:
		return "AUTO_RANDOM"
	}
	return fmt.Sprintf("#%d", t)
}

// CheckTableName refuses a name a query could not name a table by: one
// that looks like a path, is hidden from listings (a leading '_' or '.')
// or leaves a folder.
func CheckTableName(name string) error { return checkNewTableName(name) }
