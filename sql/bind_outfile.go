package sql

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/fsql-dev/fsql/connectors/hive"
	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/planner"
)

// detachOutfile takes the INTO OUTFILE clause off the statement's
// outermost query (a SELECT, or the last SELECT of a UNION, where MySQL
// writes it; also under EXPLAIN), so the rest binds as a query. An INTO
// anywhere else stays, and the strict check rejects it.
func detachOutfile(stmt ast.StmtNode) *ast.SelectIntoOption {
	n := ast.Node(stmt)
	if ex, ok := n.(*ast.ExplainStmt); ok {
		n = ex.Stmt
	}
	var sel *ast.SelectStmt
	switch x := n.(type) {
	case *ast.SelectStmt:
		sel = x
	case *ast.SetOprStmt:
		if x.SelectList != nil && len(x.SelectList.Selects) > 0 {
			sel, _ = x.SelectList.Selects[len(x.SelectList.Selects)-1].(*ast.SelectStmt)
		}
	}
	if sel == nil || sel.SelectIntoOpt == nil || sel.SelectIntoOpt.Tp != ast.SelectIntoOutfile {
		return nil
	}
	into := sel.SelectIntoOpt
	sel.SelectIntoOpt = nil
	return into
}

// bindOutfile makes a query's statement SELECT ... INTO OUTFILE 'path'
// [FIELDS [TERMINATED BY 's'] [[OPTIONALLY] ENCLOSED BY 'c'] [ESCAPED BY
// 'c']] [LINES [STARTING BY 's'] [TERMINATED BY 's']]: CSV by MySQL's
// rules, or Parquet when the path ends in .parquet or names a folder
// (a trailing '/', or an existing folder). A relative path is relative
// to the data directory, as MySQL's is to its data directory; an
// absolute one is the only way to write outside it.
func (b *Binder) bindOutfile(st *Statement, q *bound, into *ast.SelectIntoOption) (*Statement, error) {
	if into.FileName == "" {
		return nil, errs.New(errs.Semantic, "INTO OUTFILE '': name the file to write")
	}
	path := into.FileName
	folder := strings.HasSuffix(path, "/") || strings.HasSuffix(path, string(filepath.Separator))
	if !filepath.IsAbs(path) {
		path = filepath.Join(b.catalog.Dir, path)
	}
	path = filepath.Clean(path)
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		folder = true
	}
	x := &hive.ExportSpec{Path: path, Folder: folder, Parquet: folder || strings.HasSuffix(strings.ToLower(path), ".parquet"), CSV: hive.DefaultCSVExport()}
	if f := into.FieldsInfo; f != nil {
		if x.Parquet {
			return nil, errs.New(errs.Semantic, "FIELDS options of INTO OUTFILE '%s': they shape CSV, and a .parquet file or a folder is written as Parquet", into.FileName)
		}
		if f.DefinedNullBy != nil || f.NullValueOptEnclosed {
			return nil, errs.New(errs.Unsupported, "NULL DEFINED BY in INTO OUTFILE (MySQL writes NULL as \\N, or as NULL without an escape character)")
		}
		if f.Terminated != nil {
			x.CSV.FieldsTerminated = *f.Terminated
		}
		if f.Enclosed != nil {
			x.CSV.Enclosed, x.CSV.OptEnclosed = *f.Enclosed, f.OptEnclosed
		}
		if f.Escaped != nil {
			x.CSV.Escaped = *f.Escaped
		}
		if len(x.CSV.Enclosed) > 1 || len(x.CSV.Escaped) > 1 {
			return nil, errs.New(errs.Semantic, "ENCLOSED BY and ESCAPED BY of INTO OUTFILE take one character (MySQL's ER_WRONG_FIELD_TERMINATORS)")
		}
	}
	if l := into.LinesInfo; l != nil {
		if x.Parquet && (l.Starting != nil || l.Terminated != nil) {
			return nil, errs.New(errs.Semantic, "LINES options of INTO OUTFILE '%s': they shape CSV, and a .parquet file or a folder is written as Parquet", into.FileName)
		}
		if l.Starting != nil {
			x.CSV.LinesStarting = *l.Starting
		}
		if l.Terminated != nil {
			x.CSV.LinesTerminated = *l.Terminated
		}
	}
	schema := q.plan.Schema()
	w := &WriteTarget{Table: into.FileName, Dir: path, Export: x}
	exprs := make([]expr.Expr, len(schema))
	names := make([]string, len(schema))
	seen := map[string]bool{}
	for i, c := range schema {
		name := q.names[i]
		if x.Parquet {
			if err := hive.WritableType(c.Type); err != nil {
				return nil, errs.Wrap(errs.Unsupported, "column %s of INTO OUTFILE '%s': %w", name, into.FileName, err)
			}
			if seen[strings.ToLower(name)] {
				return nil, errs.New(errs.Semantic, "duplicate column name '%s' in a Parquet INTO OUTFILE; give the columns distinct aliases", name)
			}
			seen[strings.ToLower(name)] = true
		}
		exprs[i] = expr.NewColumn(i, c.Type, name)
		names[i] = name
		typ := storageType(c.Type)
		if typ.ID() == arrow.NULL && x.Parquet {
			return nil, errs.New(errs.Unsupported, "column %s of INTO OUTFILE '%s' is NULL without a type; CAST it", name, into.FileName)
		}
		w.Columns = append(w.Columns, arrow.Field{Name: name, Type: typ, Nullable: true})
	}
	return &Statement{Plan: &planner.Project{Child: q.plan, Exprs: exprs, Names: names}, Names: names, Write: w, Explain: st.Explain}, nil
}
