package fsql_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fsql-dev/fsql"
	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/internal/answers"
	"github.com/fsql-dev/fsql/internal/querygen"
	"github.com/fsql-dev/fsql/internal/slt"
	"github.com/fsql-dev/fsql/planner"
)

var (
	metaDatasets = flag.Int("metamorphic-datasets", 0, "TestMetamorphic: datasets to generate, 60 queries each (default 12; more for a long search)")
	metaFirst    = flag.Int("metamorphic-seed", 1, "TestMetamorphic: seed of the first dataset")
)

// requiredRules are the optimizer rules that cannot be switched off, and
// why; every other rule of planner.RuleNames is switched off in turn by
// the optimizer-off checks.
var requiredRules = map[string]string{
	"order_joins": "it is what turns the binder's MultiJoin into joins; the physical planner has no other way to plan one (with it off, any join is an internal error)",
}

// configVariant is one way of running a query that must not change its
// answer: an optimizer rule switched off, or a physical choice forced.
type configVariant struct {
	name string
	set  []string // Config.Set pairs, key=value
}

// optimizerVariants lists every switchable rule off in turn, then the
// physical planner's switches: dynamic filtering off, and every join
// shuffled (broadcast threshold 0) over 3 tasks per stage.
func optimizerVariants() []configVariant {
	var out []configVariant
	for _, r := range planner.RuleNames() {
		if _, ok := requiredRules[r]; ok {
			continue
		}
		out = append(out, configVariant{r + " off", []string{"table.optimizer.disabled-rules=" + r}})
	}
	return append(out,
		configVariant{"dynamic filtering off", []string{"table.optimizer.dynamic-filtering.enabled=false"}},
		configVariant{"no broadcast, 3 tasks", []string{"table.optimizer.join.broadcast-threshold=0",
			"execution.batch.adaptive.auto-parallelism.enabled=false", "parallelism.default=3"}})
}

func openWith(t testing.TB, dir string, set ...string) *fsql.Engine {
	t.Helper()
	cfg := fsql.DefaultConfig()
	for _, kv := range set {
		k, v, _ := strings.Cut(kv, "=")
		if err := cfg.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	eng, err := fsql.Open(dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return eng
}

// runAnswer runs text and returns its rows in comparable form, ordered as
// the query says.
func runAnswer(eng *fsql.Engine, text string, ordered bool, keys []int) (*answers.Answer, error) {
	return runAnswerWithin(eng, text, ordered, keys, time.Minute)
}

func runAnswerWithin(eng *fsql.Engine, text string, ordered bool, keys []int, limit time.Duration) (*answers.Answer, error) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	rows, batches, err := collect(ctx, eng, text)
	if err != nil {
		return nil, err
	}
	defer releaseAll(batches)
	a, err := answers.FromArrow(rows.Schema(), batches)
	if err != nil {
		return nil, err
	}
	a.Ordered, a.OrderKeys = ordered, keys
	return a, nil
}

// skippable errors say the engine declined the statement (a construct it
// does not implement) or a value failed (an overflow a partition's sum
// can meet where the whole's did not): the check is skipped, counted,
// never passed. Anything else (an internal error, a plan error for text
// the generator meant to be valid) fails the test.
func skippable(err error) bool {
	return declined(err) || errors.Is(err, exec.ErrExecution)
}

// declined: the engine does not implement a construct of the statement.
// The binder reports some of those (a correlated subquery under OR) as
// plan errors whose text still names the sentinel, so the text counts too.
func declined(err error) bool {
	return errors.Is(err, exec.ErrNotImplemented) ||
		(errors.Is(err, exec.ErrPlan) && strings.Contains(err.Error(), exec.ErrNotImplemented.Error()))
}

// metaStats counts what a metamorphic run did, for the log.
type metaStats struct {
	queries, unsupported int
	checks               map[string]int // passed, by kind
	skipped              map[string]int // declined by the engine, by kind
	declined             map[string]int // unsupported constructs, by message
	known                map[string]int // failures a known defect explains
}

func newMetaStats() *metaStats {
	return &metaStats{checks: map[string]int{}, skipped: map[string]int{}, declined: map[string]int{}, known: map[string]int{}}
}

func (s *metaStats) decline(err error) {
	msg := err.Error()
	if i := strings.IndexAny(msg, "\n("); i > 0 {
		msg = msg[:i]
	}
	if len(msg) > 90 {
		msg = msg[:90]
	}
	s.declined[msg]++
}

func (s *metaStats) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d queries, %d declined by the engine; checks passed:", s.queries, s.unsupported)
	for _, k := range sortedKeys(s.checks) {
		fmt.Fprintf(&b, " %s %d", k, s.checks[k])
	}
	if len(s.skipped) > 0 {
		b.WriteString("; skipped (engine declined a variant):")
		for _, k := range sortedKeys(s.skipped) {
			fmt.Fprintf(&b, " %s %d", k, s.skipped[k])
		}
	}
	for _, k := range sortedKeys(s.known) {
		fmt.Fprintf(&b, "\n  known defect %dx: %s", s.known[k], k)
	}
	for _, k := range sortedKeys(s.declined) {
		fmt.Fprintf(&b, "\n  declined %dx: %s", s.declined[k], k)
	}
	return b.String()
}

