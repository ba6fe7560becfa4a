package fsql_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/fsql-dev/fsql/internal/slt"
)

// TestPendingSLT runs testdata/slt/pending/*.slt, the cases of defects
// found but not fixed yet (see its README). Each file must still fail
// somewhere; one that passes whole has been fixed, and belongs with the
// other .slt files, where TestSQLLogic keeps it passing.
func TestPendingSLT(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "slt", "pending", "*.slt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			f, err := slt.ParseFile(path)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if err := slt.WriteTables(dir, f.Tables()); err != nil {
				t.Fatal(err)
			}
			eng := openWith(t, dir)
			failing := 0
			for _, r := range f.Records {
				switch r.Kind {
				case slt.KindQuery:
					types, lines, err := query(eng, r.SQL)
					if r.RowSort {
						slices.Sort(lines)
					}
					if err != nil || types != r.Types || !slices.Equal(lines, r.Expect) {
						failing++
					}
				case slt.KindStatementOK, slt.KindStatementError:
					t.Fatalf("%s:%d: pending files hold queries only", path, r.Line)
				}
			}
			if failing == 0 {
				t.Errorf("every case of %s passes: the defect is fixed; move the file to testdata/slt/ and drop its knownDefects entry", path)
			}
		})
	}
}
