package sql

import (
	"errors"
	"fmt"
	goast "go/ast"
	goparser "go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec"
)

// TestASTFieldsClassified makes a parser upgrade that adds a field to a
// node the binder accepts fail here until the field is classified in
// astFields (bound, parser bookkeeping, ignored, rejected, checked).
func TestASTFieldsClassified(t *testing.T) {
	for typ, rules := range astFields {
		seen := map[string]bool{}
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			if f.Anonymous && baseFields[f.Name] {
				continue
			}
			seen[f.Name] = true
			r, ok := rules[f.Name]
			if !ok {
				t.Errorf("%s.%s (%s) is not classified in astFields: say whether the binder implements it, rejects it or may ignore it", typ, f.Name, f.Type)
				continue
			}
			if r.use == useChecked && r.check == nil {
				t.Errorf("%s.%s is checked but has no check", typ, f.Name)
			}
			if r.use == useRejected && r.clause == "" {
				t.Errorf("%s.%s is rejected without naming the clause", typ, f.Name)
			}
			if r.use == useNested {
				nt := f.Type
				if nt.Kind() == reflect.Pointer {
					nt = nt.Elem()
				}
				if _, ok := astFields[nt]; !ok {
					t.Errorf("%s.%s is nested but its type %s is not in astFields", typ, f.Name, nt)
				}
			}
		}
		for name := range rules {
			if !seen[name] {
				t.Errorf("astFields classifies %s.%s, which the parser no longer has", typ, name)
			}
		}
	}
}

// rejectedWhole are node types the binder names only to fail on them.
var rejectedWhole = map[string]bool{
	"ast.VariableExpr": true, "ast.RowExpr": true, "ast.PatternRegexpExpr": true,
	"ast.CompareSubqueryExpr": true, "ast.StmtNode": true, "ast.ResultSetNode": true, "ast.ExprNode": true,
	"ast.Node": true, "ast.ValueExpr": true,
	"test_driver.MyDecimal": true, // a literal's value, not a node
}

// TestBoundTypesClassified reads the binder's source: every parser node
// type it switches on or asserts must be classified in astFields, so a
// node the binder starts to accept cannot bring unread fields along.
func TestBoundTypesClassified(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for typ := range astFields {
		known[typ.String()] = true
	}
	fset := token.NewFileSet()
	used := map[string]string{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || name == "strict.go" {
			continue
		}
		f, err := goparser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		note := func(e goast.Expr) {
			if st, ok := e.(*goast.StarExpr); ok {
				e = st.X
			}
			sel, ok := e.(*goast.SelectorExpr)
			if !ok {
				return
			}
			pkg, ok := sel.X.(*goast.Ident)
			if !ok || (pkg.Name != "ast" && pkg.Name != "driver") {
				return
			}
			n := pkg.Name + "." + sel.Sel.Name
			if pkg.Name == "driver" {
				n = "test_driver." + sel.Sel.Name
			}
			used[n] = fset.Position(e.Pos()).String()
		}
		goast.Inspect(f, func(n goast.Node) bool {
			switch x := n.(type) {
			case *goast.TypeAssertExpr:
				if x.Type != nil {
					note(x.Type)
				}
			case *goast.TypeSwitchStmt:
				for _, c := range x.Body.List {
					for _, e := range c.(*goast.CaseClause).List {
						note(e)
					}
				}
			}
			return true
		})
	}
	var missing []string
	for n, where := range used {
		if !known[n] && !rejectedWhole[n] {
			missing = append(missing, n+" ("+where+")")
		}
	}
	sort.Strings(missing)
	for _, m := range missing {
		t.Errorf("the binder accepts %s but astFields does not classify its fields", m)
	}
}

