// Command oracle writes the TPC-DS golden answers by running the queries on
// DuckDB, an engine independent of fsql.
//
// It is a separate module so the engine's build and CI never need cgo or
// DuckDB. Usage, from the repository root:
//
//	cd tools/oracle && go run . --data /tmp/tpcds-0.1 \
//	    --queries ../../testdata/tpcds --out ../../testdata/tpcds/answers
//
// --data is a dataset written by `fsql gen tpcds --partitioned=false` (one
// folder of Parquet files per table). For each query qN it runs
// duckdb/qN.sql when that file exists (a dialect rewrite) and queries/qN.sql
// otherwise, and writes answers/qN.ans. It also reports ORDER BY ... LIMIT
// queries whose cut falls inside a run of tied rows, where the answer would be
// ambiguous; such queries need a longer ORDER BY.
//
// `oracle bench --data DIR[,DIR...]` runs fsql and DuckDB side by side on
// the same data instead (bench.go; `make bench-vs-duckdb`), and
// `oracle fuzz --data DIR --n 2000 --seed 1` compares their answers to
// random queries (fuzz.go; `make fuzz-vs-duckdb`). `oracle bench-write
// --data DIR` times a partitioned CREATE TABLE ... AS SELECT against
// DuckDB's partitioned COPY (bench_write.go; `make bench-write-vs-duckdb`).
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/duckdb/duckdb-go/v2"
	"github.com/fsql-dev/fsql/internal/answers"
	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	_ "github.com/pingcap/tidb/pkg/parser/test_driver"
)

// subcommands other than the default (writing the golden answers).
var subcommands = map[string]func(args []string) error{
	"bench":       benchMain,      // fsql against DuckDB, see bench.go
	"serve":       serveMain,      // one engine's child process of bench
	"bench-write": benchWriteMain, // CTAS against DuckDB's COPY, see bench_write.go
	"serve-write": serveWriteMain, // one engine's child process of bench-write
	"fuzz":        fuzzMain,       // random queries, fsql against DuckDB, see fuzz.go
	"duckdb":      duckMain,       // one statement on DuckDB, for triage of a fuzz report
}

// duckMain runs the statements given as arguments on DuckDB over --data
// (the views and settings fuzz and the answers use) and prints each
// answer in the .ans format.
func duckMain(args []string) error {
	fs := flag.NewFlagSet("oracle duckdb", flag.ContinueOnError)
	data := fs.String("data", "", "dataset folder (one sub-folder of Parquet files per table)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *data == "" || fs.NArg() == 0 {
		return errors.New("usage: oracle duckdb --data DIR 'SQL' ...")
	}
	ctx := context.Background()
	db, err := openDuckDB(ctx, *data)
	if err != nil {
		return err
	}
	defer db.Close()
	for _, text := range fs.Args() {
		a, err := query(ctx, db, text)
		if err != nil {
			return err
		}
		if err := a.Write(os.Stdout); err != nil {
			return err
		}
	}
	return nil
}

func main() {
	if len(os.Args) > 1 {
		if sub, ok := subcommands[os.Args[1]]; ok {
			if err := sub(os.Args[2:]); err != nil {
				fmt.Fprintln(os.Stderr, "oracle:", err)
				os.Exit(1)
			}
			return
		}
	}
	data := flag.String("data", "", "dataset folder (one sub-folder of Parquet files per table)")
	queries := flag.String("queries", "testdata/tpcds", "folder holding queries/ and duckdb/")
	out := flag.String("out", "testdata/tpcds/answers", "folder for the .ans files")
	only := flag.String("only", "", "comma-separated query names to run (default all)")
	dry := flag.Bool("dry", false, "run and check, but write no answer files")
	flag.Parse()
	if *data == "" {
		fmt.Fprintln(os.Stderr, "oracle: --data is required")
		os.Exit(2)
	}
	if err := run(*data, *queries, *out, *only, *dry); err != nil {
		fmt.Fprintln(os.Stderr, "oracle:", err)
		os.Exit(1)
	}
}

