package sql

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec"
)

// The binder reads the AST nodes it understands field by field; a field it
// never looks at would let a clause run as if it were absent (TABLESAMPLE,
// AS OF TIMESTAMP, FOR UPDATE, INTO OUTFILE, ...), which is a wrong answer,
// not an error. astFields therefore classifies every field of every node
// type the binder accepts, and checkStatement enforces the classification
// before binding: a field that is neither bound nor harmless must hold its
// zero value. TestASTFieldsClassified reflects over the same types, so a
// parser upgrade that adds a field fails until someone classifies it.

// fieldUse says what fsql does with one AST field.
type fieldUse int

const (
	// useBound: the binder reads the field and implements its meaning (or
	// fails naming the construct for values it does not run).
	useBound fieldUse = iota
	// useParser: the parser's bookkeeping (text offsets, braces, which
	// syntax spelled the node); it has no meaning of its own.
	useParser
	// useIgnored: accepted and ignored because it cannot change an answer
	// (optimizer hints, cache and priority options). README lists them.
	useIgnored
	// useRejected: any value but the zero value fails, naming the clause.
	useRejected
	// useChecked: check decides which values are accepted.
	useChecked
	// useNested: a struct (or pointer to one) whose fields are classified
	// under its own type in astFields.
	useNested
)

type fieldRule struct {
	use fieldUse
	// clause names the construct in the error (rejected fields).
	clause string
	// check returns nil for an accepted value (checked fields).
	check func(v reflect.Value) error
}

func bind() fieldRule                             { return fieldRule{use: useBound} }
func internal() fieldRule                         { return fieldRule{use: useParser} }
func ignore() fieldRule                           { return fieldRule{use: useIgnored} }
func reject(clause string) fieldRule              { return fieldRule{use: useRejected, clause: clause} }
func check(f func(reflect.Value) error) fieldRule { return fieldRule{use: useChecked, check: f} }
func nest() fieldRule                             { return fieldRule{use: useNested} }

// The parser's unexported base structs (text, offsets, the TiDB type slot
// of expressions) are parser bookkeeping wherever they are embedded.
var baseFields = map[string]bool{"node": true, "stmtNode": true, "dmlNode": true, "ddlNode": true, "exprNode": true, "funcNode": true, "TexprNode": true}

func typeOf[T any]() reflect.Type { return reflect.TypeFor[T]() }