func sortedKeys(m map[string]int) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// knownDefects are engine defects these tests found that are not fixed
// yet, each with its failing case in testdata/slt/pending (TestPendingSLT
// says when a fix makes the case pass). A failure one of them explains is
// counted and logged, not failed; its entry goes with the fix.
var knownDefects = []struct {
	name string
	// explains: the failure of statement text (a relation with err nil
	// whose sides agree once push_down_filters is off, or the error err).
	explains func(text string, err error, holdsWithoutPushdown bool) bool
}{}

// metaEnv is one small dataset written to Parquet, with an engine for the
// defaults, one with push_down_filters off (to tell known defects), and
// optionally one per optimizer variant.
type metaEnv struct {
	ds       *querygen.Dataset
	base     *fsql.Engine
	noPush   *fsql.Engine
	variants []*fsql.Engine
	names    []string
}

func newMetaEnv(t testing.TB, seed uint64, variants bool) *metaEnv {
	t.Helper()
	ds := querygen.Small(seed)
	if err := ds.Schema.Check(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := slt.WriteTables(dir, ds.Tables); err != nil {
		t.Fatal(err)
	}
	m := &metaEnv{ds: ds, base: openWith(t, dir), noPush: openWith(t, dir, "table.optimizer.disabled-rules=push_down_filters")}
	if variants {
		for _, v := range optimizerVariants() {
			m.variants = append(m.variants, openWith(t, dir, v.set...))
			m.names = append(m.names, v.name)
		}
	}
	return m
}

// known returns the known defect that explains a failure, or "".
func (m *metaEnv) known(a, b string, err error) string {
	holds := false
	if err == nil {
		x, errA := runAnswer(m.noPush, a, false, nil)
		y, errB := runAnswer(m.noPush, b, false, nil)
		holds = errA == nil && errB == nil && answers.Compare(x, y) == nil
	}
	for _, d := range knownDefects {
		if d.explains(a+" "+b, err, holds) {
			return d.name
		}
	}
	return ""
}

// failure describes a broken relation as a ready-to-paste .slt case: the
// tables, then both statements, and for triage the optimizer variants
// under which the relation holds.
func (m *metaEnv) failure(kind, a, b string, err error) string {
	var holds []string
	for i, eng := range m.variants {
		x, errA := runAnswer(eng, a, false, nil)
		y, errB := runAnswer(eng, b, false, nil)
		if errA == nil && errB == nil && answers.Compare(x, y) == nil {
			holds = append(holds, m.names[i])
		}
	}
	return fmt.Sprintf("%s does not hold: %v\n(holds with: %s)\n---- tables (.slt)\n%s---- statement\n%s\n---- must equal\n%s\n",
		kind, err, strings.Join(holds, ", "), m.ds.SLT(), a, b)
}

// checkQuery runs one generated query and every relation that applies to
// it; a broken relation is reported through fail, unless a known defect
// explains it. With variants, the query also runs with each optimizer
// variant, which must give the defaults' answer.
func (m *metaEnv) checkQuery(g *querygen.Gen, q querygen.Query, st *metaStats, fail func(string)) {
	st.queries++
	text := q.SQL(querygen.MySQL)
	ordered, keys := q.Order()
	broken := func(kind, a, b string, err, cmpErr error) {
		if d := m.known(a, b, err); d != "" {
			st.known[d]++
			return
		}
		if cmpErr != nil {
			err = cmpErr
		}
		fail(m.failure(kind, a, b, err))
	}
	want, err := runAnswer(m.base, text, ordered, keys)
	if err != nil {
		if skippable(err) {
			st.unsupported++
			st.decline(err)
			return
		}
		if d := m.known(text, "", err); d != "" {
			st.known[d]++
			return
		}
		fail(fmt.Sprintf("the generated statement failed: %v\n---- tables (.slt)\n%s---- statement\n%s\n", err, m.ds.SLT(), text))
		return
	}
	pair := func(c querygen.Check) {
		a, err := runAnswer(m.base, c.A, false, nil)
		if err == nil {
			var b *answers.Answer
			if b, err = runAnswer(m.base, c.B, false, nil); err == nil {
				if cmpErr := answers.Compare(a, b); cmpErr != nil {
					broken(c.Kind, c.A, c.B, nil, cmpErr)
					return
				}
				st.checks[c.Kind]++
				return
			}
		}
		if skippable(err) {
			st.skipped[c.Kind]++
			return
		}
		broken(c.Kind, c.A, c.B, err, nil)
	}
	if sel, ok := q.(*querygen.Select); ok {
		if c, ok := g.TLP(sel); ok {
			pair(c)
		}
		pair(g.NoREC(sel))
	}
	for i, eng := range m.variants {
		got, err := runAnswer(eng, text, ordered, keys)
		switch {
		case err != nil && declined(err):
			st.skipped[m.names[i]]++
		case err != nil:
			fail(fmt.Sprintf("%s: %v\n---- tables (.slt)\n%s---- statement\n%s\n", m.names[i], err, m.ds.SLT(), text))
		default:
			if cmpErr := answers.Compare(want, got); cmpErr != nil {
				// The defaults against the variant: a known defect
				// explains it when the variant agrees with pushdown off.
				if alt, err := runAnswer(m.noPush, text, ordered, keys); err == nil && answers.Compare(alt, got) == nil {
					if d := m.known(text, text, nil); d != "" {
						st.known[d]++
						continue
					}
				}
				fail(fmt.Sprintf("%s changes the answer: %v\n---- tables (.slt)\n%s---- statement\n%s\n", m.names[i], cmpErr, m.ds.SLT(), text))
				continue
			}
			st.checks[m.names[i]]++
		}
	}
}

// TestMetamorphic runs generated queries over small random tables and
// checks, with no second engine: ternary logic partitioning (4 forms),
// NoREC, and every optimizer variant against the defaults. A failure
// prints the tables and statements as an .slt case.
func TestMetamorphic(t *testing.T) {
	datasets, perSet := 12, 60
	if testing.Short() {
		datasets, perSet = 3, 30
	}
	first := uint64(*metaFirst)
	if *metaDatasets > 0 {
		datasets = *metaDatasets
	}
	st := newMetaStats()
	for seed := first; seed < first+uint64(datasets); seed++ {
		m := newMetaEnv(t, seed, true)
		g := querygen.New(m.ds.Schema, querygen.NewRand(seed), querygen.Options{Limit: 20})
		failures := 0
		for i := 0; i < perSet && failures < 3; i++ {
			m.checkQuery(g, g.Query(), st, func(msg string) {
				failures++
				t.Errorf("dataset %d, query %d: %s", seed, i, msg)
			})
		}
	}
	t.Log(st)
	// A generator the engine mostly declines would test nothing.
	if st.unsupported*4 > st.queries {
		t.Errorf("the engine declined %d of %d generated queries", st.unsupported, st.queries)
	}
}
