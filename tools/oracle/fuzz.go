package main

// The differential run: random queries over the TPC-DS schema
// (internal/querygen), each answered by fsql and by DuckDB and compared.
//
// The generator writes only constructs on which MySQL's semantics (fsql's)
// and DuckDB's agree, and renders DuckDB's text with the dialect's
// normalisations (see the querygen package doc). Every statement ends in
// one class: a match, a mismatch, an fsql error (declined: a construct
// fsql does not implement; limit: a Resources error, such as a window
// partition past a small memory budget's share; other: a plan or
// execution error, a defect candidate), a DuckDB error, or a timeout. A mismatch is re-run on fsql
// with each optimizer rule off in turn and with the physical planner's
// switches flipped, and the report says under which of those it goes
// away: that names the rule at fault, or clears the optimizer. Mismatches
// are written to --out, one file each, for triage; nothing here decides
// which engine is right.

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fsql-dev/fsql"
	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/internal/answers"
	"github.com/fsql-dev/fsql/internal/querygen"
	"github.com/fsql-dev/fsql/planner"
)

// tpcdsKeys are the TPC-DS primary keys of the fact tables; a dimension's
// key is its first column (its surrogate key).
var tpcdsKeys = map[string][]string{
	"store_sales":     {"ss_item_sk", "ss_ticket_number"},
	"catalog_sales":   {"cs_item_sk", "cs_order_number"},
	"web_sales":       {"ws_item_sk", "ws_order_number"},
	"store_returns":   {"sr_item_sk", "sr_ticket_number"},
	"catalog_returns": {"cr_item_sk", "cr_order_number"},
	"web_returns":     {"wr_item_sk", "wr_order_number"},
	"inventory":       {"inv_date_sk", "inv_item_sk", "inv_warehouse_sk"},
}

// tpcdsRefs maps the ending of a foreign-key column's name to the key it
// references: ss_sold_date_sk and c_first_sales_date_sk reference
// date_dim.d_date_sk, ss_cdemo_sk customer_demographics.cd_demo_sk. The
// longest ending wins.
var tpcdsRefs = map[string][2]string{
	"date_sk":        {"date_dim", "d_date_sk"},
	"time_sk":        {"time_dim", "t_time_sk"},
	"item_sk":        {"item", "i_item_sk"},
	"customer_sk":    {"customer", "c_customer_sk"},
	"cdemo_sk":       {"customer_demographics", "cd_demo_sk"},
	"hdemo_sk":       {"household_demographics", "hd_demo_sk"},
	"addr_sk":        {"customer_address", "ca_address_sk"},
	"store_sk":       {"store", "s_store_sk"},
	"promo_sk":       {"promotion", "p_promo_sk"},
	"warehouse_sk":   {"warehouse", "w_warehouse_sk"},
	"ship_mode_sk":   {"ship_mode", "sm_ship_mode_sk"},
	"call_center_sk": {"call_center", "cc_call_center_sk"},
	"page_sk":        {"catalog_page", "cp_catalog_page_sk"},
	"web_page_sk":    {"web_page", "wp_web_page_sk"},
	"site_sk":        {"web_site", "web_site_sk"},
	"reason_sk":      {"reason", "r_reason_sk"},
	"income_band_sk": {"income_band", "ib_income_band_sk"},
}