func run(data, queries, out, only string, dry bool) error {
	ctx := context.Background()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return err
	}
	defer db.Close()
	// One connection: the SET and the views live in the session.
	db.SetMaxOpenConns(1)
	// fsql follows MySQL: NULLs sort first ascending and last descending.
	if _, err := db.ExecContext(ctx, "SET default_null_order='nulls_first_on_asc_last_on_desc'"); err != nil {
		return err
	}
	tables, err := os.ReadDir(data)
	if err != nil {
		return err
	}
	for _, t := range tables {
		if !t.IsDir() {
			continue
		}
		dir, _ := filepath.Abs(filepath.Join(data, t.Name()))
		q := fmt.Sprintf("CREATE VIEW %s AS SELECT * FROM read_parquet('%s/**/*.parquet')", t.Name(), dir)
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("view %s: %w", t.Name(), err)
		}
	}
	files, err := filepath.Glob(filepath.Join(queries, "queries", "q*.sql"))
	if err != nil {
		return err
	}
	sort.Slice(files, func(i, j int) bool { return queryOrder(files[i]) < queryOrder(files[j]) })
	want := map[string]bool{}
	for _, n := range strings.Split(only, ",") {
		if n != "" {
			want[n] = true
		}
	}
	if !dry {
		if err := os.MkdirAll(out, 0o755); err != nil {
			return err
		}
	}
	failed := 0
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".sql")
		if len(want) > 0 && !want[name] {
			continue
		}
		if err := one(ctx, db, queries, out, name, dry); err != nil {
			fmt.Printf("%-5s FAILED: %v\n", name, err)
			failed++
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d queries failed", failed)
	}
	return nil
}

// queryOrder sorts q2 before q10 and q14a before q14b.
func queryOrder(path string) string {
	n := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(path), "q"), ".sql")
	digits := strings.TrimRight(n, "ab")
	i, _ := strconv.Atoi(digits)
	return fmt.Sprintf("%03d%s", i, n[len(digits):])
}