// astFields classifies the fields of every AST type the binder accepts.
// Embedded parser bases (baseFields) are left out.
var astFields = map[reflect.Type]map[string]fieldRule{
	typeOf[ast.ExplainStmt](): {
		"Stmt":       bind(),
		"Analyze":    bind(),
		"Format":     check(explainFormat),
		"Explore":    reject("EXPLAIN EXPLORE"),
		"SQLDigest":  reject("EXPLAIN of a statement digest"),
		"PlanDigest": reject("EXPLAIN of a plan digest"),
	},
	typeOf[ast.SelectStmt](): {
		"SelectStmtOpts":   nest(),
		"Distinct":         bind(),
		"From":             bind(),
		"Where":            bind(),
		"Fields":           bind(),
		"GroupBy":          bind(),
		"Having":           bind(),
		"WindowSpecs":      bind(), // named windows fail in bindSelectCorr
		"OrderBy":          bind(),
		"Limit":            bind(),
		"LockInfo":         check(lockInfo),
		"TableHints":       check(hints),
		"IsInBraces":       internal(),
		"WithBeforeBraces": internal(),
		"QueryBlockOffset": internal(),
		"SelectIntoOpt":    check(selectInto),
		"AfterSetOperator": bind(),
		"Kind":             check(selectKind),
		"Lists":            reject("VALUES rows"),
		"With":             bind(),
		"AsViewSchema":     reject("a view's schema statement"),
	},
	typeOf[ast.SelectStmtOpts](): {
		"Distinct":        bind(),
		"SQLBigResult":    ignore(),
		"SQLBufferResult": ignore(),
		"SQLCache":        ignore(),
		"SQLSmallResult":  ignore(),
		"CalcFoundRows":   reject("SQL_CALC_FOUND_ROWS (fsql has no FOUND_ROWS())"),
		"StraightJoin":    ignore(),
		"Priority":        ignore(),
		"TableHints":      check(hints),
		"ExplicitAll":     ignore(), // SELECT ALL is the default
	},
	typeOf[ast.CreateTableStmt](): {
		"IfNotExists":      bind(),
		"TemporaryKeyword": reject("CREATE TEMPORARY TABLE"),
		"OnCommitDelete":   reject("ON COMMIT DELETE ROWS"),
		"Table":            bind(),
		"ReferTable":       reject("CREATE TABLE ... LIKE"),
		"Cols":             bind(),
		"Constraints":      bind(),
		"SplitIndex":       reject("SPLIT INDEX"),
		"Options":          bind(),
		"Partition":        nest(),
		"OnDuplicate":      reject("IGNORE or REPLACE in CREATE TABLE ... SELECT"),
		"Select":           bind(),
	},
	// PARTITION BY KEY (cols) names a new table's Hive partition
	// columns; the rest of MySQL's partitioning has no meaning here.
	typeOf[ast.PartitionOptions](): {
		"PartitionMethod": nest(),
		"Sub":             reject("subpartitions"),
		"Definitions":     reject("partition definitions (fsql makes a folder per partition value)"),
		"UpdateIndexes":   reject("UPDATE INDEXES"),
	},
	typeOf[ast.PartitionMethod](): {
		"Tp":           check(partitionKind),
		"Linear":       reject("PARTITION BY LINEAR"),
		"Expr":         reject("a partitioning expression (partition by columns: PARTITION BY KEY (col, ...))"),
		"ColumnNames":  bind(),
		"Unit":         reject("a partitioning interval unit"),
		"Limit":        reject("a partitioning limit"),
		"Num":          check(partitionCount),
		"KeyAlgorithm": reject("PARTITION BY KEY ALGORITHM"),
		"Interval":     reject("INTERVAL partitioning"),
	},
	typeOf[ast.DropTableStmt](): {
		"IfExists":         bind(),
		"Tables":           bind(),
		"IsView":           reject("DROP VIEW"),
		"TemporaryKeyword": reject("DROP TEMPORARY TABLE"),
	},
	// CREATE TABLE t (col type ...) of an in-memory table and CREATE
	// INDEX on one (bind_create_table.go).
	typeOf[ast.ColumnDef](): {"Name": bind(), "Tp": bind(), "Options": bind()},
	typeOf[ast.ColumnOption](): {
		"Tp":                  bind(), // columnDef fails on every option it does not implement
		"Expr":                bind(), // DEFAULT's value; generated columns and CHECK fail by Tp
		"Stored":              reject("a stored generated column"),
		"Refer":               reject("REFERENCES"),
		"StrValue":            bind(), // COMMENT's text (ignored), COLLATE's name (checked)
		"AutoRandOpt":         reject("AUTO_RANDOM"),
		"Enforced":            bind(), // CHECK's, which fails by Tp
		"ConstraintName":      bind(), // CHECK's, which fails by Tp
		"PrimaryKeyTp":        bind(), // PRIMARY KEY's, which fails by Tp
		"SecondaryEngineAttr": reject("SECONDARY_ENGINE_ATTRIBUTE"),
	},
	typeOf[ast.CreateIndexStmt](): {
		"IfNotExists":             ignore(), // the index is never built, so it never exists
		"IndexName":               bind(),
		"Table":                   bind(),
		"IndexPartSpecifications": bind(),
		"IndexOption":             ignore(), // how the index would be built: it is not
		"KeyType":                 bind(),   // UNIQUE adds a key (AddKey); spatial and full-text fail in bindCreateIndex
		"LockAlg":                 ignore(), // how MySQL would lock while building it
	},
	typeOf[ast.IndexPartSpecification](): {
		"Column": bind(),
		"Length": ignore(), // a prefix index: not built either
		"Desc":   ignore(), // the order of an index that is not built
		"Expr":   bind(),   // fails in bindCreateIndex
	},
	typeOf[ast.InsertStmt](): {
		"IsReplace":      bind(),
		"IgnoreErr":      reject("INSERT IGNORE"),
		"Table":          bind(),
		"Columns":        bind(),
		"Lists":          bind(),
		"Setlist":        reject("INSERT ... SET"),
		"Priority":       ignore(),
		"OnDuplicate":    reject("ON DUPLICATE KEY UPDATE"),
		"Select":         bind(),
		"TableHints":     check(hints),
		"PartitionNames": bind(),
	},
	typeOf[ast.SetOprStmt](): {
		"IsInBraces": internal(),
		"SelectList": bind(),
		"OrderBy":    bind(),
		"Limit":      bind(),
		"With":       bind(),
	},
	typeOf[ast.SetOprSelectList](): {
		"With":             bind(),
		"AfterSetOperator": bind(),
		"Selects":          bind(),
		"Limit":            bind(),
		"OrderBy":          bind(),
	},
	typeOf[ast.TableRefsClause](): {"TableRefs": bind()},
	typeOf[ast.Join](): {
		"Left":           bind(),
		"Right":          bind(),
		"Tp":             bind(),
		"On":             bind(),
		"Using":          bind(),
		"NaturalJoin":    bind(), // fails in bindFrom
		"StraightJoin":   ignore(),
		"ExplicitParens": internal(),
	},
	typeOf[ast.TableSource](): {
		"Source":      bind(),
		"AsName":      bind(),
		"Lateral":     reject("LATERAL derived tables"),
		"ColumnNames": bind(), // a derived table's column names; checkTableSource rejects them on a base table
	},
	typeOf[ast.TableName](): {
		"Schema":         check(schemaName),
		"Name":           bind(),
		"IndexHints":     ignore(), // fsql has no indexes; USE/FORCE/IGNORE INDEX cannot change an answer
		"PartitionNames": reject("PARTITION (...) selection"),
		"TableSample":    reject("TABLESAMPLE"),
		"AsOf":           reject("AS OF TIMESTAMP"),
		"IsAlias":        internal(),
	},
	typeOf[ast.OnCondition](): {"Expr": bind()},
	typeOf[ast.FieldList]():   {"Fields": bind()},
	typeOf[ast.SelectField](): {
		"Offset":                internal(),
		"WildCard":              nest(), // not visited by SelectField.Accept
		"Expr":                  bind(),
		"AsName":                bind(),
		"Auxiliary":             reject("an auxiliary select field"),
		"AuxiliaryColInAgg":     reject("an auxiliary select field"),
		"AuxiliaryColInOrderBy": reject("an auxiliary select field"),
	},
	typeOf[ast.WildCardField](): {
		"Table":  bind(),
		"Schema": check(schemaName),
	},
	typeOf[ast.GroupByClause](): {"Items": bind(), "Rollup": bind()},
	typeOf[ast.HavingClause]():  {"Expr": bind()},
	typeOf[ast.OrderByClause](): {"Items": bind(), "ForUnion": internal()},
	typeOf[ast.ByItem](): {
		"Expr": bind(),
		"Desc": bind(),
		// NullOrder only records that neither ASC nor DESC was written;
		// NULLS FIRST/LAST is not in the grammar.
		"NullOrder": internal(),
	},
	typeOf[ast.Limit]():      {"Count": bind(), "Offset": bind()},
	typeOf[ast.WithClause](): {"IsRecursive": bind(), "CTEs": bind()},
	typeOf[ast.CommonTableExpression](): {
		"Name":          bind(),
		"Query":         bind(),
		"ColNameList":   bind(),
		"IsRecursive":   reject("WITH RECURSIVE (fsql's CTEs cannot refer to themselves: write the levels out, joined, for a fixed depth)"),
		"ConsumerCount": internal(),
	},
	typeOf[ast.WindowSpec](): {
		"Name":        bind(), // named windows fail in bindWindow
		"Ref":         bind(),
		"PartitionBy": bind(),
		"OrderBy":     bind(),
		"Frame":       bind(),
		"OnlyAlias":   bind(),
	},
	typeOf[ast.PartitionByClause](): {"Items": bind()}, // ASC/DESC on a partition key cannot change the partitions: ignored
	typeOf[ast.FrameClause]():       {"Type": bind(), "Extent": nest()},
	typeOf[ast.FrameExtent]():       {"Start": bind(), "End": bind()},
	typeOf[ast.FrameBound](): {
		// windowFrame binds every bound MySQL has (GROUPS frames fail).
		"Type":      bind(),
		"UnBounded": bind(),
		"Expr":      bind(),
		"Unit":      bind(),
	},
	typeOf[ast.SubqueryExpr](): {
		"Query":      bind(),
		"Evaluated":  reject("an evaluated subquery"),
		"Correlated": reject("a pre-analysed subquery"),
		"MultiRows":  internal(), // set for IN and ANY/ALL operands
		"Exists":     internal(), // the operand of an ExistsSubqueryExpr
	},
	typeOf[ast.ExistsSubqueryExpr](): {"Sel": bind(), "Not": bind()},
	typeOf[ast.ParenthesesExpr]():    {"Expr": bind()},
	typeOf[ast.PositionExpr]():       {"N": bind(), "P": bind()},
	typeOf[ast.ColumnNameExpr]():     {"Name": bind()},
	typeOf[ast.ColumnName](): {
		"Schema": check(schemaName),
		"Table":  bind(),
		"Name":   bind(),
	},
	typeOf[driver.ValueExpr](): {
		"Datum":            bind(),
		"projectionOffset": internal(),
	},
	typeOf[ast.AggregateFuncExpr](): {
		"F":        bind(),
		"Args":     bind(),
		"Distinct": bind(),
		"Order":    bind(), // GROUP_CONCAT's; bindAggCall rejects it elsewhere
	},
	typeOf[ast.WindowFuncExpr](): {
		"Name":       bind(),
		"Args":       bind(),
		"Distinct":   reject("DISTINCT in a window function"),
		"IgnoreNull": reject("IGNORE NULLS"),
		"FromLast":   reject("FROM LAST"),
		"Spec":       bind(),
	},
	typeOf[ast.BinaryOperationExpr](): {"Op": bind(), "L": bind(), "R": bind()},
	typeOf[ast.UnaryOperationExpr]():  {"Op": bind(), "V": bind()},
	typeOf[ast.IsNullExpr]():          {"Expr": bind(), "Not": bind()},
	typeOf[ast.IsTruthExpr]():         {"Expr": bind(), "Not": bind(), "True": bind()},
	typeOf[ast.BetweenExpr]():         {"Expr": bind(), "Left": bind(), "Right": bind(), "Not": bind()},
	typeOf[ast.PatternInExpr]():       {"Expr": bind(), "List": bind(), "Not": bind(), "Sel": bind()},
	typeOf[ast.PatternLikeOrIlikeExpr](): {
		"Expr":           bind(),
		"Pattern":        bind(),
		"Not":            bind(),
		"IsLike":         bind(),
		"Escape":         bind(),
		"EscapeExplicit": internal(),
		"PatChars":       internal(), // TiDB's compiled pattern, filled at run time
		"PatTypes":       internal(),
	},
	typeOf[ast.CaseExpr]():   {"Value": bind(), "WhenClauses": bind(), "ElseClause": bind()},
	typeOf[ast.WhenClause](): {"Expr": bind(), "Result": bind()},
	typeOf[ast.FuncCastExpr](): {
		"Expr":            bind(),
		"Tp":              bind(),     // castType reads the type, its length, precision, UNSIGNED and character set
		"FunctionType":    internal(), // CAST, CONVERT and BINARY spell the same cast
		"ExplicitCharSet": internal(), // the character set itself is in Tp, which castType checks
	},
	typeOf[ast.FuncCallExpr](): {
		"Tp":     internal(), // keyword or generic call syntax
		"Schema": check(schemaName),
		"FnName": bind(),
		"Args":   bind(),
	},
	typeOf[ast.SetCollationExpr](): {"Expr": bind(), "Collate": bind()},
	typeOf[driver.ParamMarkerExpr](): {
		"ValueExpr": internal(), // a prepared statement's value slot; fsql binds Env.Params by Order
		"Offset":    bind(),     // where the ? is, for messages
		"Order":     internal(), // set by PREPARE only; bindParams numbers markers by Offset
		"InExecute": internal(),
	},
	// SHOW TABLES / COLUMNS / CREATE TABLE / VARIABLES and DESCRIBE
	// (show.go); bindShow fails naming every other SHOW.
	typeOf[ast.ShowStmt](): {
		"Tp":                    bind(),
		"DBName":                check(showDatabase),
		"Table":                 bind(),
		"Procedure":             reject("a procedure name"),
		"Partition":             reject("a partition name"),
		"Column":                bind(), // DESCRIBE t column
		"IndexName":             reject("an index name"),
		"ResourceGroupName":     reject("a resource group"),
		"Flag":                  reject("a SHOW option"),
		"Full":                  bind(),
		"User":                  reject("a user"),
		"Roles":                 reject("roles"),
		"IfNotExists":           reject("IF NOT EXISTS"),
		"Extended":              bind(), // SHOW EXTENDED COLUMNS adds hidden columns: fsql's tables have none
		"Limit":                 reject("LIMIT on SHOW"),
		"CountWarningsOrErrors": reject("SHOW COUNT(*) WARNINGS/ERRORS"),
		"GlobalScope":           reject("SHOW GLOBAL VARIABLES (fsql's settings belong to a session; SHOW VARIABLES lists them)"),
		"Pattern":               bind(),
		"Where":                 bind(),
		"ShowProfileTypes":      reject("SHOW PROFILE"),
		"ShowProfileArgs":       reject("SHOW PROFILE"),
		"ShowProfileLimit":      reject("SHOW PROFILE"),
		"ShowGroupKey":          reject("SHOW IMPORT GROUP"),
		"ImportJobID":           reject("SHOW IMPORT JOB"),
		"ImportJobRaw":          reject("SHOW RAW IMPORT JOB"),
		"DistributionJobID":     reject("SHOW DISTRIBUTION JOB"),
	},
	// SET key = value (set.go).
	typeOf[ast.SetStmt](): {"Variables": bind()},
	typeOf[ast.VariableAssignment](): {
		"Name":        bind(),
		"Value":       bind(),
		"IsInstance":  reject("SET INSTANCE"),
		"IsGlobal":    reject("SET GLOBAL (fsql's settings belong to a session; every session starts from the engine's, fsql --set or the Config given to Open): write SET key = value"),
		"IsSystem":    bind(), // false: a user variable @x, which bindSet rejects
		"ExtendValue": bind(), // only SET NAMES / CHARACTER SET fill it, which bindSet rejects
	},
	// DEFAULT as a SET value; DEFAULT(column) fails in bindSet and
	// everywhere else.
	typeOf[ast.DefaultExpr]():       {"Name": bind()},
	typeOf[ast.TimeUnitExpr]():      {"Unit": bind()},
	typeOf[ast.TrimDirectionExpr](): {"Direction": bind()}, // TRIM(LEADING ...) fails in bindFunc
}