func TestCheckStatement(t *testing.T) {
	for _, c := range []struct {
		sql, want string
		sentinel  error
	}{
		{"select * from t tablesample bernoulli(10)", "TABLESAMPLE", exec.ErrNotImplemented},
		{"select * from t partition (p1)", "PARTITION", exec.ErrNotImplemented},
		{"select * from t as of timestamp '2020-01-01'", "AS OF TIMESTAMP", exec.ErrNotImplemented},
		{"select * from db.t", "database qualifier 'db.'", errs.ErBadDBError},
		{"select db.t.a from t", "database qualifier 'db.'", errs.ErBadDBError},
		{"select db.t.* from t", "database qualifier 'db.'", errs.ErBadDBError},
		{"select db.f(1)", "database qualifier 'db.'", errs.ErBadDBError},
		{"select * from t into outfile '/tmp/x'", "INTO OUTFILE", exec.ErrNotImplemented},
		{"select * from t for update", "FOR UPDATE", exec.ErrNotImplemented},
		{"select * from t for update nowait", "FOR UPDATE NOWAIT", exec.ErrNotImplemented},
		{"select * from t lock in share mode", "LOCK IN SHARE MODE", exec.ErrNotImplemented},
		{"select sql_calc_found_rows * from t", "SQL_CALC_FOUND_ROWS", exec.ErrNotImplemented},
		{"select /*+ set_var(sql_mode='') */ * from t", "hint SET_VAR", exec.ErrNotImplemented},
		{"select /*+ max_execution_time(10) */ * from t", "hint MAX_EXECUTION_TIME", exec.ErrNotImplemented},
		{"select a from t full join u on t.a = u.a", "FULL [OUTER] JOIN is not MySQL syntax", exec.ErrNotImplemented},
		{"select a from t semi join u on t.a = u.a", "SEMI JOIN", exec.ErrNotImplemented},
		{"select a from v join t anti join u on t.a = u.a", "ANTI JOIN", exec.ErrNotImplemented},
		{"explain format = 'json' select 1", "FORMAT = 'json'", exec.ErrNotImplemented},
		{"with recursive r as (select 1) select * from r", "WITH RECURSIVE", exec.ErrNotImplemented},
		{"select * from t, lateral (select 1) x", "LATERAL", exec.ErrNotImplemented},
		{"select a from t group by a desc", "ASC/DESC after a GROUP BY item", exec.ErrNotImplemented},
		{"select a from t group by a asc", "ASC/DESC after a GROUP BY item", exec.ErrNotImplemented},
		{"show databases", "", nil}, // fails in bindShow, not here
		{"show full processlist", "", nil},
		{"show tables from db", "database 'db'", errs.ErBadDBError},
		{"show columns from db.t", "database qualifier 'db.'", errs.ErBadDBError},
		{"show global variables", "SHOW GLOBAL VARIABLES", exec.ErrNotImplemented},
		{"set global parallelism.default = 1", "SET GLOBAL", exec.ErrNotImplemented},
		{"table t", "TABLE statement", exec.ErrNotImplemented},
	} {
		stmts, err := Parse(c.sql)
		if err != nil {
			t.Errorf("%s: %v", c.sql, err)
			continue
		}
		_, err = checkStatement(stmts[0], "")
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v, want it to pass the check", c.sql, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, c.sentinel) {
			t.Errorf("%s: got %v, want an error naming %q wrapping %v", c.sql, err, c.want, c.sentinel)
		}
	}
	// Accepted: hints and options that cannot change an answer, and
	// FULL/SEMI/ANTI as aliases where no JOIN follows.
	for _, q := range []string{
		"select /*+ hash_join(t) leading(t, u) */ straight_join sql_no_cache high_priority sql_small_result all a from t use index (i) join u force index (j) on t.a = u.a",
		"select a from t full",
		"select a from u join t full",
		"select a from t x straight_join u on x.a = u.a",
		"select cast(a as char), cast(a as char(3)), cast(a as char character set utf8mb4), cast(a as signed), cast(a as decimal(5,2)), cast(a as date) from t",
		"explain select 1",
		"explain analyze select 1",
		"select a from t group by a order by a desc",
		"select rank() over (partition by a desc order by b) from t",
		"select group_concat(a order by a desc separator ';'), cast(a as unsigned), cast(a as datetime(3)) from t",
		"show builtins",
		"show full tables like 'a%'",
		"describe t",
	} {
		stmts, err := Parse(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if _, err := checkStatement(stmts[0], ""); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
}

func TestFullOuterJoinMessage(t *testing.T) {
	_, err := Parse("select *\nfrom a full outer join b on a.k = b.k")
	if err == nil || !errors.Is(err, exec.ErrNotImplemented) || !strings.Contains(err.Error(), "FULL OUTER JOIN (line 2 column") || !strings.Contains(err.Error(), "LEFT JOIN") {
		t.Errorf("got %v", err)
	}
	// Other syntax errors keep the parser's message.
	_, err = Parse("select * from a left outer join")
	if err == nil || !strings.Contains(err.Error(), "syntax error") || strings.Contains(err.Error(), "FULL") {
		t.Errorf("got %v", err)
	}
}

func TestLimits(t *testing.T) {
	nest := func(n int, open, close string) string {
		return strings.Repeat(open, n) + "1" + strings.Repeat(close, n)
	}
	for _, c := range []struct {
		sql  string
		want string // "" for accepted
	}{
		{"select " + nest(MaxExprDepth-2, "abs(", ")"), ""},
		{"select " + nest(MaxExprDepth+1, "abs(", ")"), "more than 1000 levels"},
		{"select " + nest(MaxExprDepth+1, "(", ")"), ""}, // parentheses add no level
		{"select 1 from t where " + strings.Repeat("a = 1 or ", 5000) + "a = 2", ""},
		{"select 1 from t where " + strings.Repeat("a = 1 and ", 5000) + "a = 2", ""},
		{"select " + nest(MaxExprDepth, "1 + ", "") + "", "more than 1000 levels"},
		{strings.Repeat("select * from (", MaxExprDepth) + "select 1" + strings.Repeat(") x", MaxExprDepth), "more than 1000 levels"},
		{strings.Repeat("select * from (", MaxExprDepth-2) + "select 1" + strings.Repeat(") x", MaxExprDepth-2), ""},
		{strings.Repeat("select 1 union all ", MaxCompoundSelect-1) + "select 1", ""},
		{strings.Repeat("select 1 union all ", MaxCompoundSelect) + "select 1", "501 SELECTs"},
	} {
		stmts, err := Parse(c.sql)
		if err != nil {
			t.Fatalf("%.60s: %v", c.sql, err)
		}
		_, err = checkStatement(stmts[0], "")
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%.60s...: %v", c.sql, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, exec.ErrResourcesExhausted)):
			t.Errorf("%.60s...: got %v, want %q", c.sql, err, c.want)
		}
	}
}

func TestBoundRelationsLimit(t *testing.T) {
	// Each level references the previous CTE twice: 2^13 leaves.
	ctes := []string{"c0 as (select 1 as k)"}
	for i := 1; i <= 13; i++ {
		ctes = append(ctes, fmt.Sprintf("c%d as (select a.k from c%d a join c%d b on a.k = b.k)", i, i-1, i-1))
	}
	stmts, err := Parse("with " + strings.Join(ctes, ", ") + " select count(*) from c13")
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewBinder(nil).Bind(stmts[0])
	if !errors.Is(err, exec.ErrResourcesExhausted) || !strings.Contains(err.Error(), "more than 10000 query blocks and tables") || strings.Contains(err.Error(), "in WITH") {
		t.Errorf("got %v", err)
	}
	// Four levels bind.
	stmts, err = Parse("with " + strings.Join(ctes[:5], ", ") + " select count(*) from c4")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewBinder(nil).Bind(stmts[0]); err != nil {
		t.Errorf("four levels: %v", err)
	}
}
