package planner_test

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsql-dev/fsql/connectors/hive"
	"github.com/fsql-dev/fsql/internal/slt"
	"github.com/fsql-dev/fsql/planner"
	"github.com/fsql-dev/fsql/sql"
)

func catalog(t testing.TB) *hive.Catalog {
	t.Helper()
	return sltFileCatalog(t, "testdata/tables.slt")
}

// sltFileCatalog is sltCatalog over the tables of the .slt file at path.
func sltFileCatalog(t testing.TB, path string) *hive.Catalog {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return sltCatalog(t, filepath.Base(path), f)
}

// sltCatalog writes the tables of an .slt text (internal/slt's table
// blocks) as Parquet into a temporary folder and opens it.
func sltCatalog(t testing.TB, name string, r io.Reader) *hive.Catalog {
	t.Helper()
	file, err := slt.Parse(name, r)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := slt.WriteTables(dir, file.Tables()); err != nil {
		t.Fatal(err)
	}
	cat, err := hive.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

func optimize(t *testing.T, cat *hive.Catalog, q string) string {
	t.Helper()
	stmts, err := sql.Parse(q)
	if err != nil {
		t.Fatal(err)
	}
	st, err := sql.NewBinder(cat).Bind(stmts[0])
	if err != nil {
		t.Fatal(err)
	}
	p, err := planner.Optimize(st.Plan, nil)
	if err != nil {
		t.Fatal(err)
	}
	return planner.Format(p)
}

// Each case lists lines the optimized plan must contain and lines it must
// not: the rules' observable effects.
func TestRules(t *testing.T) {
	cat := catalog(t)
	cases := []struct {
		name, query string
		want, not   []string
		before      [][2]string // the first line is above the second in the plan
	}{
		{
			name:  "filter pushed into the scan",
			query: "select name from l where lv > 15",
			want:  []string{"Scan l [name, lv] filters [(l.lv > 15)]"},
			not:   []string{"Filter"},
		},
		{
			name:  "ON predicate of the preserved side stays on the outer join",
			query: "select * from l left join r on l.id = r.id and l.lv > 15",
			want:  []string{"Join left on ((l.id = r.id) AND (l.lv > 15))", "Scan l [id, name, lv]"},
			not:   []string{"Scan l [id, name, lv] filters"},
		},
		{
			name:  "ON predicate of the optional side goes below the outer join",
			query: "select * from l left join r on l.id = r.id and r.w > 150",
			want:  []string{"Join left on (l.id = r.id)", "Scan r [id, rv, w] filters [(r.w > 150)]"},
		},
		{
			name:  "null-rejecting WHERE turns the outer join inner",
			query: "select * from l left join r on l.id = r.id where r.w > 150",
			want:  []string{"Join inner on (l.id = r.id)", "filters [(r.w > 150)]"},
			not:   []string{"Join left"},
		},
		{
			name:  "a comma join's condition across inputs that rejects the optional side's NULLs turns the outer join inner (q93)",
			query: "select l.name, a.ax from l left join r on l.id = r.id, a where r.w = a.x",
			want:  []string{"Join inner on (r.w = a.x)"},
			not:   []string{"Join left", "MultiJoin"},
		},
		{
			name:  "an IS NULL across inputs keeps the outer join below the comma join",
			query: "select l.name, a.ax from l left join r on l.id = r.id, a where (r.w is null) = (a.x = 1)",
			want:  []string{"Join left on (l.id = r.id)"},
		},
		{
			name:  "IS NULL on the optional side keeps the outer join",
			query: "select * from l left join r on l.id = r.id where r.w is null",
			want:  []string{"Join left on (l.id = r.id)", "Filter (r.w IS NULL)"},
		},
		{
			name:  "a TRUE conjunct left by a pushed predicate meeting a constant column is dropped (q4)",
			query: "select * from (select 's' as t, id, count(*) as c from l group by id union all select 'w', id, count(*) from r group by id) x where t = 's' and c > 1",
			want:  []string{"Filter (count(1) > 1)"},
			not:   []string{"TRUE"},
		},
		{
			name:  "comma joins are ordered without a cross product",
			query: "select * from a, b, c where a.x = c.x and c.y = b.y",
			not:   []string{"(cross)", "MultiJoin"},
		},
		{
			name:  "a join condition repeated in every OR branch becomes a join key",
			query: "select * from a, c where (a.x = c.x and a.ax = 1) or (c.x = a.x and c.cx = 2) or (a.x = c.x and a.ax = 3)",
			want:  []string{"Join inner on ((a.x = c.x) AND"},
			not:   []string{"(cross)"},
		},
		{
			name:  "static partition pruning",
			query: "select v from p where k = 2",
			want:  []string{"partitions 1/3"},
		},
		{
			name:  "columns nobody reads are not scanned",
			query: "select count(*) from r where w > 1",
			want:  []string{"Scan r [w] filters"},
		},
		{
			name:  "a UNION ALL branch under a constant that cannot match is not planned",
			query: "select * from (select 's' t, id from l union all select 'r' t, id from r) u where t = 'r'",
			want:  []string{"Scan r [id]"},
			not:   []string{"Scan l", "FALSE", "Union"},
		},
		{
			name:  "an inner join with an empty side is empty",
			query: "select * from l join r on l.id = r.id where 1 = 0",
			want:  []string{"Values (0 rows)"},
			not:   []string{"Scan", "Join"},
		},
		{
			name:  "a left join against an empty side keeps its left rows",
			query: "select * from l left join (select * from r where false) x on l.id = x.id",
			want:  []string{"Scan l [id, name, lv]", "NULL"},
			not:   []string{"Scan r", "Join"},
		},
		{
			name:  "NOT IN an empty subquery keeps every row",
			query: "select id from l where id not in (select id from r where 1 = 0)",
			want:  []string{"Scan l [id]"},
			not:   []string{"Scan r", "Join"},
		},
		{
			name:  "a global aggregate over no rows still returns its row",
			query: "select count(*) from l where false",
			want:  []string{"Aggregate", "Values (0 rows)"},
		},
		{
			name:   "a scalar subquery filtering a dimension joins it before the fact does",
			query:  "select fv from f, d where f.x = d.dk and d.ds = (select max(ds) from d)",
			before: [][2]string{{"Join inner on (f.x = d.dk)", "Join inner on (d.ds = "}},
		},
		{
			name:   "a semi join filtering a dimension joins it before the fact does",
			query:  "select fv from f, d where f.x = d.dk and d.ds in (select ds from d where dk < 3)",
			before: [][2]string{{"Join inner on (f.x = d.dk)", "Join semi"}},
		},
		{
			name:   "a semi join on the fact's own columns stays above the joins",
			query:  "select fv from f, d where f.x = d.dk and f.fy in (select dk from d)",
			before: [][2]string{{"Join semi", "Join inner on (f.x = d.dk)"}},
		},
		{
			name:   "an unconnected input is crossed after the connected ones are joined",
			query:  "select * from f, a, b where a.x = b.y",
			before: [][2]string{{"(cross)", "Join inner on (a.x = b.y)"}},
		},
		{
			name:  "filter on a group key goes below the aggregate",
			query: "select id, count(*) from r group by id having id > 1",
			want:  []string{"Scan r [id] filters [(r.id > 1)]"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			plan := optimize(t, cat, c.query)
			for _, w := range c.want {
				if !strings.Contains(plan, w) {
					t.Errorf("plan lacks %q:\n%s", w, plan)
				}
			}
			for _, n := range c.not {
				if strings.Contains(plan, n) {
					t.Errorf("plan has %q:\n%s", n, plan)
				}
			}
			for _, pair := range c.before {
				a, b := strings.Index(plan, pair[0]), strings.Index(plan, pair[1])
				if a < 0 || b < 0 || a > b {
					t.Errorf("plan lacks %q above %q:\n%s", pair[0], pair[1], plan)
				}
			}
		})
	}
}

func TestRuleNames(t *testing.T) {
	got := strings.Join(planner.RuleNames(), ",")
	want := "fold_constants,fold_empty,push_down_filters,left_join_to_anti,merge_scalar_aggregates,filter_group_keys,filter_dimensions,search_joins,order_joins,push_expressions_below_join,push_distinct_below_join,order_windows,prune_columns,merge_projections,prune_partitions,share_filtered,share_subplans"
	if got != want {
		t.Fatalf("rules %s, want %s", got, want)
	}
}