// Limits, as SQLite's: they bound the binder's and planner's work and
// stack on machine-written queries.
const (
	// MaxExprDepth bounds the nesting of expressions and query blocks.
	// A chain of one logical operator (a OR b OR c ...) counts as one
	// level, as it binds to a balanced tree.
	MaxExprDepth = 1000
	// MaxCompoundSelect bounds the SELECTs of one UNION/INTERSECT/EXCEPT.
	MaxCompoundSelect = 500
	// MaxBoundRelations bounds the query blocks and table references a
	// statement binds. Each reference to a CTE binds its body anew, so
	// CTEs that reference each other twice grow the plan exponentially
	// (c1 = c0 JOIN c0, c2 = c1 JOIN c1, ...); the bound stops that
	// before it eats the memory.
	MaxBoundRelations = 10000
)

// checkStatement enforces astFields and the limits on a whole statement
// before it is bound. It returns the statement's parameter markers in
// the order they appear.
func checkStatement(stmt ast.Node, src string) ([]*driver.ParamMarkerExpr, error) {
	c := &checker{src: src}
	stmt.Accept(c)
	return c.markers, c.err
}

type checker struct {
	src     string // the statement's text, for positions
	nodes   []ast.Node
	levels  []int
	markers []*driver.ParamMarkerExpr
	err     error
}

