package answers

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	_ "github.com/pingcap/tidb/pkg/parser/test_driver"
)

// TestTPCDSQueriesParse checks that every fsql query text parses with the
// SQL modes fsql uses, so a typo in a translation fails here rather than in a
// long end-to-end run.
func TestTPCDSQueriesParse(t *testing.T) {
	files, err := filepath.Glob("../../testdata/tpcds/queries/q*.sql")
	if err != nil {
		t.Fatal(err)
	}
	// 99 queries, four of which are split into two statements.
	if len(files) != 103 {
		t.Fatalf("found %d query files, want 103", len(files))
	}
	sort.Strings(files)
	p := parser.New()
	p.SetSQLMode(mysql.ModePipesAsConcat | mysql.ModeIgnoreSpace)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		stmts, _, err := p.Parse(string(b), "", "")
		name := strings.TrimSuffix(filepath.Base(f), ".sql")
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if len(stmts) != 1 {
			t.Errorf("%s: %d statements, want 1", name, len(stmts))
		}
	}
}