func one(ctx context.Context, db *sql.DB, queries, out, name string, dry bool) error {
	fsqlText, err := os.ReadFile(filepath.Join(queries, "queries", name+".sql"))
	if err != nil {
		return err
	}
	text := string(fsqlText)
	if b, err := os.ReadFile(filepath.Join(queries, "duckdb", name+".sql")); err == nil {
		text = string(b)
	}
	start := time.Now()
	a, err := query(ctx, db, text)
	if err != nil {
		return err
	}
	elapsed := time.Since(start)
	info, err := orderInfo(string(fsqlText), a.Columns)
	if err != nil {
		return err
	}
	a.Ordered, a.OrderKeys = info.ordered, info.keys
	note := ""
	if !info.complete {
		note = " (order keys partly unmapped)"
	}
	if info.limit > 0 && len(a.Rows) == info.limit && info.ordered {
		// Fetch one row past the cut: if it ties with the last row on the
		// ORDER BY keys, which rows make the cut is up to the engine.
		more, err := query(ctx, db, withLimit(text, info.limit+1))
		if err != nil {
			return fmt.Errorf("limit+1 run: %w", err)
		}
		last, next := a.Rows[info.limit-1], more.Rows[info.limit-1:]
		// A tied row identical to the last one leaves the answer the same.
		if len(next) > 1 && tied(a, last, next[1]) && !sameRow(a, last, next[1]) {
			if info.complete && len(info.keys) > 0 {
				note += " AMBIGUOUS: row after the LIMIT ties on the ORDER BY keys"
			} else {
				note += " POSSIBLY AMBIGUOUS: row after the LIMIT ties on the mapped ORDER BY keys"
			}
		}
	}
	fmt.Printf("%-5s %6d rows %8s ordered=%v keys=%v%s\n", name, len(a.Rows), elapsed.Round(time.Millisecond), a.Ordered, a.OrderKeys, note)
	if dry {
		return nil
	}
	f, err := os.Create(filepath.Join(out, name+".ans"))
	if err != nil {
		return err
	}
	if err := a.Write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func tied(a *answers.Answer, x, y []answers.Value) bool {
	keys := a.OrderKeys
	if len(keys) == 0 {
		return true
	}
	for _, k := range keys {
		b := &answers.Answer{Columns: []answers.Column{a.Columns[k]}, Rows: [][]answers.Value{{x[k]}}}
		c := &answers.Answer{Columns: []answers.Column{a.Columns[k]}, Rows: [][]answers.Value{{y[k]}}}
		if answers.Compare(b, c) != nil {
			return false
		}
	}
	return true
}

var limitRE = regexp.MustCompile(`(?is)\blimit\s+(\d+)\s*;?\s*$`)

func withLimit(text string, n int) string {
	return limitRE.ReplaceAllString(strings.TrimSpace(text), fmt.Sprintf("limit %d", n))
}

type order struct {
	ordered  bool
	keys     []int
	complete bool // every ORDER BY item maps to an output column
	limit    int
}

// orderInfo maps the top-level ORDER BY of the fsql text to output columns.
// It stops at the first item it cannot map (an expression, or a column not in
// the output): the keys before it still define runs the true order refines,
// so comparing those runs as multisets stays sound.
func orderInfo(text string, cols []answers.Column) (order, error) {
	p := parser.New()
	p.SetSQLMode(mysql.ModePipesAsConcat | mysql.ModeIgnoreSpace)
	stmts, _, err := p.Parse(text, "", "")
	if err != nil {
		return order{}, fmt.Errorf("parse: %w", err)
	}
	if len(stmts) != 1 {
		return order{}, fmt.Errorf("%d statements", len(stmts))
	}
	var ob *ast.OrderByClause
	var lim *ast.Limit
	var fields []*ast.SelectField
	switch s := stmts[0].(type) {
	case *ast.SelectStmt:
		ob, lim = s.OrderBy, s.Limit
		if s.Fields != nil {
			fields = s.Fields.Fields
		}
	case *ast.SetOprStmt:
		ob, lim = s.OrderBy, s.Limit
	}
	// With a wildcard the select list does not line up with the output.
	for _, f := range fields {
		if f.WildCard != nil || len(fields) != len(cols) {
			fields = nil
			break
		}
	}
	o := order{complete: true}
	if lim != nil {
		if v, ok := lim.Count.(ast.ValueExpr); ok {
			if n, err := strconv.Atoi(fmt.Sprint(v.GetValue())); err == nil {
				o.limit = n
			}
		}
	}
	if ob == nil {
		return o, nil
	}
	o.ordered = true
	for _, it := range ob.Items {
		k := mapItem(it.Expr, fields, cols)
		if k < 0 {
			o.complete = false
			break
		}
		o.keys = append(o.keys, k)
	}
	return o, nil
}

// query runs text and converts the result, typing each column from DuckDB's
// type name.
func query(ctx context.Context, db *sql.DB, text string) (*answers.Answer, error) {
	rows, err := db.QueryContext(ctx, text)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cts, err := rows.ColumnTypes()
	if err != nil {
		return nil, err
	}
	a := &answers.Answer{}
	for _, ct := range cts {
		t, err := typeOf(ct.DatabaseTypeName())
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", ct.Name(), err)
		}
		a.Columns = append(a.Columns, answers.Column{Name: ct.Name(), Type: t})
	}
	dest := make([]any, len(cts))
	ptrs := make([]any, len(cts))
	for i := range dest {
		ptrs[i] = &dest[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		row := make([]answers.Value, len(dest))
		for i, v := range dest {
			row[i], err = value(a.Columns[i].Type, v)
			if err != nil {
				return nil, fmt.Errorf("column %s: %w", a.Columns[i].Name, err)
			}
		}
		a.Rows = append(a.Rows, row)
	}
	return a, rows.Err()
}

var decimalRE = regexp.MustCompile(`^DECIMAL\((\d+),\s*(\d+)\)$`)

func typeOf(dbType string) (string, error) {
	switch dbType {
	case "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT":
		return "int64", nil
	case "HUGEINT", "UHUGEINT":
		return answers.DecimalType(38, 0), nil
	case "FLOAT", "DOUBLE":
		return "float64", nil
	case "VARCHAR":
		return "string", nil
	case "DATE":
		return "date", nil
	case "BOOLEAN":
		return "bool", nil
	}
	if m := decimalRE.FindStringSubmatch(dbType); m != nil {
		p, _ := strconv.Atoi(m[1])
		s, _ := strconv.Atoi(m[2])
		return answers.DecimalType(p, s), nil
	}
	return "", fmt.Errorf("unsupported DuckDB type %s", dbType)
}

func value(typ string, v any) (answers.Value, error) {
	if v == nil {
		return answers.Null(), nil
	}
	switch x := v.(type) {
	case int8:
		return answers.Int(int64(x)), nil
	case int16:
		return answers.Int(int64(x)), nil
	case int32:
		return answers.Int(int64(x)), nil
	case int64:
		return answers.Int(x), nil
	case uint8:
		return answers.Int(int64(x)), nil
	case uint16:
		return answers.Int(int64(x)), nil
	case uint32:
		return answers.Int(int64(x)), nil
	case uint64:
		return answers.Int(int64(x)), nil
	case float32:
		return answers.Float(float64(x)), nil
	case float64:
		return answers.Float(x), nil
	case *big.Int:
		return answers.Decimal(x), nil
	case duckdb.Decimal:
		return answers.Decimal(x.Value), nil
	case string:
		return answers.String(x), nil
	case bool:
		return answers.Bool(x), nil
	case time.Time:
		if typ == "date" {
			return answers.DateOf(x.UTC()), nil
		}
	}
	return answers.Value{}, fmt.Errorf("unexpected %T for %s", v, typ)
}

// mapItem finds the output column an ORDER BY item sorts on: a position, a
// select-list alias, a select-list expression written the same way, or an
// output column of that name. It returns -1 when there is none or several.
func mapItem(e ast.ExprNode, fields []*ast.SelectField, cols []answers.Column) int {
	if p, ok := e.(*ast.PositionExpr); ok {
		if p.N >= 1 && p.N <= len(cols) {
			return p.N - 1
		}
		return -1
	}
	text := restore(e)
	col, isCol := e.(*ast.ColumnNameExpr)
	k := -1
	match := func(i int) bool {
		if k >= 0 && k != i {
			k = -2
			return true
		}
		k = i
		return false
	}
	for i, f := range fields {
		if isCol && col.Name.Table.L == "" && f.AsName.L == col.Name.Name.L {
			if match(i) {
				return -1
			}
			continue
		}
		if restore(f.Expr) == text {
			if match(i) {
				return -1
			}
		}
	}
	if k >= 0 || !isCol {
		return k
	}
	for i, c := range cols {
		if strings.EqualFold(c.Name, col.Name.Name.O) {
			if match(i) {
				return -1
			}
		}
	}
	if k < 0 {
		return -1
	}
	return k
}

func restore(e ast.Node) string {
	var sb strings.Builder
	if err := e.Restore(format.NewRestoreCtx(format.DefaultRestoreFlags, &sb)); err != nil {
		return "?" + err.Error()
	}
	return strings.ToLower(sb.String())
}

func sameRow(a *answers.Answer, x, y []answers.Value) bool {
	b := &answers.Answer{Columns: a.Columns, Rows: [][]answers.Value{x}}
	c := &answers.Answer{Columns: a.Columns, Rows: [][]answers.Value{y}}
	return answers.Compare(b, c) == nil
}