func (c *checker) Enter(n ast.Node) (ast.Node, bool) {
	if c.err != nil {
		return n, true
	}
	level := 0
	if len(c.levels) > 0 {
		level = c.levels[len(c.levels)-1]
	}
	if c.countsLevel(n) {
		level++
	}
	c.nodes, c.levels = append(c.nodes, n), append(c.levels, level)
	if level > MaxExprDepth {
		c.err = fmt.Errorf("%w: the query nests expressions and subqueries more than %d levels deep (fsql's limit, as SQLite's), at %s; simplify it", exec.ErrResourcesExhausted, MaxExprDepth, snippet(n))
		return n, true
	}
	if m, ok := n.(*driver.ParamMarkerExpr); ok {
		c.markers = append(c.markers, m)
	}
	if err := checkNode(n); err != nil {
		c.err = c.place(n, err)
	}
	return n, c.err != nil
}

// place gives an error of checkNode about n a position: n's own when n
// is an expression the parser recorded the start of, else where the
// error's clause starts (clauseError), else the innermost enclosing
// expression's.
func (c *checker) place(n ast.Node, err error) error {
	off := exprOffset(n)
	var ce *clauseError
	if off < 0 && errors.As(err, &ce) {
		off = ce.offset(c.src)
	}
	for i := len(c.nodes) - 1; off < 0 && i >= 0; i-- {
		off = exprOffset(c.nodes[i])
	}
	return placed(c.src, off, errs.Wrap(errs.Unsupported, "%w", err))
}

