package fsql_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/fsql-dev/fsql"
	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/internal/slt"
)

// TestDisabledRules: table.optimizer.disabled-rules reaches the optimizer
// (with push_down_filters off the scan gets no filter), and a
// misspelt rule fails Set and Open instead of disabling nothing.
func TestDisabledRules(t *testing.T) {
	dir := t.TempDir()
	tbl := &slt.Table{Name: "t", Columns: []slt.Column{{Name: "a", Type: slt.Int}}, Rows: [][]string{{"1"}, {"2"}}}
	if err := slt.WriteTables(dir, []*slt.Table{tbl}); err != nil {
		t.Fatal(err)
	}
	plan := func(eng *fsql.Engine) string {
		rows, err := eng.Query(context.Background(), "explain select a from t where a > 1")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var b strings.Builder
		for rows.Next() {
			b.WriteString(rows.RecordBatch().Column(0).String())
		}
		return b.String()
	}
	open := func(rules string) *fsql.Engine {
		cfg := fsql.DefaultConfig()
		if err := cfg.Set("table.optimizer.disabled-rules", rules); err != nil {
			t.Fatal(err)
		}
		eng, err := fsql.Open(dir, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return eng
	}
	on, off := plan(open("")), plan(open("push_down_filters"))
	if !strings.Contains(on, "Scan(t [a] row-group-filter") {
		t.Errorf("with the defaults the filter should reach the scan:\n%s", on)
	}
	if !strings.Contains(off, "Filter(") || strings.Contains(off, "row-group-filter") {
		t.Errorf("with push_down_filters off the filter should stay above the scan:\n%s", off)
	}
	cfg := fsql.DefaultConfig()
	err := cfg.Set("table.optimizer.disabled-rules", "fold_constants, push_down_filter")
	if err == nil || !strings.Contains(err.Error(), `unknown rule "push_down_filter"`) {
		t.Errorf("setting a misspelt rule: got %v", err)
	}
	cfg.DisabledRules = "fold_constants,push_down_filter"
	_, err = fsql.Open(dir, cfg)
	if !errors.Is(err, exec.ErrPlan) || !strings.Contains(err.Error(), `unknown rule "push_down_filter"`) {
		t.Errorf("opening with a misspelt rule: got %v", err)
	}
}
