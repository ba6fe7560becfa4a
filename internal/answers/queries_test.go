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

// TestGoldenAnswersRead checks every golden answer file reads back and has a
// query text.
func TestGoldenAnswersRead(t *testing.T) {
	files, err := filepath.Glob("../../testdata/tpcds/answers/q*.ans")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 103 {
		t.Fatalf("found %d answer files, want 103", len(files))
	}
	for _, f := range files {
		r, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		a, err := Read(r)
		r.Close()
		name := strings.TrimSuffix(filepath.Base(f), ".ans")
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if err := Compare(a, a); err != nil {
			t.Errorf("%s: differs from itself: %v", name, err)
		}
		if _, err := os.Stat("../../testdata/tpcds/queries/" + name + ".sql"); err != nil {
			t.Errorf("%s: no query text", name)
		}
	}
}