// clauseError is an error about a clause, with where the clause starts
// in the statement's text (the parser records positions of expressions
// only).
type clauseError struct {
	err    error
	offset func(src string) int // -1: not found
}

func (e *clauseError) Error() string { return e.err.Error() }
func (e *clauseError) Unwrap() error { return e.err }

// atWords is err about the clause that starts with one of the keyword
// sequences alts ("FOR UPDATE", "LOCK IN SHARE MODE").
func atWords(err error, alts ...string) error {
	return &clauseError{err: err, offset: func(src string) int {
		for _, a := range alts {
			if off := keywordOffset(src, strings.Fields(a)...); off >= 0 {
				return off
			}
		}
		return -1
	}}
}

// atOffset is err at a known offset (an expression's).
func atOffset(err error, off int) error {
	return &clauseError{err: err, offset: func(string) int { return off }}
}

// clauseWords are the leading upper-case words of a clause's name
// ("AS OF TIMESTAMP" of "AS OF TIMESTAMP", "PARTITION" of "PARTITION (...)
// selection"): the keywords that start it in a statement.
func clauseWords(clause string) string {
	var words []string
	for _, w := range strings.Fields(clause) {
		if w != strings.ToUpper(w) || strings.Trim(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") != "" {
			break
		}
		words = append(words, w)
	}
	return strings.Join(words, " ")
}