func fuzzMain(args []string) error {
	fs := flag.NewFlagSet("oracle fuzz", flag.ContinueOnError)
	data := fs.String("data", "", "TPC-DS data written by `fsql gen tpcds --partitioned=false`")
	duckData := fs.String("duckdb-data", "", "the same rows for DuckDB (and the schema's values) in another layout, such as the flat one beside a partitioned --data: DuckDB reads thousands of partition files slowly (default: --data)")
	n := fs.Int("n", 1000, "queries to run")
	skip := fs.Int("skip", 0, "queries generated and left unrun first, so --skip 703 --n 1 runs query 703 of its seed alone")
	seed := fs.Uint64("seed", 1, "generator seed: the same seed gives the same queries")
	out := fs.String("out", "", "folder for one report file per mismatch, fsql error and limit (default: none)")
	timeout := fs.Duration("timeout", 30*time.Second, "per-query limit for each engine")
	exclude := fs.String("exclude", "inventory,customer_demographics", "tables left out of the schema (the largest, which make every query slow)")
	set := fs.String("set", "", "fsql settings, comma-separated key=value")
	verbose := fs.Bool("v", false, "print every statement's class")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *data == "" {
		return errors.New("--data is required")
	}
	ctx := context.Background()
	if *duckData == "" {
		*duckData = *data
	}
	db, err := openDuckDB(ctx, *duckData)
	if err != nil {
		return err
	}
	defer db.Close()
	schema, err := tpcdsSchema(ctx, db, strings.Split(*exclude, ","))
	if err != nil {
		return err
	}
	if err := schema.Check(); err != nil {
		return err
	}
	eng, err := openFsql(*data, *set, "")
	if err != nil {
		return err
	}
	variants, err := fuzzVariants(*data, *set)
	if err != nil {
		return err
	}
	if *out != "" {
		if err := os.MkdirAll(*out, 0o755); err != nil {
			return err
		}
	}
	g := querygen.New(schema, querygen.NewRand(*seed), querygen.Options{BaseRows: 2_000_000})
	st := &fuzzStats{classes: map[string]int{}, messages: map[string]int{}, explained: map[string]int{}}
	for i := 0; i < *skip; i++ {
		g.Query()
	}
	start := time.Now()
	for i := *skip; i < *skip+*n; i++ {
		q := g.Query()
		class, report := fuzzOne(ctx, db, eng, variants, q, *timeout, st)
		st.classes[class]++
		if *verbose {
			fmt.Printf("%5d %-14s %s\n", i, class, firstLine(q.SQL(querygen.MySQL), 160))
		}
		if report != "" {
			fmt.Printf("%5d %s: %s\n", i, class, firstLine(report, 200))
			if *out != "" {
				name := filepath.Join(*out, fmt.Sprintf("seed%d-q%05d-%s.txt", *seed, i, class))
				if err := os.WriteFile(name, []byte(report), 0o644); err != nil {
					return err
				}
			}
		}
		if (i+1-*skip)%100 == 0 {
			fmt.Printf("-- %d queries in %s: %s\n", i+1-*skip, time.Since(start).Round(time.Second), st.summary())
		}
	}
	fmt.Printf("\n%d queries (seed %d) in %s\n%s\n", *n, *seed, time.Since(start).Round(time.Second), st.details())
	return nil
}

type fuzzStats struct {
	classes   map[string]int
	messages  map[string]int // fsql and DuckDB errors by message
	explained map[string]int // mismatches that go away under a variant
}

func (s *fuzzStats) summary() string {
	var parts []string
	for _, k := range sortedNames(s.classes) {
		parts = append(parts, fmt.Sprintf("%s %d", k, s.classes[k]))
	}
	return strings.Join(parts, ", ")
}

func (s *fuzzStats) details() string {
	var b strings.Builder
	b.WriteString("classes: " + s.summary() + "\n")
	if len(s.explained) > 0 {
		b.WriteString("mismatches that go away with:\n")
		for _, k := range sortedNames(s.explained) {
			fmt.Fprintf(&b, "  %4d  %s\n", s.explained[k], k)
		}
	}
	b.WriteString("errors:\n")
	keys := sortedNames(s.messages)
	sort.SliceStable(keys, func(i, j int) bool { return s.messages[keys[i]] > s.messages[keys[j]] })
	for _, k := range keys {
		fmt.Fprintf(&b, "  %4d  %s\n", s.messages[k], k)
	}
	return b.String()
}

func sortedNames(m map[string]int) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// variant is fsql with one optimizer rule off or one physical switch
// flipped.
type variant struct {
	name string
	eng  *fsql.Engine
}

