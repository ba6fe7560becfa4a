package planner_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/fsql-dev/fsql/connectors/hive"
)

// TestLeftJoinToAnti: which LEFT JOIN ... WHERE right IS NULL become anti
// joins (the answers are in testdata/slt/left_join_to_anti.slt).
func TestLeftJoinToAnti(t *testing.T) {
	cat := catalog(t)
	cases := []struct {
		name, query string
		anti        bool
		want        []string // lines the plan must also hold
	}{
		{name: "IS NULL of an = key", anti: true,
			query: "select l.name from l left join r on l.id = r.id where r.id is null",
			want:  []string{"Join anti on (l.id = r.id)"}},
		{name: "the key written on the right of =", anti: true,
			query: "select l.name from l left join r on r.id = l.id where r.id is null"},
		{name: "IS NULL of a nullable non-key column", anti: false,
			query: "select l.name from l left join r on l.id = r.id where r.w is null"},
		{name: "null-safe key", anti: false,
			query: "select l.name from l left join r on l.id <=> r.id where r.id is null"},
		{name: "a non-equi conjunct rejecting the column's NULLs", anti: true,
			query: "select l.name from l left join r on l.id = r.id and r.w > l.lv where r.w is null",
			want:  []string{"Join anti on ((l.id = r.id) AND (r.w > l.lv))"}},
		{name: "IS NULL of an expression", anti: false,
			query: "select l.name from l left join r on l.id = r.id where (r.id + 1) is null"},
		{name: "IS NOT NULL is no anti join", anti: false,
			query: "select l.name from l left join r on l.id = r.id where r.id is not null"},
		{name: "IS NULL under OR", anti: false,
			query: "select l.name from l left join r on l.id = r.id where r.id is null or l.lv > 10"},
		{name: "right columns read above become NULLs", anti: true,
			query: "select l.name, r.rv, r.w from l left join r on l.id = r.id where r.id is null",
			want:  []string{"Project [name, NULL, NULL]"}},
		{name: "other conjuncts stay", anti: true,
			query: "select l.name from l left join r on l.id = r.id where r.id is null and l.lv > 5",
			want:  []string{"filters [(l.lv > 5)]"}},
		{name: "inside a comma join (q78)", anti: true,
			query: "select l.name, d.ds from l left join r on l.id = r.id, d where l.lv = d.dk and r.id is null"},
		{name: "a filter below the join keeps a non-key column free of NULLs", anti: true,
			query: "select l.name from l left join (select id, w from r where w > 0) r2 on l.id = r2.id where r2.w is null"},
		{name: "a filter below the join on another column", anti: false,
			query: "select l.name from l left join (select id, w, rv from r where w > 0) r2 on l.id = r2.id where r2.rv is null"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			plan := optimize(t, cat, c.query)
			if got := strings.Contains(plan, "Join anti"); got != c.anti {
				t.Errorf("anti join %v, want %v:\n%s", got, c.anti, plan)
			}
			if c.anti && strings.Contains(plan, "Join left") {
				t.Errorf("left join left in:\n%s", plan)
			}
			for _, w := range c.want {
				if !strings.Contains(plan, w) {
					t.Errorf("plan lacks %q:\n%s", w, plan)
				}
			}
		})
	}
}

// TestLeftJoinToAntiNotNull: a NOT NULL column of the right table (a
// Parquet column every file declares required) is NULL only in the rows
// the left join added, key or not; a nullable one is not.
func TestLeftJoinToAntiNotNull(t *testing.T) {
	dir := t.TempDir()
	type left struct {
		K int32 `parquet:"k,optional"`
	}
	type right struct {
		K   *int32 `parquet:"k,optional"`
		Req int32  `parquet:"req"`
		Opt *int32 `parquet:"opt,optional"`
	}
	writeParquet(t, filepath.Join(dir, "lt"), []left{{1}, {2}})
	one := int32(1)
	writeParquet(t, filepath.Join(dir, "rt"), []right{{K: &one, Req: 5}})
	cat, err := hive.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		query string
		anti  bool
	}{
		{"select lt.k from lt left join rt on lt.k = rt.k where rt.req is null", true},
		{"select lt.k from lt left join rt on lt.k <=> rt.k where rt.req is null", true},
		{"select lt.k from lt left join rt on lt.k = rt.k where rt.opt is null", false},
		// A left join's optional side is nullable even where its table's
		// column is not.
		{"select lt.k from lt left join (select rt.k, q.req from rt left join rt q on rt.req = q.opt) x on lt.k = x.k where x.req is null", false},
	} {
		plan := optimize(t, cat, c.query)
		if got := strings.Contains(plan, "Join anti"); got != c.anti {
			t.Errorf("%s: anti join %v, want %v:\n%s", c.query, got, c.anti, plan)
		}
	}
}

func writeParquet[T any](t *testing.T, dir string, rows []T) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := parquet.WriteFile(filepath.Join(dir, "part-0.parquet"), rows); err != nil {
		t.Fatal(err)
	}
}