func (c *checker) Leave(n ast.Node) (ast.Node, bool) {
	if len(c.nodes) > 0 && c.nodes[len(c.nodes)-1] == n {
		c.nodes, c.levels = c.nodes[:len(c.nodes)-1], c.levels[:len(c.levels)-1]
	}
	return n, c.err == nil
}

// countsLevel reports whether n adds a level of nesting: expressions and
// query blocks do, except parentheses and the inner links of a chain of
// one logical operator.
func (c *checker) countsLevel(n ast.Node) bool {
	switch x := n.(type) {
	case *ast.ParenthesesExpr:
		return false
	case *ast.BinaryOperationExpr:
		if isChainOp(x) {
			for i := len(c.nodes) - 1; i >= 0; i-- {
				if _, paren := c.nodes[i].(*ast.ParenthesesExpr); paren {
					continue
				}
				p, ok := c.nodes[i].(*ast.BinaryOperationExpr)
				return !ok || p.Op != x.Op
			}
		}
		return true
	case ast.ExprNode, *ast.SelectStmt, *ast.SetOprStmt:
		return true
	}
	return false
}

// checkNode applies astFields to n and the checks that look at more than
// one field.
func checkNode(n ast.Node) error {
	switch x := n.(type) {
	case *ast.Join:
		if err := checkJoinAlias(x); err != nil {
			return err
		}
	case *ast.TableSource:
		if err := checkTableSource(x); err != nil {
			return err
		}
	case *ast.GroupByClause:
		for _, it := range x.Items {
			if !it.NullOrder { // ASC or DESC was written
				return atOffset(errs.New(errs.Unsupported, "ASC/DESC after a GROUP BY item, in %s: MySQL 8.0 removed the sorted GROUP BY; sort with ORDER BY", snippet(it)), exprOffset(it.Expr))
			}
		}
	case *ast.SetOprStmt:
		if k := countSelects(x.SelectList); k > MaxCompoundSelect {
			return fmt.Errorf("%w: a compound SELECT of %d SELECTs; fsql's limit is %d (as SQLite's): split the query", exec.ErrResourcesExhausted, k, MaxCompoundSelect)
		}
	}
	v := reflect.ValueOf(n)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return nil
	}
	return checkFields(n, v.Elem())
}

// checkFields applies the rules of v's type (if classified) to v.
func checkFields(n ast.Node, v reflect.Value) error {
	rules, ok := fieldOrder[v.Type()]
	if !ok {
		return nil // a type the binder rejects as a whole
	}
	for _, r := range rules {
		f := v.Field(r.index)
		switch r.use {
		case useRejected:
			if !isEmpty(f) {
				return atWords(errs.New(errs.Unsupported, "%s, in %s", r.clause, snippet(n)), clauseWords(r.clause))
			}
		case useChecked:
			if r.check != nil {
				if err := r.check(f); err != nil {
					return fmt.Errorf("%w, in %s", err, snippet(n))
				}
			}
		case useNested:
			if f.Kind() == reflect.Pointer {
				if f.IsNil() {
					continue
				}
				f = f.Elem()
			}
			if err := checkFields(n, f); err != nil {
				return err
			}
		}
	}
	return nil
}

// isEmpty: the zero value, or an empty slice (the parser leaves some
// slices allocated but empty).
func isEmpty(v reflect.Value) bool {
	if v.Kind() == reflect.Slice || v.Kind() == reflect.Map {
		return v.Len() == 0
	}
	return v.IsZero()
}

// indexedRule is a fieldRule with its field's index, in field order, so
// checks run in a fixed order and the first error is deterministic.
type indexedRule struct {
	fieldRule
	index int
}

var fieldOrder = func() map[reflect.Type][]indexedRule {
	out := map[reflect.Type][]indexedRule{}
	for t, rules := range astFields {
		for i := 0; i < t.NumField(); i++ {
			if r, ok := rules[t.Field(i).Name]; ok && r.use >= useRejected {
				out[t] = append(out[t], indexedRule{r, i})
			}
		}
		if out[t] == nil {
			out[t] = []indexedRule{}
		}
	}
	return out
}()