func fuzzVariants(data, set string) ([]variant, error) {
	var out []variant
	for _, r := range planner.RuleNames() {
		if r == "order_joins" { // cannot be switched off: joins need it
			continue
		}
		eng, err := openFsql(data, set, "table.optimizer.disabled-rules="+r)
		if err != nil {
			return nil, err
		}
		out = append(out, variant{r + " off", eng})
	}
	for _, v := range []struct{ name, set string }{
		{"dynamic filtering off", "table.optimizer.dynamic-filtering.enabled=false"},
		{"no broadcast", "table.optimizer.join.broadcast-threshold=0"},
		{"adaptive off, 3 tasks", "execution.batch.adaptive.auto-parallelism.enabled=false,parallelism.default=3"},
	} {
		eng, err := openFsql(data, set, v.set)
		if err != nil {
			return nil, err
		}
		out = append(out, variant{v.name, eng})
	}
	return out, nil
}

func openFsql(data string, sets ...string) (*fsql.Engine, error) {
	cfg := fsql.DefaultConfig()
	if err := applySettings(&cfg, sets...); err != nil {
		return nil, err
	}
	return fsql.Open(data, cfg)
}

// fuzzOne runs one statement on both engines and returns its class, and a
// report for the classes worth triage.
func fuzzOne(ctx context.Context, db *sql.DB, eng *fsql.Engine, variants []variant, q querygen.Query, timeout time.Duration, st *fuzzStats) (string, string) {
	my, duck := q.SQL(querygen.MySQL), q.SQL(querygen.DuckDB)
	ordered, keys := q.Order()
	dctx, cancel := context.WithTimeout(ctx, timeout)
	want, derr := query(dctx, db, duck)
	cancel()
	got, ferr := fsqlAnswer(ctx, eng, my, timeout)
	texts := fmt.Sprintf("-- fsql (MySQL dialect)\n%s;\n\n-- DuckDB\n%s;\n", my, duck)
	switch {
	case ferr != nil && errors.Is(ferr, context.DeadlineExceeded):
		return "fsql-timeout", fmt.Sprintf("fsql took over %s (DuckDB: %v)\n\n%s", timeout, derr, texts)
	case derr != nil && errors.Is(derr, context.DeadlineExceeded):
		return "duckdb-timeout", ""
	case ferr != nil && declined(ferr):
		st.messages["fsql declined: "+firstLine(ferr.Error(), 100)]++
		return "fsql-declined", ""
	case ferr != nil && errs.KindOf(ferr) == errs.Resources:
		// Over a limit (a window partition larger than its share of a
		// small --set execution.memory.query-budget): said, not wrong.
		st.messages["fsql over a limit: "+firstLine(ferr.Error(), 100)]++
		return "fsql-limit", fmt.Sprintf("fsql over a limit: %v\n\n%s", ferr, texts)
	case derr != nil:
		st.messages["duckdb: "+firstLine(derr.Error(), 100)]++
		return "duckdb-error", ""
	case ferr != nil:
		st.messages["fsql: "+firstLine(ferr.Error(), 100)]++
		return "fsql-error", fmt.Sprintf("fsql failed: %v\n\n%s", ferr, texts)
	}
	want.Ordered, want.OrderKeys = ordered, keys
	err := answers.Compare(want, got)
	if err == nil {
		return "match", ""
	}
	if answers.Compare(roundFloats(want), roundFloats(got)) == nil {
		// STDDEV_SAMP and AVG as doubles: the engines add in different
		// orders (fsql merges partial states per task), so the last digits
		// differ; the comparator allows a relative 1e-9, this 1e-8.
		return "match-float", ""
	}
	var fixes []string
	for _, v := range variants {
		alt, verr := fsqlAnswer(ctx, v.eng, my, timeout)
		if verr == nil && answers.Compare(want, alt) == nil {
			fixes = append(fixes, v.name)
		}
	}
	if len(fixes) == 0 {
		st.explained["(no variant)"]++
	} else {
		st.explained[strings.Join(fixes, ", ")]++
	}
	with := "no variant"
	if len(fixes) > 0 {
		with = strings.Join(fixes, ", ")
	}
	return "mismatch", fmt.Sprintf("%v\n\nmatches DuckDB with: %s\n\n%s", err, with, texts)
}

// declined: fsql does not implement a construct (some binder errors wrap
// it as a plan error whose text still names it).
func declined(err error) bool {
	return errors.Is(err, exec.ErrNotImplemented) || strings.Contains(err.Error(), exec.ErrNotImplemented.Error())
}

