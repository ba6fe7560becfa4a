package fsql_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/fsql-dev/fsql"
	"github.com/fsql-dev/fsql/internal/format"
	"github.com/fsql-dev/fsql/internal/slt"
)

// sltSet applies extra settings to every file's engine, such as
// -slt-set=execution.batch-shuffle-mode=ALL_EXCHANGES_HYBRID_FULL,taskmanager.numberOfTaskSlots=8
// (answers must not change; set.slt lists the settings and differs).
var sltSet = flag.String("slt-set", "", "comma-separated key=value settings applied to every .slt file's engine (set.slt, which lists settings, then differs)")

var rewrite = flag.Bool("rewrite", false, "rewrite the expected results of testdata/slt/*.slt with what the engine returns (read the diff before committing)")

// TestSQLLogic runs every testdata/slt/*.slt file (format: internal/slt)
// as a subtest, each over its own data directory of real Parquet files.
func TestSQLLogic(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "slt", "*.slt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no testdata/slt/*.slt files")
	}
	for _, path := range files {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".slt"), func(t *testing.T) {
			t.Parallel()
			runSLTFile(t, path)
		})
	}
}

func runSLTFile(t *testing.T, path string) {
	f, err := slt.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := slt.WriteTables(dir, f.Tables()); err != nil {
		t.Fatal(err)
	}
	cfg := fsql.DefaultConfig()
	// Several tasks per stage even on a small machine, so exchanges and
	// partial aggregates are exercised by every file.
	if err := cfg.Set("parallelism.default", "3"); err != nil {
		t.Fatal(err)
	}
	if *sltSet != "" {
		for _, kv := range strings.Split(*sltSet, ",") {
			k, v, _ := strings.Cut(kv, "=")
			if err := cfg.Set(k, v); err != nil {
				t.Fatal(err)
			}
		}
	}
	eng, err := fsql.Open(dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Every Arrow buffer a query allocates must be released by the time
	// its rows are closed, errors and early stops included.
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	eng = eng.WithAllocator(mem)
	// One session per file, as fsql -f runs a script: SET lasts until the
	// end of the file.
	sess := eng.Session()
	results := map[*slt.Record]slt.Result{}
	for _, r := range f.Records {
		where := fmt.Sprintf("%s:%d", path, r.Line)
		switch r.Kind {
		case slt.KindQuery:
			types, lines, err := query(sess, r.SQL)
			if err != nil {
				t.Errorf("%s: %v\n%s", where, err, r.SQL)
				continue
			}
			if r.RowSort {
				slices.Sort(lines)
			}
			if *rewrite {
				results[r] = slt.Result{Types: types, Lines: lines}
				continue
			}
			if types != r.Types {
				t.Errorf("%s: column types %s, want %s\n%s", where, types, r.Types, r.SQL)
			}
			if !slices.Equal(lines, r.Expect) {
				t.Errorf("%s: wrong result\n%s\n---- got\n%s\n---- want\n%s", where, r.SQL, strings.Join(lines, "\n"), strings.Join(r.Expect, "\n"))
			}
		case slt.KindStatementOK:
			if _, _, err := query(sess, r.SQL); err != nil {
				t.Errorf("%s: %v\n%s", where, err, r.SQL)
			}
		case slt.KindStatementError:
			_, _, err := query(sess, r.SQL)
			switch {
			case err == nil:
				t.Errorf("%s: statement succeeded, want an error containing %q\n%s", where, r.Error, r.SQL)
			case !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(r.Error)):
				t.Errorf("%s: error %q does not contain %q\n%s", where, err, r.Error, r.SQL)
			}
		}
	}
	if *rewrite {
		if err := os.WriteFile(path, f.Rewrite(results), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// query runs one statement and renders its result as the table format
// would: one line per row, values separated by tabs, the empty string as
// (empty). It also returns one type letter per column.
func query(db querier, sql string) (string, []string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rows, err := db.Query(ctx, sql)
	if err != nil {
		return "", nil, err
	}
	defer rows.Close()
	var types strings.Builder
	for _, f := range rows.Schema().Fields() {
		types.WriteByte(typeLetter(f.Type))
	}
	var lines []string
	for rows.Next() {
		for _, row := range format.Rows(rows.RecordBatch()) {
			for i, v := range row {
				if v == "" {
					row[i] = "(empty)"
				}
			}
			lines = append(lines, strings.Join(row, "\t"))
		}
	}
	if err := rows.Err(); err != nil {
		return "", nil, err
	}
	return types.String(), lines, nil
}

// typeLetter maps an Arrow type to its sqllogictest letter; ? marks a
// type no letter covers, which no expectation can match.
func typeLetter(t arrow.DataType) byte {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return 'I'
	case arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64, arrow.DECIMAL32, arrow.DECIMAL64, arrow.DECIMAL128, arrow.DECIMAL256:
		return 'R'
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW, arrow.NULL:
		// The NULL type (SELECT NULL) prints as text, as MySQL's client
		// shows such a column.
		return 'T'
	case arrow.DATE32, arrow.DATE64, arrow.TIMESTAMP, arrow.TIME64:
		// DATE, DATETIME, TIMESTAMP and TIME.
		return 'D'
	case arrow.BOOL:
		return 'B'
	case arrow.EXTENSION:
		// A string with an explicit COLLATE is a string.
		if ext, ok := t.(arrow.ExtensionType); ok {
			return typeLetter(ext.StorageType())
		}
	}
	return '?'
}
