package fsql_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/fsql-dev/fsql"
	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/internal/format"
	"github.com/fsql-dev/fsql/internal/slt"
	fsqlsql "github.com/fsql-dev/fsql/sql"
)

// sessionEngine opens an engine over tables declared as in .slt files.
func sessionEngine(t *testing.T, decl string) *fsql.Engine {
	t.Helper()
	f, err := slt.Parse("tables", strings.NewReader(decl))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := slt.WriteTables(dir, f.Tables()); err != nil {
		t.Fatal(err)
	}
	eng, err := fsql.Open(dir, fsql.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	return eng
}

const sessionTables = `table t (k int, s varchar, d decimal(7,2), e date)
1	a	1.50	2000-01-01
2	b'	2.25	2000-01-02
3	NULL	NULL	NULL

partitioned table p (v bigint, day date, n int) by (day, n)
1	2000-01-01	1
`

type querier interface {
	Query(ctx context.Context, q string, args ...any) (*fsql.Rows, error)
}

// rowsOf runs q and renders its rows as the table format does, one line
// per row, values separated by tabs, plus one type per column.
func rowsOf(t *testing.T, db querier, q string, args ...any) ([]string, []string, error) {
	t.Helper()
	rows, err := db.Query(context.Background(), q, args...)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var types []string
	for _, f := range rows.Schema().Fields() {
		types = append(types, f.Type.String())
	}
	var lines []string
	for rows.Next() {
		for _, r := range format.Rows(rows.RecordBatch()) {
			lines = append(lines, strings.Join(r, "\t"))
		}
	}
	return lines, types, rows.Err()
}

func variable(t *testing.T, db querier, key string) string {
	t.Helper()
	lines, _, err := rowsOf(t, db, "show variables like ?", key)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 1 {
		t.Fatalf("show variables like %q: %q", key, lines)
	}
	_, v, _ := strings.Cut(lines[0], "\t")
	return v
}

func TestSessionSettingsAreItsOwn(t *testing.T) {
	eng := sessionEngine(t, sessionTables)
	a, b := eng.Session(), eng.Session()
	if err := a.Exec(context.Background(), "set `execution.memory.query-budget` = '1gb', parallelism.default = 7"); err != nil {
		t.Fatal(err)
	}
	if got := a.Config().MemoryBudget; got != 1<<30 {
		t.Errorf("session a budget %d, want 1gb", got)
	}
	if got := variable(t, a, "parallelism.default"); got != "7" {
		t.Errorf("session a sees parallelism %s, want 7", got)
	}
	def := fmt.Sprint(fsql.DefaultConfig().Parallelism)
	if got := variable(t, b, "parallelism.default"); got != def {
		t.Errorf("session b sees parallelism %s, want the engine's %s", got, def)
	}
	if got := variable(t, eng, "parallelism.default"); got != def {
		t.Errorf("the engine sees parallelism %s, want %s", got, def)
	}
	if eng.Config().MemoryBudget != fsql.DefaultConfig().MemoryBudget {
		t.Errorf("SET in a session changed the engine's config")
	}
	// Engine.Query has no session to change.
	_, _, err := rowsOf(t, eng, "set parallelism.default = 3")
	if !errors.Is(err, errs.Semantic) || !strings.Contains(err.Error(), "Session") {
		t.Errorf("SET through Engine.Query: %v, want an error naming Session", err)
	}
	// Session.Set is SET.
	if err := b.Set("table.optimizer.dynamic-filtering.enabled", "off"); err != nil {
		t.Fatal(err)
	}
	if b.Config().DynamicFiltering {
		t.Errorf("Session.Set did not apply")
	}
	if err := b.Set("parallelism.defualt", "3"); err == nil || !strings.Contains(err.Error(), "did you mean parallelism.default?") {
		t.Errorf("Session.Set of a mistyped key: %v", err)
	}
}

// TestErrorCodes: the errors of this surface carry MySQL's numbers (what a
// MySQL-protocol front end sends) and, for names in the statement, their
// position.
func TestErrorCodes(t *testing.T) {
	eng := sessionEngine(t, sessionTables)
	s := eng.Session()
	for _, c := range []struct {
		q    string
		args []any
		want errs.Condition
		pos  *errs.Position // nil: none expected
	}{
		{"select k,\n  kk from t", nil, errs.ErBadFieldError, &errs.Position{Line: 2, Column: 3, Offset: 12}},
		{"select x.k from t", nil, errs.ErBadFieldError, &errs.Position{Line: 1, Column: 8, Offset: 7}},
		{"select k from\n tt", nil, errs.ErNoSuchTable, &errs.Position{Line: 2, Column: 2, Offset: 15}},
		{"select sqtr(k) from t", nil, errs.ErSpDoesNotExist, &errs.Position{Line: 1, Column: 8, Offset: 7}},
		{"select k from t where k = ?", []any{struct{}{}}, errs.ErWrongArguments, &errs.Position{Line: 1, Column: 27, Offset: 26}},
		{"select k from t where k = ?", nil, errs.ErWrongArguments, nil},
		{"set parallelism.defualt = 2", nil, errs.ErUnknownSystemVariable, nil},
		{"set parallelism.default = 'many'", nil, errs.ErWrongValueForVar, nil},
		{"set parallelism.default = k", nil, errs.ErWrongValueForVar, nil},
		{"set @x = 1", nil, errs.ErNotSupportedYet, nil},
		{"show databases", nil, errs.ErNotSupportedYet, nil},
		{"show tables from db", nil, errs.ErBadDBError, nil},
	} {
		_, _, err := rowsOf(t, s, c.q, c.args...)
		if !errors.Is(err, c.want) {
			t.Errorf("%q: %v, want %s", c.q, err, c.want.Name)
			continue
		}
		if code, state := errs.CodeOf(err); code != c.want.Code || state != c.want.SQLState {
			t.Errorf("%q: code %d %s, want %d %s", c.q, code, state, c.want.Code, c.want.SQLState)
		}
		got := errs.PositionOf(err)
		switch {
		case c.pos == nil && got != nil:
			t.Errorf("%q: position %v, want none", c.q, *got)
		case c.pos != nil && (got == nil || *got != *c.pos):
			t.Errorf("%q: position %v, want %v", c.q, got, *c.pos)
		}
	}
}

// TestSessionsConcurrent changes settings in several sessions at once
// (run with -race): each sees only its own.
func TestSessionsConcurrent(t *testing.T) {
	eng := sessionEngine(t, sessionTables)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := 1; i <= 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := eng.Session()
			for j := 0; j < 5; j++ {
				want := fmt.Sprint(i*10 + j)
				if err := s.Exec(context.Background(), "set `table.exec.dynamic-filtering.max-values` = ?", want); err != nil {
					errs <- err
					return
				}
				if got := variable(t, s, "table.exec.dynamic-filtering.max-values"); got != want {
					errs <- fmt.Errorf("session %d sees %s, want %s", i, got, want)
					return
				}
				if _, _, err := rowsOf(t, s, "select count(*) from t where k > ?", j); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestSetDefaultRoundTrip: every key's displayed value sets the same
// value again, so SET key = DEFAULT restores DefaultConfig's value.
func TestSetDefaultRoundTrip(t *testing.T) {
	def := fsql.DefaultConfig()
	for _, st := range def.Settings() {
		c := def
		if err := c.Set(st.Key, st.Value); err != nil {
			t.Errorf("%s: its own value %q does not set: %v", st.Key, st.Value, err)
			continue
		}
		if c != def {
			t.Errorf("%s: setting %q changed the config", st.Key, st.Value)
		}
		if st.Doc == "" {
			t.Errorf("%s has no meaning for fsql help", st.Key)
		}
	}
	if len(def.Settings()) != len(fsql.ConfigKeys()) {
		t.Errorf("Settings lists %d keys, ConfigKeys %d", len(def.Settings()), len(fsql.ConfigKeys()))
	}
	eng := sessionEngine(t, sessionTables)
	s := eng.Session()
	for _, st := range def.Settings() {
		// A value other than the default, then DEFAULT.
		q := fmt.Sprintf("set `%s` = DEFAULT", st.Key)
		if err := s.Exec(context.Background(), q); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
	if s.Config() != def {
		t.Errorf("after SET ... = DEFAULT of every key the session differs from DefaultConfig")
	}
	if err := s.Exec(context.Background(), "set `execution.memory.query-budget` = '64mb'"); err != nil {
		t.Fatal(err)
	}
	if err := s.Exec(context.Background(), "set `execution.memory.query-budget` = default"); err != nil {
		t.Fatal(err)
	}
	if s.Config().MemoryBudget != def.MemoryBudget {
		t.Errorf("DEFAULT gave %d, want %d", s.Config().MemoryBudget, def.MemoryBudget)
	}
}

type id int64

type valuer struct{ v any }

func (v valuer) Value() (driver.Value, error) { return v.v, nil }

func TestQueryParameters(t *testing.T) {
	eng := sessionEngine(t, sessionTables)
	one := int64(1)
	var nilPtr *int
	for _, c := range []struct {
		q     string
		args  []any
		want  string // rows joined by |
		types string // "" to skip
	}{
		{"select k from t where k = ?", []any{2}, "2", "int32"},
		{"select k from t where k > ? and k < ?", []any{int8(1), uint64(3)}, "2", ""},
		{"select k from t where k = ?", []any{id(3)}, "3", ""},
		{"select k from t where k = ?", []any{&one}, "1", ""},
		{"select count(*) from t where k = ?", []any{nilPtr}, "0", ""},
		{"select ?", []any{42}, "42", "int64"},
		{"select ?", []any{1.5}, "1.5", "float64"},
		{"select ?", []any{float32(0.5)}, "0.5", "float64"},
		{"select ?", []any{true}, "1", "int64"},
		{"select ?", []any{nil}, "NULL", ""},
		{"select ?", []any{fsql.Decimal("12.50")}, "12.50", "decimal(4, 2)"},
		{"select ?", []any{[]byte("bytes")}, "bytes", "utf8"},
		{"select ?", []any{time.Date(2000, 1, 2, 3, 4, 5, 6000, time.FixedZone("x", 7200))}, "2000-01-02 03:04:05.000006", "timestamp[us]"},
		{"select ?", []any{sql.NullInt64{}}, "NULL", ""},
		{"select ?", []any{sql.NullString{String: "v", Valid: true}}, "v", "utf8"},
		{"select ?", []any{valuer{int64(7)}}, "7", "int64"},
		// A string parameter is a value, never SQL text.
		{"select k from t where s = ?", []any{"b'"}, "2", ""},
		{"select count(*) from t where s = ?", []any{"a' or '1' = '1"}, "0", ""},
		{"select k from t where d = ?", []any{fsql.Decimal("2.25")}, "2", ""},
		{"select k from t where e = ?", []any{time.Date(2000, 1, 1, 0, 0, 0, 0, time.FixedZone("x", 3600))}, "1", ""},
		{"select k from t where e = ?", []any{"2000-01-02"}, "2", ""},
		{"select k from t order by k limit ? offset ?", []any{1, 1}, "2", ""},
		{"select ? + ?, concat(?, 'x')", []any{1, 2, "a"}, "3\tax", ""},
		{"select k from t where k in (?, ?) order by k", []any{1, 3}, "1|3", ""},
		{"select sum(k) from t group by k > 1 having sum(k) > ?", []any{2}, "5", ""},
		{"select ? from (select ? as x) y where x = ?", []any{"a", 1, 1}, "a", ""},
		{"explain select k from t where k = ?", []any{1}, "", ""},
		{"show tables like ?", []any{"P"}, "p", ""},
		{"select k from t where k = (select max(k) - ? from t)", []any{1}, "2", ""},
	} {
		lines, types, err := rowsOf(t, eng, c.q, c.args...)
		if err != nil {
			t.Errorf("%s %v: %v", c.q, c.args, err)
			continue
		}
		if strings.HasPrefix(c.q, "explain") {
			if !strings.Contains(strings.Join(lines, "\n"), "= 1") {
				t.Errorf("%s: the plan does not show the parameter's value:\n%s", c.q, strings.Join(lines, "\n"))
			}
			continue
		}
		if got := strings.Join(lines, "|"); got != c.want {
			t.Errorf("%s %v = %q, want %q", c.q, c.args, got, c.want)
		}
		if c.types != "" && strings.Join(types, ",") != c.types {
			t.Errorf("%s %v: types %s, want %s", c.q, c.args, strings.Join(types, ","), c.types)
		}
	}
	for _, c := range []struct {
		q    string
		args []any
		want string
	}{
		{"select k from t where k = ?", nil, "the statement has 1 parameter marker (?) (the first at line 1 column 27) but 0 arguments were given"},
		{"select ?, ?", []any{1}, "has 2 parameter markers (?) (the first at line 1 column 8) but 1 argument was given"},
		{"select 1", []any{1}, "has 0 parameter markers (?) but 1 argument was given"},
		{"select ?", []any{struct{}{}}, "argument 1 (for the ? at line 1 column 8): fsql cannot pass a struct {} as a parameter"},
		{"select ?", []any{uint64(math.MaxUint64)}, "above BIGINT's maximum"},
		{"select ?", []any{math.NaN()}, "not a number"},
		{"select ?", []any{time.Date(2000, 1, 2, 3, 0, 0, 1, time.UTC)}, "below a microsecond"},
		{"select ?", []any{fsql.Decimal("1.2.3")}, "bad decimal"},
		{"select k from t limit ?", []any{-1}, "LIMIT must be a non-negative integer"},
		{"select k from t limit ?", []any{"2"}, "LIMIT must be a non-negative integer"},
	} {
		_, _, err := rowsOf(t, eng, c.q, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, errs.ErWrongArguments) {
			t.Errorf("%s %v: %v, want ER_WRONG_ARGUMENTS containing %q", c.q, c.args, err, c.want)
		}
	}
	// SET takes parameters too.
	s := eng.Session()
	if err := s.Exec(context.Background(), "set `execution.memory.query-budget` = ?", "2mb"); err != nil {
		t.Fatal(err)
	}
	if s.Config().MemoryBudget != 2<<20 {
		t.Errorf("SET ... = ?: budget %d", s.Config().MemoryBudget)
	}
}

// TestShowCreateTableParses: the statement SHOW CREATE TABLE prints is
// one the parser reads back, with the same columns, types and partition
// keys.
func TestShowCreateTableParses(t *testing.T) {
	eng := sessionEngine(t, sessionTables)
	for _, c := range []struct {
		table string
		cols  []string
		part  []string
	}{
		{"t", []string{"k int(11)", "s longtext", "d decimal(7,2)", "e date"}, nil},
		{"p", []string{"v bigint(20)", "day date", "n int(11)"}, []string{"day", "n"}},
	} {
		lines, _, err := rowsOf(t, eng, "show create table "+c.table)
		if err != nil {
			t.Fatal(err)
		}
		_, text, _ := strings.Cut(lines[0], "\t")
		stmts, err := fsqlsql.Parse(text)
		if err != nil {
			t.Fatalf("%s does not parse: %v", text, err)
		}
		ct, ok := stmts[0].(*ast.CreateTableStmt)
		if !ok {
			t.Fatalf("%s parses as %T", text, stmts[0])
		}
		var cols []string
		for _, col := range ct.Cols {
			cols = append(cols, col.Name.Name.O+" "+strings.ToLower(col.Tp.String()))
		}
		if strings.Join(cols, ", ") != strings.Join(c.cols, ", ") {
			t.Errorf("%s: columns %q, want %q", text, cols, c.cols)
		}
		var part []string
		if ct.Partition != nil {
			if ct.Partition.Tp != ast.PartitionTypeKey {
				t.Errorf("%s: partitioned by %v, want KEY", text, ct.Partition.Tp)
			}
			for _, col := range ct.Partition.ColumnNames {
				part = append(part, col.Name.O)
			}
		}
		if strings.Join(part, ",") != strings.Join(c.part, ",") {
			t.Errorf("%s: partition keys %q, want %q", text, part, c.part)
		}
	}
}

// TestSessionCatalogSettings: the keys the engine reads when it opens
// (csv.*, the worker pool) are honoured per session through the
// session's own catalog and workers; path-tables.outside-data-dir cannot
// be widened beyond the engine's.
func TestSessionCatalogSettings(t *testing.T) {
	dir := t.TempDir()
	writeText(t, filepath.Join(dir, "in", "a.csv"), "x;y\n1;2\n")
	eng, err := fsql.Open(dir, fsql.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	const q = "describe `in/a.csv`"
	fields := func(db querier) string {
		lines, _, err := rowsOf(t, db, q)
		if err != nil {
			t.Fatal(err)
		}
		var f []string
		for _, l := range lines {
			name, rest, _ := strings.Cut(l, "\t")
			typ, _, _ := strings.Cut(rest, "\t")
			f = append(f, name+" "+typ)
		}
		return strings.Join(f, ", ")
	}
	s := eng.Session()
	if err := s.Exec(context.Background(), "set `csv.field-delimiter` = ';'"); err != nil {
		t.Fatal(err)
	}
	if got := fields(s); got != "x bigint, y bigint" {
		t.Errorf("session with ';': %s", got)
	}
	if got := fields(eng); got != "x;y longtext" {
		t.Errorf("engine: %s", got)
	}
	// A second session with the same settings shares the catalog; SET
	// back to the default reads through the engine's again.
	if err := s.Exec(context.Background(), "set `csv.field-delimiter` = default"); err != nil {
		t.Fatal(err)
	}
	if got := fields(s); got != "x;y longtext" {
		t.Errorf("session after DEFAULT: %s", got)
	}
	// Workers of the session's shape: the query runs (EXPLAIN ANALYZE
	// shows where).
	if err := s.Exec(context.Background(), "set `minicluster.number-of-taskmanagers` = 2, taskmanager.numberOfTaskSlots = 1, `execution.batch.adaptive.auto-parallelism.enabled` = off, parallelism.default = 4"); err != nil {
		t.Fatal(err)
	}
	const spread = "explain analyze select `x;y`, count(*) from `in/a.csv` group by 1"
	lines, _, err := rowsOf(t, s, spread)
	if err != nil {
		t.Fatal(err)
	}
	if plan := strings.Join(lines, "\n"); !strings.Contains(plan, "tm-1") {
		t.Errorf("the session's second worker ran nothing:\n%s", plan)
	}
	lines, _, err = rowsOf(t, eng, spread)
	if err != nil {
		t.Fatal(err)
	}
	if plan := strings.Join(lines, "\n"); strings.Contains(plan, "tm-1") {
		t.Errorf("the engine has one worker, but:\n%s", plan)
	}
	// The library's default keeps path tables inside the data folder; a
	// session cannot lift that.
	err = s.Exec(context.Background(), "set `path-tables.outside-data-dir` = true")
	if err == nil || !strings.Contains(err.Error(), "cannot allow what the engine does not") {
		t.Errorf("widening path-tables.outside-data-dir: %v", err)
	}
	if err := s.Exec(context.Background(), "set `path-tables.outside-data-dir` = false"); err != nil {
		t.Errorf("narrowing is allowed: %v", err)
	}
}