func selectKind(v reflect.Value) error {
	k, _ := v.Interface().(ast.SelectStmtKind)
	switch k {
	case ast.SelectStmtKindSelect:
		return nil
	case ast.SelectStmtKindTable:
		return atWords(errs.New(errs.Unsupported, "the TABLE statement: write SELECT * FROM t"), "TABLE")
	case ast.SelectStmtKindValues:
		return atWords(errs.New(errs.Unsupported, "the VALUES statement: write SELECT 1, 2 UNION ALL SELECT 3, 4"), "VALUES")
	}
	return errs.New(errs.Unsupported, "a SELECT statement of the parser's kind %d: write a plain SELECT", k)
}

func partitionKind(v reflect.Value) error {
	if t, _ := v.Interface().(ast.PartitionType); t != ast.PartitionTypeKey {
		return atWords(errs.New(errs.Unsupported, "PARTITION BY %s: fsql takes PARTITION BY KEY (col, ...), which names the Hive partition columns (folders col=value/)", strings.ToUpper(t.String())), "PARTITION BY")
	}
	return nil
}

// partitionCount accepts the PARTITIONS 1 the parser fills in when the
// clause has none: a folder per value is not a fixed count.
func partitionCount(v reflect.Value) error {
	if v.Uint() > 1 {
		return atWords(errs.New(errs.Unsupported, "PARTITIONS %d: fsql makes one folder per partition value (PARTITION BY KEY (col, ...) alone)", v.Uint()), "PARTITIONS")
	}
	return nil
}

func explainFormat(v reflect.Value) error {
	switch f := strings.ToLower(v.String()); f {
	case "", "row":
		return nil
	default:
		return atWords(errs.New(errs.Unsupported, "EXPLAIN FORMAT = '%s' (fsql prints one text format): drop FORMAT", f), "FORMAT")
	}
}

func lockInfo(v reflect.Value) error {
	li, _ := v.Interface().(*ast.SelectLockInfo)
	if li == nil || li.LockType == ast.SelectLockNone {
		return nil
	}
	return atWords(errs.New(errs.Unsupported, "%s (fsql reads immutable files and takes no locks; drop the clause)", strings.ToUpper(lockText(li.LockType))),
		"FOR UPDATE", "FOR SHARE", "LOCK IN SHARE MODE")
}

func lockText(t ast.SelectLockType) string {
	if t == ast.SelectLockForShare {
		return "for share / lock in share mode"
	}
	return t.String()
}

func selectInto(v reflect.Value) error {
	into, _ := v.Interface().(*ast.SelectIntoOption)
	if into == nil {
		return nil
	}
	what := map[ast.SelectIntoType]string{ast.SelectIntoOutfile: "INTO OUTFILE", ast.SelectIntoDumpfile: "INTO DUMPFILE", ast.SelectIntoVars: "INTO variables"}[into.Tp]
	if what == "" {
		what = "INTO"
	}
	if into.Tp == ast.SelectIntoOutfile {
		// detachOutfile took the statement's own; this one is nested.
		return atWords(errs.New(errs.Unsupported, "INTO OUTFILE inside a subquery or a UNION branch (write it after the statement's last SELECT)"), "INTO OUTFILE")
	}
	return atWords(errs.New(errs.Unsupported, "SELECT ... %s (fsql writes results with INTO OUTFILE, or fsql --format csv|json)", what), what, "INTO")
}

// plainHints choose how a plan runs (join and aggregate algorithms, join
// order, indexes, where operators run), never what it returns; fsql
// accepts and ignores them. Every other hint (SET_VAR can change SQL
// modes, MAX_EXECUTION_TIME and MEMORY_QUOTA promise limits fsql does not
// enforce) fails.
var plainHints = map[string]bool{
	"hash_join": true, "merge_join": true, "inl_join": true, "inl_hash_join": true, "inl_merge_join": true,
	"broadcast_join": true, "shuffle_join": true, "hash_join_build": true, "hash_join_probe": true,
	"no_hash_join": true, "no_merge_join": true, "no_index_join": true, "no_index_hash_join": true,
	"no_index_merge_join": true, "leading": true, "straight_join": true, "hash_agg": true, "stream_agg": true,
	"mpp_1phase_agg": true, "mpp_2phase_agg": true, "use_index": true, "ignore_index": true,
	"force_index": true, "order_index": true, "no_order_index": true, "use_index_merge": true,
	"no_index_merge": true, "index_join": true, "index_hash_join": true, "index_merge_join": true,
	"qb_name": true, "agg_to_cop": true, "limit_to_cop": true, "read_from_storage": true, "use_toja": true,
	"no_decorrelate": true, "semi_join_rewrite": true, "merge": true, "ignore_plan_cache": true,
	"use_plan_cache": true, "use_cascades": true,
}

