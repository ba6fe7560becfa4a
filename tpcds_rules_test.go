package fsql_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsql-dev/fsql/connectors/hive"
	"github.com/fsql-dev/fsql/connectors/tpcds"
	"github.com/fsql-dev/fsql/internal/answers"
	"github.com/fsql-dev/fsql/planner"
	"github.com/fsql-dev/fsql/sql"
)

// rulesScale is the scale of the optimizer-off run: every statement runs
// once per variant, so the data is small (about 12 s per pass over the
// 103 statements on 2 cores, against 55 s at the golden scale); 87 of the
// 103 still return rows.
const rulesScale = 0.03

var (
	rulesOnce sync.Once
	rulesDir  string
	rulesErr  error
)

func tpcdsSmall(t testing.TB) string {
	t.Helper()
	rulesOnce.Do(func() {
		cache, err := os.UserCacheDir()
		if err != nil {
			cache = os.TempDir()
		}
		rulesDir = filepath.Join(cache, "fsql", tpcds.CacheFolder(fmt.Sprintf("tpcds-sf%g-seed%d-flat", rulesScale, goldenSeed)))
		if _, err := os.Stat(rulesDir); err == nil {
			return
		}
		rulesErr = tpcds.Generate(context.Background(), tpcds.Options{
			Scale: rulesScale, Out: rulesDir, Partitioned: false, RowGroupRows: 122880, Seed: goldenSeed,
		})
	})
	if rulesErr != nil {
		t.Fatalf("generating TPC-DS data: %v", rulesErr)
	}
	return rulesDir
}

// crossLimit: a plan whose cross product would exceed this many rows is
// not run (with push_down_filters off, comma joins keep their conditions
// in a filter above a cross product: store_sales x date_dim alone is
// billions of rows).
const crossLimit = 5e6

// rulesTimeout bounds one statement with a rule off: without the rule a
// plan may be feasible but far slower (q72 without push_down_filters
// joins catalog_sales with all of inventory before filtering).
const rulesTimeout = 15 * time.Second

// infeasible reports why text cannot run in reasonable time with the
// rules in disabled off, or "" when it can.
func infeasible(cat *hive.Catalog, text string, disabled map[string]bool) (string, error) {
	stmts, err := sql.Parse(text)
	if err != nil {
		return "", err
	}
	st, err := sql.NewBinder(cat).Bind(stmts[0])
	if err != nil {
		return "", err
	}
	p, err := planner.Optimize(st.Plan, &planner.Context{Disabled: disabled})
	if err != nil {
		return "", err
	}
	why := ""
	var walk func(planner.Plan)
	walk = func(p planner.Plan) {
		if j, ok := p.(*planner.Join); ok && j.Cond == nil && why == "" {
			if planner.Estimate(j.Left).Rows*planner.Estimate(j.Right).Rows > crossLimit {
				why = "a cross product of more than 5e6 rows"
			}
		}
		for _, c := range p.Children() {
			walk(c)
		}
	}
	walk(p)
	return why, nil
}

// TestTPCDSOptimizerOff runs every TPC-DS statement with each optimizer
// rule that can be switched off switched off in turn, and with the
// physical planner's switches flipped (DuckDB's verification mode does
// the like): each must return the defaults' answer. A statement the
// engine declines with a rule off, or that becomes a cross product too
// big to run, is skipped and counted, never passed. The rules that cannot
// be switched off are in requiredRules. prune_partitions is not switched
// off here: the data is flat (no partitions); TestMetamorphic switches it
// off over partitioned tables.
func TestTPCDSOptimizerOff(t *testing.T) {
	if testing.Short() {
		t.Skip("generates TPC-DS data and runs every statement several times")
	}
	dir := tpcdsSmall(t)
	cat, err := hive.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join("testdata", "tpcds", "queries", "q*.sql"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	base := openWith(t, dir)
	type stmt struct {
		name, text string
		ordered    bool
		keys       []int
		want       *answers.Answer
	}
	var stmts []stmt
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(filepath.Base(f), ".sql")
		golden := readAnswerMaybeEmpty(t, name) // for the ORDER BY keys
		s := stmt{name: name, text: strings.TrimSpace(string(b)), ordered: golden.Ordered, keys: golden.OrderKeys}
		if s.want, err = runAnswer(base, s.text, s.ordered, s.keys); err != nil {
			t.Fatalf("%s with the defaults: %v", name, err)
		}
		stmts = append(stmts, s)
	}
	for _, v := range optimizerVariants() {
		if v.name == "prune_partitions off" {
			continue
		}
		t.Run(v.name, func(t *testing.T) {
			eng := openWith(t, dir, v.set...)
			disabled := map[string]bool{}
			for _, kv := range v.set {
				if r, ok := strings.CutPrefix(kv, "table.optimizer.disabled-rules="); ok {
					disabled[r] = true
				}
			}
			passed, skipped := 0, map[string][]string{}
			timeout := time.Minute
			if len(disabled) > 0 {
				timeout = rulesTimeout
			}
			for _, s := range stmts {
				if len(disabled) > 0 {
					why, err := infeasible(cat, s.text, disabled)
					if err != nil && !declined(err) {
						t.Errorf("%s: %v", s.name, err)
						continue
					}
					if err != nil || why != "" {
						if err != nil {
							why = "declined"
						}
						skipped[why] = append(skipped[why], s.name)
						continue
					}
				}
				got, err := runAnswerWithin(eng, s.text, s.ordered, s.keys, timeout)
				switch {
				case err != nil && declined(err):
					skipped["declined"] = append(skipped["declined"], s.name)
				case err != nil && len(disabled) > 0 && errors.Is(err, context.DeadlineExceeded):
					skipped["over "+timeout.String()] = append(skipped["over "+timeout.String()], s.name)
				case err != nil:
					t.Errorf("%s: %v", s.name, err)
				default:
					if err := answers.Compare(s.want, got); err != nil {
						t.Errorf("%s differs from the defaults' answer: %v", s.name, err)
						continue
					}
					passed++
				}
			}
			line := fmt.Sprintf("%s: %d of %d statements give the defaults' answer", v.name, passed, len(stmts))
			for _, why := range slices.Sorted(maps.Keys(skipped)) {
				qs := skipped[why]
				line += fmt.Sprintf("; %d skipped (%s: %s)", len(qs), why, strings.Join(qs, " "))
			}
			t.Log(line)
		})
	}
	for r, why := range requiredRules {
		t.Logf("%s cannot be switched off: %s", r, why)
	}
}
