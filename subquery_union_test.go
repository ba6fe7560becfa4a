package fsql_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/fsql-dev/fsql"
	"github.com/fsql-dev/fsql/internal/slt"
)

// TestInUnionArmsNotCrossed: x IN (a correlated SELECT UNION an
// uncorrelated one) is the OR of each arm's IN, so the uncorrelated arm is
// joined on its own rather than crossed with every value of the
// correlated columns (at TPC-DS scale 0.2, 7,201 ss_hdemo_sk values by
// time_dim's 86,400 rows ran past 90 s; DuckDB answered at once). The
// answer is the one of the query written with the OR.
func TestInUnionArmsNotCrossed(t *testing.T) {
	dir := t.TempDir()
	h := &slt.Table{Name: "h", Columns: []slt.Column{{Name: "k", Type: slt.Int}, {Name: "x", Type: slt.Int}}}
	s := &slt.Table{Name: "s", Columns: []slt.Column{{Name: "m", Type: slt.Int}, {Name: "v", Type: slt.Int}}}
	d := &slt.Table{Name: "d", Columns: []slt.Column{{Name: "v", Type: slt.Int}}}
	for i := 0; i < 300; i++ {
		k := strconv.Itoa(i % 40)
		if i%11 == 0 {
			k = "NULL"
		}
		h.Rows = append(h.Rows, []string{k, strconv.Itoa(i % 97)})
		s.Rows = append(s.Rows, []string{strconv.Itoa(i % 50), strconv.Itoa(i % 13)})
		d.Rows = append(d.Rows, []string{strconv.Itoa(50 + i%30)})
	}
	if err := slt.WriteTables(dir, []*slt.Table{h, s, d}); err != nil {
		t.Fatal(err)
	}
	eng, err := fsql.Open(dir, fsql.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ union, or string }{
		{
			"select count(*) from h where h.x in (select s.v from s where s.m <=> h.k union select d.v from d)",
			"select count(*) from h where h.x in (select s.v from s where s.m <=> h.k) or h.x in (select d.v from d)",
		},
		{
			"select count(*) from h where h.x not in (select s.v from s where s.m <=> h.k union all select d.v from d)",
			"select count(*) from h where not (h.x in (select s.v from s where s.m <=> h.k) or h.x in (select d.v from d))",
		},
		{
			"select count(*) from h where exists (select 1 from s where s.m <=> h.k and s.v > h.x union select 1 from d where d.v > 78)",
			"select count(*) from h where exists (select 1 from s where s.m <=> h.k and s.v > h.x) or exists (select 1 from d where d.v > 78)",
		},
	} {
		if plan := explain(t, eng, c.union); strings.Contains(plan, "inner, cross") {
			t.Errorf("%s: the uncorrelated arm is crossed with the domain (a one-row left cross of its EXISTS count is fine):\n%s", c.union, plan)
		}
		got, want := rowsText(t, eng, c.union), rowsText(t, eng, c.or)
		if len(got) != 1 || len(want) != 1 || got[0] != want[0] || want[0] == "0" {
			t.Errorf("%s = %v, want %v (as with OR, and not 0)", c.union, got, want)
		}
	}
}