func hints(v reflect.Value) error {
	hs, _ := v.Interface().([]*ast.TableOptimizerHint)
	for _, h := range hs {
		if !plainHints[h.HintName.L] {
			err := errs.New(errs.Unsupported, "optimizer hint %s (fsql ignores only hints that choose join and aggregate methods, join order or indexes): drop it", strings.ToUpper(h.HintName.O))
			return &clauseError{err: err, offset: func(src string) int { return hintOffset(src, h.HintName.L) }}
		}
	}
	return nil
}

// schemaName rejects database qualifiers: fsql has one database, the
// data folder, and it has no name a query could spell.
func schemaName(v reflect.Value) error {
	s, _ := v.Interface().(ast.CIStr)
	if s.O == "" {
		return nil
	}
	return errs.New(errs.ErBadDBError, "database qualifier '%s.': fsql has one unnamed database (the data folder); drop the qualifier", s.O)
}

// showDatabase rejects SHOW ... FROM db / IN db, as schemaName rejects
// qualifiers.
func showDatabase(v reflect.Value) error {
	if v.String() == "" {
		return nil
	}
	return errs.New(errs.ErBadDBError, "database '%s': fsql has one unnamed database (the data folder); drop FROM/IN %s", v.String(), v.String())
}

// checkTableSource: column names after an alias rename a derived table's
// columns; on a base table the binder has nowhere to put them.
func checkTableSource(ts *ast.TableSource) error {
	if _, base := ts.Source.(*ast.TableName); base && len(ts.ColumnNames) > 0 {
		name := ts.Source.(*ast.TableName).Name.O
		err := errs.New(errs.Unsupported, "column names after the alias of table %s: they rename a derived table's columns; for a table, write (SELECT a AS x, b AS y FROM t) AS alias", snippet(ts))
		return &clauseError{err: err, offset: func(src string) int { return tableOffset(src, name) }}
	}
	return nil
}

// joinWords are the join keywords of other dialects that MySQL's grammar
// reads as a table alias: `a FULL JOIN b` is `a AS full JOIN b`, an inner
// join. No one means that, so such an alias before JOIN fails.
var joinWords = map[string]string{
	"full": "FULL [OUTER] JOIN is not MySQL syntax and fsql does not run it; write it as the LEFT JOIN plus the right side's unmatched rows: " +
		"SELECT ... FROM a LEFT JOIN b ON a.k = b.k UNION ALL SELECT ... FROM b WHERE NOT EXISTS (SELECT 1 FROM a WHERE a.k = b.k) " +
		"(or, when rows are distinct, ... LEFT JOIN ... UNION ... RIGHT JOIN ...)",
	"semi": "SEMI JOIN is not MySQL syntax; write WHERE EXISTS (SELECT ...) or WHERE x IN (SELECT ...)",
	"anti": "ANTI JOIN is not MySQL syntax; write WHERE NOT EXISTS (SELECT ...)",
}

func checkJoinAlias(j *ast.Join) error {
	if j.Right == nil {
		return nil
	}
	// The table right before this join's right input is the rightmost
	// leaf of its left input.
	var left ast.ResultSetNode = j.Left
	for {
		inner, ok := left.(*ast.Join)
		if !ok {
			break
		}
		if inner.Right != nil {
			left = inner.Right
		} else {
			left = inner.Left
		}
	}
	ts, ok := left.(*ast.TableSource)
	if !ok {
		return nil
	}
	if why, ok := joinWords[ts.AsName.L]; ok {
		return atWords(errs.New(errs.Unsupported, "%s reads %s as an alias of the table before JOIN: %s; use another alias if one was meant",
			snippet(ts), strings.ToUpper(ts.AsName.O), why), ts.AsName.O+" JOIN")
	}
	return nil
}

func countSelects(l *ast.SetOprSelectList) int {
	if l == nil {
		return 0
	}
	k := 0
	for _, s := range l.Selects {
		if inner, ok := s.(*ast.SetOprSelectList); ok {
			k += countSelects(inner)
		} else {
			k++
		}
	}
	return k
}

func isChainOp(x *ast.BinaryOperationExpr) bool {
	switch x.Op {
	case opcode.LogicAnd, opcode.LogicOr:
		return true
	}
	return false
}

// snippet is n as SQL, cut short, for messages.
func snippet(n ast.Node) string {
	s := restore(n)
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return "'" + s + "'"
}

// hintOffset is where the first optimizer hint comment names hint, or -1.
func hintOffset(src, hint string) int {
	at := strings.Index(src, "/*+")
	if at < 0 {
		return -1
	}
	if i := strings.Index(strings.ToLower(src[at:]), hint); i >= 0 {
		return at + i
	}
	return at
}