func fsqlAnswer(ctx context.Context, eng *fsql.Engine, text string, timeout time.Duration) (*answers.Answer, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	rows, err := eng.Query(ctx, text)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var batches []arrow.RecordBatch
	defer func() {
		for _, b := range batches {
			b.Release()
		}
	}()
	for rows.Next() {
		b := rows.RecordBatch()
		b.Retain()
		batches = append(batches, b)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return answers.FromArrow(rows.Schema(), batches)
}

func firstLine(s string, n int) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > n {
		s = s[:n] + "..."
	}
	return s
}

// tpcdsSchema describes the views of db for the generator: columns and
// their types, up to 12 values of each (spread by hash, so not just the
// smallest), row counts, keys and foreign-key links.
func tpcdsSchema(ctx context.Context, db *sql.DB, exclude []string) (*querygen.Schema, error) {
	skip := map[string]bool{}
	for _, e := range exclude {
		skip[strings.TrimSpace(e)] = true
	}
	rows, err := db.QueryContext(ctx, `select table_name, column_name, data_type from information_schema.columns order by table_name, ordinal_position`)
	if err != nil {
		return nil, err
	}
	s := &querygen.Schema{}
	for rows.Next() {
		var tbl, col, typ string
		if err := rows.Scan(&tbl, &col, &typ); err != nil {
			rows.Close()
			return nil, err
		}
		if skip[tbl] {
			continue
		}
		t := s.Table(tbl)
		if t == nil {
			t = &querygen.Table{Name: tbl}
			s.Tables = append(s.Tables, t)
		}
		var qt querygen.Type
		switch {
		case typ == "INTEGER" || typ == "BIGINT" || typ == "SMALLINT" || typ == "TINYINT":
			qt = querygen.Int
		case strings.HasPrefix(typ, "DECIMAL"):
			qt = querygen.Decimal
		case typ == "VARCHAR":
			qt = querygen.String
		case typ == "DATE":
			qt = querygen.Date
		default:
			continue
		}
		t.Columns = append(t.Columns, querygen.Column{Name: col, Type: qt})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, t := range s.Tables {
		if err := db.QueryRowContext(ctx, "select count(*) from "+t.Name).Scan(&t.Rows); err != nil {
			return nil, err
		}
		t.Key = tpcdsKeys[t.Name]
		if t.Key == nil {
			t.Key = []string{t.Columns[0].Name}
		}
		for i := range t.Columns {
			c := &t.Columns[i]
			vals, err := db.QueryContext(ctx, fmt.Sprintf(
				"select cast(v as varchar) from (select distinct %s as v from %s where %s is not null) order by hash(v) limit 12", c.Name, t.Name, c.Name))
			if err != nil {
				return nil, err
			}
			for vals.Next() {
				var v string
				if err := vals.Scan(&v); err != nil {
					vals.Close()
					return nil, err
				}
				c.Values = append(c.Values, v)
			}
			vals.Close()
		}
	}
	for _, t := range s.Tables {
		for _, c := range t.Columns {
			best := ""
			for end := range tpcdsRefs {
				if strings.HasSuffix(c.Name, end) && len(end) > len(best) {
					best = end
				}
			}
			if best == "" {
				continue
			}
			ref := tpcdsRefs[best]
			if ref[0] == t.Name || s.Table(ref[0]) == nil {
				continue // its own key, or a table left out
			}
			s.Links = append(s.Links, querygen.Link{From: t.Name, FromCol: c.Name, To: ref[0], ToCol: ref[1]})
		}
	}
	return s, nil
}

// roundFloats returns a copy of a whose doubles keep 8 significant digits.
func roundFloats(a *answers.Answer) *answers.Answer {
	c := *a
	c.Rows = make([][]answers.Value, len(a.Rows))
	for i, r := range a.Rows {
		c.Rows[i] = append([]answers.Value(nil), r...)
		for j, col := range a.Columns {
			if col.Type == "float64" && !r[j].Null {
				v, _ := strconv.ParseFloat(strconv.FormatFloat(r[j].Float, 'g', 8, 64), 64)
				c.Rows[i][j] = answers.Float(v)
			}
		}
	}
	return &c
}
